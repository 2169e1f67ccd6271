/**
 * Frequency-cap, opt-out and ledger guards: a role may only read items of a named table (GetItem, BatchGetItem: the
 * sender's opt-out look-up and campaign state) and update them (the cap's counts, the endpoint's opt-outs, the
 * outcomes), never enumerate or administer one; it may put or delete only items of the occurrence ledger, named by
 * their key (the sender's claim of an occurrence, the journeys' claims: a `dynamodb:LeadingKeys` condition), never an
 * opt-out; the tables that hold every address's send counts and the campaigns' states are encrypted and recoverable.
 */
import { PolicyResource, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { allowedActions, describeStatement, permissionDocuments, Statement, wildcardMatch } from "./iam-document";
import { campaignStateKey, enrolmentKey, occurrenceKey } from "../infra/core/send/ledger";
import { STATE_MACHINE, TABLE } from "./resource-types";

/** DynamoDB actions a role could use on a table, data and control plane. */
const DYNAMODB_ACTIONS = [
  "dynamodb:GetItem",
  "dynamodb:UpdateItem",
  "dynamodb:PutItem",
  "dynamodb:DeleteItem",
  "dynamodb:BatchGetItem",
  "dynamodb:BatchWriteItem",
  "dynamodb:Query",
  "dynamodb:Scan",
  "dynamodb:PartiQLSelect",
  "dynamodb:PartiQLUpdate",
  "dynamodb:PartiQLInsert",
  "dynamodb:PartiQLDelete",
  "dynamodb:CreateTable",
  "dynamodb:UpdateTable",
  "dynamodb:DeleteTable",
  "dynamodb:RestoreTableToPointInTime",
  "dynamodb:ExportTableToPointInTime",
  "dynamodb:UpdateTimeToLive",
] as const;
/** Read by key, one or a batch, and update: what the sender and the unsubscribe endpoint call. */
const GATE_ACTIONS = ["dynamodb:UpdateItem", "dynamodb:GetItem", "dynamodb:BatchGetItem"];
/** Put or delete a whole item: only a ledger item, by key (see ledgerItemsOnly). */
const KEYED_WRITE_ACTIONS = ["dynamodb:PutItem", "dynamodb:DeleteItem"];
/** The ledger's kinds of item by key prefix (`occ#`, `campaign#`, `enr#`), from its own key builders. */
const LEDGER_KEY_PREFIXES = [occurrenceKey("", ""), campaignStateKey(""), enrolmentKey("", "", "")].map((k) =>
  k.slice(0, k.indexOf("#") + 1),
);
/** One named table: no wildcard in its name, no index or stream under it. */
const TABLE_ARN = /^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/[A-Za-z0-9_.-]+$/;

export const sendGateTableScoped: ResourceValidationPolicy = {
  name: "send-gate-table-scoped",
  description:
    "DynamoDB grants (the sender's, the journeys' and the unsubscribe endpoint's) are UpdateItem, GetItem and BatchGetItem on one named table; PutItem and DeleteItem only of ledger items, by key (dynamodb:LeadingKeys); nothing else.",
  enforcementLevel: "mandatory",
  validateResource: (args, reportViolation) => {
    for (const doc of permissionDocuments(args.type, args.name, args.props)) {
      doc.statements.forEach((s, i) => {
        const allowed = allowedActions(s, DYNAMODB_ACTIONS);
        if (!allowed.length) return;
        const label = `${doc.where} ${describeStatement(s, i)}`;
        const report = (message: string) => reportViolation(message + (doc.hint ?? ""));
        const fix =
          'allow only "dynamodb:UpdateItem", "dynamodb:GetItem" and "dynamodb:BatchGetItem" on the table\'s ARN (arn:aws:dynamodb:<region>:<account>:table/<name>)' +
          `, and "dynamodb:PutItem", "dynamodb:DeleteItem" only on ledger items (ForAllValues:StringLike on dynamodb:LeadingKeys, each starting ${LEDGER_KEY_PREFIXES.join(", ")})`;
        if (s.notActions || s.notResources)
          return report(`${label} uses NotAction or NotResource with DynamoDB: ${fix}`);
        const keyed = ledgerItemsOnly(s);
        const extra = allowed.filter((a) => !GATE_ACTIONS.includes(a) && !(keyed && KEYED_WRITE_ACTIONS.includes(a)));
        if (extra.length) return report(`${label} allows ${extra.join(", ")}: ${fix}`);
        const outside = (s.resources ?? []).filter((r) => !TABLE_ARN.test(r));
        if (outside.length || !s.resources?.length)
          report(
            `${label} allows ${allowed.join(", ")} on ${outside.length ? outside.map((r) => `"${r}"`).join(", ") : "no resource"}: ${fix}`,
          );
      });
    }
  },
};

/**
 * Whether `s` holds only for ledger items: every partition key a request names (dynamodb:LeadingKeys; PutItem and
 * DeleteItem always name one) matches a value that starts with a ledger prefix, never an address of the opt-outs.
 */
function ledgerItemsOnly(s: Statement): boolean {
  return ["ForAllValues:StringLike", "ForAllValues:StringEquals"].some((operator) => {
    const keys = Object.entries(s.condition?.[operator] ?? {}).find(
      ([k]) => k.toLowerCase() === "dynamodb:leadingkeys",
    );
    const values = keys === undefined ? [] : ([] as unknown[]).concat(keys[1]);
    return (
      values.length > 0 &&
      values.every((v) => typeof v === "string" && LEDGER_KEY_PREFIXES.some((prefix) => v.startsWith(prefix)))
    );
  });
}

export const sendGateTableProtected: ResourceValidationPolicy = {
  name: "send-gate-table-protected",
  description:
    "DynamoDB tables (the cap's holds every address's send counts, the ledger every campaign's state) use KMS encryption and point-in-time recovery.",
  enforcementLevel: "mandatory",
  validateResource: (args, report) => {
    if (args.type !== TABLE) return;
    const label = `Table "${args.name}"`;
    if (args.props.serverSideEncryption?.enabled !== true)
      report(
        `${label} is not encrypted with KMS: set serverSideEncryption {enabled: true} (optionally with kmsKeyArn)`,
      );
    if (args.props.pointInTimeRecovery?.enabled !== true)
      report(`${label} has no point-in-time recovery: set pointInTimeRecovery {enabled: true}`);
  },
};

/** Every DynamoDB action that writes an item: what may change an outcome or a campaign's state in the ledger. */
const LEDGER_WRITE_ACTIONS = [
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:BatchWriteItem",
  "dynamodb:PartiQLUpdate",
  "dynamodb:PartiQLInsert",
  "dynamodb:PartiQLDelete",
];

/**
 * The occurrence ledgers of the stack: the tables the one sender claims occurrences in (its definition's Claim
 * state names the table), by ARN. Found from what the sender does, not from a resource's name.
 */
function ledgerArns(resources: PolicyResource[]): string[] {
  const names = new Set<string>();
  for (const r of resources) {
    if (r.type !== STATE_MACHINE || typeof r.props.definition !== "string") continue;
    try {
      const table = JSON.parse(r.props.definition)?.States?.Claim?.Arguments?.TableName;
      if (typeof table === "string") names.add(table);
    } catch {
      // Not JSON: the fan-out's checks report a definition they cannot read.
    }
  }
  return resources
    .filter((r) => r.type === TABLE && names.has(r.props.name) && typeof r.props.arn === "string")
    .map((r) => r.props.arn as string);
}

export const ledgerWritesKeyed: StackValidationPolicy = {
  name: "ledger-writes-keyed",
  description:
    "A grant that writes items of the occurrence ledger (the table the one sender claims occurrences in) is keyed to the items its code writes: a ForAllValues condition on dynamodb:LeadingKeys, each value starting occ#, campaign# or enr#. Unkeyed, a role could rewrite a sent outcome (redrive would send it again) or set a cancelled campaign live.",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    const ledgers = ledgerArns(args.resources);
    if (!ledgers.length) return;
    for (const r of args.resources)
      for (const doc of permissionDocuments(r.type, r.name, r.props))
        doc.statements.forEach((s, i) => {
          const writes = allowedActions(s, LEDGER_WRITE_ACTIONS);
          const onLedger = (s.resources ?? []).some((res) => ledgers.some((arn) => wildcardMatch(res, arn)));
          if (!writes.length || !(onLedger || s.notResources) || ledgerItemsOnly(s)) return;
          report(
            `${doc.where} ${describeStatement(s, i)} allows ${writes.join(", ")} on the occurrence ledger without keying it to items: add a ForAllValues:StringLike condition on dynamodb:LeadingKeys with the prefixes its code writes (${LEDGER_KEY_PREFIXES.map((p) => `${p}*`).join(", ")})${doc.hint ?? ""}`,
            r.urn,
          );
        });
  },
};
