/**
 * IAM guards: what the fan-out and Scheduler may do, and who may assume the role Scheduler uses.
 */
import {
  ResourceValidationArgs,
  ResourceValidationPolicy,
  ReportViolation,
  StackValidationPolicy,
} from "@pulumi/policy";
import { CAMPAIGN_PREFIX, isCampaignScopedArn, SCHEDULER_SERVICE } from "../infra/core/plan/naming";
import { GUARDRAIL_CLEANUP_ACTIONS, isGuardrailCleanupSchedulesArn } from "../infra/core/send/guardrails";
import {
  allowedActions,
  conditionValues,
  describeStatement,
  parseDocument,
  PASS_ROLE,
  permissionDocuments,
  SCHEDULER_ACTIONS,
  SES_SEND_ACTIONS,
  Statement,
} from "./iam-document";
import { ROLE } from "./resource-types";

const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[^*?]+$/;
/** The identity and the configuration set are named (a wildcard would let a send skip the stack's); templates may not be. */
const SES_SEND_RESOURCE =
  /^arn:aws[a-z-]*:ses:[a-z0-9-]+:\d{12}:((identity|configuration-set)\/[^*?]+|(template|contact-list)\/.+)$/;

/**
 * Calls `check` for every Allow statement, in every document the resource writes or attaches (a known AWS managed
 * policy included), that allows one of `actions`; what it reports about a managed policy says how to replace it.
 */
function forEachGrant(
  args: ResourceValidationArgs,
  report: ReportViolation,
  actions: readonly string[],
  check: (s: Statement, label: string, allowed: string[], report: (message: string) => void) => void,
) {
  for (const doc of permissionDocuments(args.type, args.name, args.props)) {
    doc.statements.forEach((s, i) => {
      const allowed = allowedActions(s, actions);
      if (allowed.length)
        check(s, `${doc.where} ${describeStatement(s, i)}`, allowed, (m) => report(m + (doc.hint ?? "")));
    });
  }
}

const quote = (xs: string[]) => xs.map((x) => `"${x}"`).join(", ");

export const schedulerActionsScopedToCampaigns: ResourceValidationPolicy = {
  name: "scheduler-actions-scoped-to-campaigns",
  description: `EventBridge Scheduler permissions are limited to campaign schedules and groups (${CAMPAIGN_PREFIX}*), and the guardrails' alarm deletions (CreateSchedule and UpdateSchedule in sendtime-<stack>-guardrail-cleanup).`,
  enforcementLevel: "mandatory",
  validateResource: (args, report) => {
    const fix = `list only arn:<partition>:scheduler:<region>:<account>:schedule/${CAMPAIGN_PREFIX}*/* and …:schedule-group/${CAMPAIGN_PREFIX}*`;
    forEachGrant(args, report, SCHEDULER_ACTIONS, (s, label, allowed, report) => {
      const what = allowed.length > 3 ? `${allowed.length} Scheduler actions` : allowed.join(", ");
      if (s.notActions)
        return report(`${label} uses NotAction and so allows ${what}: name the actions with Action and ${fix}`);
      if (s.notResources)
        return report(`${label} allows ${what} with NotResource, which reaches beyond campaigns: ${fix}`);
      // The guardrails' clean-up group holds only alarm deletions: creating and moving them there is no send.
      const cleanupOnly = allowed.every((a) => (GUARDRAIL_CLEANUP_ACTIONS as readonly string[]).includes(a));
      const outside = (s.resources ?? []).filter(
        (r) => !isCampaignScopedArn(r) && !(cleanupOnly && isGuardrailCleanupSchedulesArn(r)),
      );
      if (outside.length || !s.resources?.length) {
        report(
          `${label} allows ${what} on ${quote(outside.length ? outside : ["(no resource)"])}, outside campaign schedules: ${fix}`,
        );
      }
    });
  },
};

