/**
 * Ledger, frequency-cap and opt-out guards: a role may only read items of a named table (GetItem, BatchGetItem: the
 * sender's opt-out look-up and campaign state), update them (the cap's counts, the endpoint's opt-outs, outcomes) and
 * put one (the sender's conditional claim of an occurrence), never enumerate, delete or administer one; the tables that
 * hold every address's send counts and the campaigns' states are encrypted and recoverable.
 */
import { ResourceValidationPolicy } from "@pulumi/policy";
import { allowedActions, describeStatement, permissionDocuments } from "./iam-document";

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
/** Read by key, one or a batch, update, and put (a claim): what the sender and the unsubscribe endpoint call. */
const GATE_ACTIONS = ["dynamodb:UpdateItem", "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem"];
/** One named table: no wildcard in its name, no index or stream under it. */
const TABLE_ARN = /^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/[A-Za-z0-9_.-]+$/;

export const sendGateTableScoped: ResourceValidationPolicy = {
  name: "send-gate-table-scoped",
  description:
    "DynamoDB grants (the sender's and the unsubscribe endpoint's) are UpdateItem, GetItem, BatchGetItem and PutItem on one named table, nothing else.",
  enforcementLevel: "mandatory",
  validateResource: (args, reportViolation) => {
    for (const doc of permissionDocuments(args.type, args.name, args.props)) {
      doc.statements.forEach((s, i) => {
        const allowed = allowedActions(s, DYNAMODB_ACTIONS);
        if (!allowed.length) return;
        const label = `${doc.where} ${describeStatement(s, i)}`;
        const report = (message: string) => reportViolation(message + (doc.hint ?? ""));
        const fix =
          'allow only "dynamodb:UpdateItem", "dynamodb:GetItem", "dynamodb:BatchGetItem" and "dynamodb:PutItem" on the table\'s ARN (arn:aws:dynamodb:<region>:<account>:table/<name>)';
        if (s.notActions || s.notResources)
          return report(`${label} uses NotAction or NotResource with DynamoDB: ${fix}`);
        const extra = allowed.filter((a) => !GATE_ACTIONS.includes(a));
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

export const sendGateTableProtected: ResourceValidationPolicy = {
  name: "send-gate-table-protected",
  description:
    "DynamoDB tables (the send gate's holds every address's send counts) use KMS encryption and point-in-time recovery.",
  enforcementLevel: "mandatory",
  validateResource: (args, report) => {
    if (args.type !== "aws:dynamodb/table:Table") return;
    const label = `Table "${args.name}"`;
    if (args.props.serverSideEncryption?.enabled !== true)
      report(
        `${label} is not encrypted with KMS: set serverSideEncryption {enabled: true} (optionally with kmsKeyArn)`,
      );
    if (args.props.pointInTimeRecovery?.enabled !== true)
      report(`${label} has no point-in-time recovery: set pointInTimeRecovery {enabled: true}`);
  },
};
