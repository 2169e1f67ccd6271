/**
 * Reading IAM policy documents as the guard policies need them: every statement, in every place the stack can
 * attach one, with wildcard actions expanded against the actions that matter here.
 */

import { awsManagedDocument } from "./managed-policies";

export interface Statement {
  sid?: string;
  effect: string;
  actions?: string[];
  notActions?: string[];
  resources?: string[];
  notResources?: string[];
  principal?: unknown;
  notPrincipal?: unknown;
  condition?: Record<string, Record<string, unknown>>;
}

/** Where a document came from, for messages: e.g. `RolePolicy "fanout-permissions"` or `Role "x" inline policy "y"`. */
export interface LocatedDocument {
  where: string;
  statements: Statement[];
  /** Said after the fix, when the document cannot be edited (an attached AWS managed policy). */
  hint?: string;
}

/** A policy attachment: the managed policy ARNs a resource attaches, and the roles it attaches them to. */
export interface Attachment {
  policyArns: unknown[];
  roles: unknown[];
}

/**
 * The managed policies a resource attaches: Role `managedPolicyArns`, RolePolicyAttachment `policyArn`,
 * RolePolicyAttachmentsExclusive `policyArns`, PolicyAttachment `policyArn` (to `roles`, users, groups),
 * User/GroupPolicyAttachment `policyArn`. Undefined for any other resource.
 */
export function attachmentOf(type: string, props: Record<string, any>): Attachment | undefined {
  const list = (v: unknown) => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
  switch (type) {
    case "aws:iam/role:Role":
      return { policyArns: list(props.managedPolicyArns), roles: [props.name] };
    case "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
      return { policyArns: list(props.policyArn), roles: [props.role] };
    case "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive":
      return { policyArns: list(props.policyArns), roles: [props.roleName] };
    case "aws:iam/policyAttachment:PolicyAttachment":
      return {
        policyArns: list(props.policyArn),
        roles: [...list(props.roles), ...list(props.users), ...list(props.groups)],
      };
    case "aws:iam/userPolicyAttachment:UserPolicyAttachment":
      return { policyArns: list(props.policyArn), roles: [props.user] };
    case "aws:iam/groupPolicyAttachment:GroupPolicyAttachment":
      return { policyArns: list(props.policyArn), roles: [props.group] };
  }
  return undefined;
}

const MANAGED_HINT =
  "; an AWS managed policy cannot be narrowed: detach it and grant what the role needs in a policy of your own";

const asList = (v: unknown): string[] | undefined =>
  v === undefined ? undefined : (Array.isArray(v) ? v : [v]).map(String);

/** Parses a policy document given as JSON text or an object; undefined when it is unknown (preview) or not a document. */
export function parseDocument(doc: unknown): Statement[] | undefined {
  let value = doc;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (!value || typeof value !== "object") return undefined;
  const raw = (value as { Statement?: unknown }).Statement;
  if (raw === undefined) return [];
  return (Array.isArray(raw) ? raw : [raw]).map((s: any) => ({
    sid: s.Sid,
    effect: String(s.Effect),
    actions: asList(s.Action),
    notActions: asList(s.NotAction),
    resources: asList(s.Resource),
    notResources: asList(s.NotResource),
    principal: s.Principal,
    notPrincipal: s.NotPrincipal,
    condition: s.Condition,
  }));
}

/** A short type name for messages: `aws:iam/rolePolicy:RolePolicy` → `RolePolicy`. */
export const shortType = (type: string) => type.split(":").pop()!;

/** Identity-based policy documents a resource attaches: RolePolicy/Policy/UserPolicy/GroupPolicy, and Role inline policies. */
export function permissionDocuments(type: string, name: string, props: Record<string, any>): LocatedDocument[] {
  const docs: LocatedDocument[] = [];
  const add = (where: string, doc: unknown) => {
    const statements = parseDocument(doc);
    if (statements) docs.push({ where, statements });
  };
  switch (type) {
    case "aws:iam/rolePolicy:RolePolicy":
    case "aws:iam/policy:Policy":
    case "aws:iam/userPolicy:UserPolicy":
    case "aws:iam/groupPolicy:GroupPolicy":
      add(`${shortType(type)} "${name}"`, props.policy);
      break;
    case "aws:iam/role:Role":
      for (const p of props.inlinePolicies ?? []) add(`Role "${name}" inline policy "${p?.name ?? ""}"`, p?.policy);
      break;
  }
  // An attached AWS managed policy grants what its published document says: checked as if written here.
  for (const arn of attachmentOf(type, props)?.policyArns ?? []) {
    const known = awsManagedDocument(arn);
    const statements = known && parseDocument(known);
    if (statements)
      docs.push({
        where: `${shortType(type)} "${name}" attaches ${arn} (AWS managed), whose`,
        statements,
        hint: MANAGED_HINT,
      });
  }
  return docs;
}

/** IAM wildcard match (`*`, `?`), case-insensitive as IAM matches actions. */
export function wildcardMatch(pattern: string, value: string): boolean {
  const re = new RegExp(
    "^" +
      pattern
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".") +
      "$",
    "i",
  );
  return re.test(value);
}

/**
 * The actions of `candidates` this statement allows: through Action patterns, or through NotAction (which allows
 * everything it does not list).
 */
export function allowedActions(s: Statement, candidates: readonly string[]): string[] {
  if (s.effect !== "Allow") return [];
  if (s.notActions) return candidates.filter((a) => !s.notActions!.some((p) => wildcardMatch(p, a)));
  return candidates.filter((a) => (s.actions ?? []).some((p) => wildcardMatch(p, a)));
}

/** Every EventBridge Scheduler action — https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoneventbridgescheduler.html */
export const SCHEDULER_ACTIONS = [
  "scheduler:CreateSchedule",
  "scheduler:CreateScheduleGroup",
  "scheduler:DeleteSchedule",
  "scheduler:DeleteScheduleGroup",
  "scheduler:GetSchedule",
  "scheduler:GetScheduleGroup",
  "scheduler:ListScheduleGroups",
  "scheduler:ListSchedules",
  "scheduler:ListTagsForResource",
  "scheduler:TagResource",
  "scheduler:UntagResource",
  "scheduler:UpdateSchedule",
] as const;

export const PASS_ROLE = ["iam:PassRole"] as const;
export const SES_SEND_ACTIONS = [
  "ses:SendEmail",
  "ses:SendTemplatedEmail",
  "ses:SendBulkTemplatedEmail",
  "ses:SendBulkEmail",
  "ses:SendRawEmail",
] as const;

export function describeStatement(s: Statement, index: number): string {
  return s.sid ? `statement "${s.sid}"` : `statement ${index + 1}`;
}

/** Values of a condition key under the given operators (e.g. StringEquals), flattened. */
export function conditionValues(s: Statement, operators: string[], key: string): string[] | undefined {
  const found: string[] = [];
  let present = false;
  for (const op of operators) {
    const block = s.condition?.[op];
    if (!block) continue;
    for (const [k, v] of Object.entries(block)) {
      if (k.toLowerCase() === key.toLowerCase()) {
        present = true;
        found.push(...(asList(v) ?? []));
      }
    }
  }
  return present ? found : undefined;
}