export const passRoleOnlyToScheduler: ResourceValidationPolicy = {
  name: "passrole-only-to-scheduler",
  description: `iam:PassRole names specific roles and only passes them to ${SCHEDULER_SERVICE}.`,
  enforcementLevel: "mandatory",
  validateResource: (args, report) => {
    const condition = `Condition {"StringEquals": {"iam:PassedToService": "${SCHEDULER_SERVICE}"}}`;
    forEachGrant(args, report, PASS_ROLE, (s, label, _allowed, report) => {
      if (s.notActions)
        return report(
          `${label} uses NotAction and so allows iam:PassRole: name the actions with Action, and pass only named roles with ${condition}`,
        );
      if (s.notResources)
        return report(`${label} allows iam:PassRole with NotResource: name the role ARNs in Resource`);
      const wild = (s.resources ?? []).filter((r) => !ROLE_ARN.test(r));
      if (wild.length || !s.resources?.length) {
        report(
          `${label} allows iam:PassRole on ${quote(wild.length ? wild : ["(no resource)"])}: name the role ARNs (arn:aws:iam::<account>:role/<name>), never a wildcard`,
        );
      }
      const services = conditionValues(s, ["StringEquals"], "iam:PassedToService");
      if (!services || services.length === 0 || services.some((v) => v !== SCHEDULER_SERVICE)) {
        report(
          `${label} allows iam:PassRole ${services ? `to ${quote(services)}` : "without an iam:PassedToService condition"}: add ${condition}`,
        );
      }
    });
  },
};

/** The role name in a role ARN (`arn:aws:iam::<account>:role/<path/><name>`). */
const roleNameOf = (arn: string) => arn.slice(arn.lastIndexOf("/") + 1);

export const passRoleOnlyTargetRoles: StackValidationPolicy = {
  name: "passrole-only-target-roles",
  description:
    "iam:PassRole names only roles of this stack that EventBridge Scheduler assumes: a schedule runs as the role it is given.",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    const targets = args.resources.filter(
      (r) =>
        r.type === ROLE &&
        (parseDocument(r.props.assumeRolePolicy) ?? []).some((s) => s.effect === "Allow" && trustsScheduler(s)),
    );
    // By ARN, or by name while the ARN is not known yet (preview of a new stack).
    const isTarget = (arn: string) =>
      targets.some((t) => (typeof t.props.arn === "string" ? t.props.arn === arn : roleNameOf(arn) === t.props.name));
    const names = targets.map((t) => t.props.name ?? t.name).join(", ") || "none";
    for (const r of args.resources) {
      for (const doc of permissionDocuments(r.type, r.name, r.props)) {
        doc.statements.forEach((s, i) => {
          if (!allowedActions(s, PASS_ROLE).length) return;
          // Wildcards, NotResource and NotAction are passrole-only-to-scheduler's to report.
          const others = (s.resources ?? []).filter((x) => ROLE_ARN.test(x) && !isTarget(x));
          if (!others.length) return;
          report(
            `${doc.where} ${describeStatement(s, i)} allows iam:PassRole on ${quote(others)}, which ${others.length > 1 ? "are not roles" : "is not a role"} of this stack that Scheduler assumes (${names}): pass only the target role's ARN${doc.hint ?? ""}`,
            r.urn,
          );
        });
      }
    }
  },
};

/** True when a trust statement names the Scheduler service principal. */
function trustsScheduler(s: Statement): boolean {
  const service = (s.principal as { Service?: unknown } | undefined)?.Service;
  return (Array.isArray(service) ? service : [service]).includes(SCHEDULER_SERVICE);
}

const ACCOUNT_ID = /^\d{12}$/;
const WILDCARD = /[*?]/;

/** The one account a condition value names (a literal account id, or an ARN whose account field is one), or undefined. */
export function pinnedAccount(key: string, operator: string, value: string): string | undefined {
  if (key === "aws:sourceaccount") return ACCOUNT_ID.test(value) ? value : undefined;
  const fields = value.split(":");
  if (fields.length < 6 || !ACCOUNT_ID.test(fields[4])) return undefined;
  // StringLike's wildcards span colons (ArnLike's stay within a field): nothing before the account may be one.
  return operator !== "stringlike" || !WILDCARD.test(fields.slice(0, 4).join(":")) ? fields[4] : undefined;
}

type Loose = { key: string; value: string } | { key: string; accounts: string[] };

/**
 * Whether a trust statement's condition pins the calling account: some aws:SourceAccount or aws:SourceArn block (the
 * blocks of a condition all hold at once) whose every value (any one of them is enough to match) names one account,
 * the same one. `loose` lists the values that do not, and the blocks that name several accounts, for the message.
 */
export function accountPinning(s: Statement): { pinned: boolean; loose: Loose[] } {
  const loose: Loose[] = [];
  let pinned = false;
  for (const [op, block] of Object.entries(s.condition ?? {})) {
    const operator = op.toLowerCase();
    if (!["stringequals", "stringlike", "arnequals", "arnlike"].includes(operator)) continue;
    for (const [k, v] of Object.entries(block ?? {})) {
      const key = k.toLowerCase();
      if (key !== "aws:sourceaccount" && key !== "aws:sourcearn") continue;
      const name = key === "aws:sourceaccount" ? "aws:SourceAccount" : "aws:SourceArn";
      const values = (Array.isArray(v) ? v : [v]).map(String);
      const accounts = new Set<string>();
      const bad = values.filter((value) => {
        const account = pinnedAccount(key, operator, value);
        if (account !== undefined) accounts.add(account);
        return account === undefined;
      });
      if (values.length && !bad.length && accounts.size === 1) pinned = true;
      loose.push(...bad.map((value) => ({ key: name, value })));
      if (accounts.size > 1) loose.push({ key: name, accounts: [...accounts].sort() });
    }
  }
  return { pinned, loose };
}

export const schedulerRoleTrust: ResourceValidationPolicy = {
  name: "scheduler-role-trust",
  description: `A role EventBridge Scheduler assumes trusts only ${SCHEDULER_SERVICE}, from one named account (aws:SourceAccount, or aws:SourceArn with the account in it; no wildcard).`,
  enforcementLevel: "mandatory",
  validateResource: (args, report) => {
    if (args.type !== ROLE) return;
    const statements = parseDocument(args.props.assumeRolePolicy);
    if (!statements || !statements.some((s) => s.effect === "Allow" && trustsScheduler(s))) return;
    statements.forEach((s, i) => {
      if (s.effect !== "Allow") return;
      const label = `Role "${args.name}" trust ${describeStatement(s, i)}`;
      const p = s.principal as { Service?: unknown } | string | undefined;
      const onlyScheduler =
        typeof p === "object" &&
        p !== null &&
        Object.keys(p).length === 1 &&
        [p.Service].flat().length === 1 &&
        trustsScheduler(s);
      if (!onlyScheduler) {
        report(
          `${label} lets ${JSON.stringify(p)} assume the role Scheduler uses: trust only {"Service": "${SCHEDULER_SERVICE}"}`,
        );
        return;
      }
      const { pinned, loose } = accountPinning(s);
      if (pinned) return;
      const fix = `use {"StringEquals": {"aws:SourceAccount": "<your 12-digit account id>"}}`;
      for (const l of loose) {
        if ("accounts" in l) {
          report(`${label} ${l.key} names ${l.accounts.length} accounts (${quote(l.accounts)}): pin one, ${fix}`);
          continue;
        }
        report(
          l.key === "aws:SourceAccount"
            ? `${label} aws:SourceAccount ${JSON.stringify(l.value)} does not pin one account: ${fix}`
            : `${label} aws:SourceArn ${JSON.stringify(l.value)} does not pin one account: name your account id in it (arn:aws:scheduler:<region>:<account id>:schedule/…), or ${fix}`,
        );
      }
      if (!loose.length)
        report(
          `${label} trusts ${SCHEDULER_SERVICE} from any account: add Condition ${fix.slice(4)} (or aws:SourceArn)`,
        );
    });
  },
};

export const sesSendScoped: ResourceValidationPolicy = {
  name: "ses-send-scoped",
  description:
    "SES sending is allowed only on named identities and configuration sets, and on template and contact-list ARNs.",
  enforcementLevel: "mandatory",
  validateResource: (args, report: ReportViolation) => {
    const fix =
      "name the identity and the configuration set (no wildcard), and list only identity, configuration-set, template (and contact-list) ARNs (arn:aws:ses:<region>:<account>:identity/<domain>, …)";
    forEachGrant(args, report, SES_SEND_ACTIONS, (s, label, allowed, report) => {
      const what =
        allowed.filter((a) => a === "ses:SendEmail" || a === "ses:SendTemplatedEmail").join(", ") || allowed.join(", ");
      if (s.notActions)
        return report(`${label} uses NotAction and so allows ${what}: name the actions with Action and ${fix}`);
      if (s.notResources) return report(`${label} allows ${what} with NotResource: ${fix}`);
      const outside = (s.resources ?? []).filter((r) => !SES_SEND_RESOURCE.test(r));
      if (outside.length || !s.resources?.length)
        report(`${label} allows ${what} on ${quote(outside.length ? outside : ["(no resource)"])}: ${fix}`);
    });
  },
};

/** Condition keys that name the caller of sts:AssumeRole; a whole account or organisation is not one caller. */
const CALLER_KEYS = ["aws:principalarn", "aws:sourcearn", "aws:sourceaccount"];
const NAMING_OPERATORS = ["stringequals", "stringlike", "arnequals", "arnlike"];

/** Whether a principal is everyone: "*", or "*" among the AWS (or Federated, CanonicalUser, Service) principals. */
export function isEveryone(principal: unknown): boolean {
  if (principal === "*") return true;
  if (typeof principal !== "object" || principal === null) return false;
  return Object.values(principal).some((v) => [v].flat().some((x) => typeof x === "string" && WILDCARD.test(x)));
}

/** Whether a statement's condition names its caller: a caller key, under a matching operator, with literal values. */
function namesCaller(s: Statement): boolean {
  return Object.entries(s.condition ?? {}).some(
    ([op, block]) =>
      NAMING_OPERATORS.includes(op.toLowerCase()) &&
      Object.entries(block ?? {}).some(([key, v]) => {
        const values = [v].flat().map(String);
        return CALLER_KEYS.includes(key.toLowerCase()) && values.length > 0 && !values.some((x) => WILDCARD.test(x));
      }),
  );
}

export const roleTrustNotPublic: ResourceValidationPolicy = {
  name: "role-trust-not-public",
  description:
    'No role may be assumed by anyone: a trust statement whose principal is "*" or {"AWS": "*"} (or NotPrincipal) is refused unless its condition names the caller (aws:PrincipalArn, aws:SourceArn or aws:SourceAccount, no wildcard).',
  enforcementLevel: "mandatory",
  validateResource: (args, report) => {
    if (args.type !== ROLE) return;
    (parseDocument(args.props.assumeRolePolicy) ?? []).forEach((s, i) => {
      if (s.effect !== "Allow") return;
      const label = `Role "${args.name}" trust ${describeStatement(s, i)}`;
      if (s.notPrincipal !== undefined)
        return report(
          `${label} uses NotPrincipal, which lets everyone it does not list assume it: name the principal in Principal`,
        );
      if (isEveryone(s.principal) && !namesCaller(s))
        report(
          `${label} lets ${JSON.stringify(s.principal)} (anyone) assume it without a condition that names who: name the principal (a service with aws:SourceAccount, or a role ARN)`,
        );
    });
  },
};
