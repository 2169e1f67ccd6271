/**
 * Holding a Lambda function's role to an allow-list (public-endpoints.ts, opt-out-events.ts): every statement on the
 * role, however it is attached — the role's inline policies and managed policies (a known AWS managed policy's
 * published document, an aws.iam.Policy of the stack's), every RolePolicy, and every attachment (RolePolicyAttachment,
 * RolePolicyAttachmentsExclusive, PolicyAttachment) naming it — may grant only the actions of the list on the
 * resources the function itself uses (found in the stack: what its environment names, its log group, its on-failure
 * destination, their keys); its trust may name only the Lambda service. Anything else is a violation naming the
 * action and the resource.
 */
import { PolicyResource } from "@pulumi/policy";
import { FUNCTION_LOG_ACTIONS, LAMBDA_SERVICE } from "../infra/core/plan/naming";
import { awsManagedDocument } from "./managed-policies";
import {
  attachmentOf,
  describeStatement,
  LocatedDocument,
  parseDocument,
  permissionDocuments,
  shortType,
  Statement,
} from "./iam-document";
import { INVOKE_CONFIG, LOG_GROUP, POLICY, ROLE } from "./resource-types";

export const quote = (xs: string[]) => xs.map((x) => `"${x}"`).join(", ");

const roleNameOf = (arn: unknown) => (typeof arn === "string" ? arn.slice(arn.lastIndexOf("/") + 1) : undefined);

/** One grant of an allow-list: these actions on these resources (ARNs, resolved from the stack). */
export interface Grant {
  actions: readonly string[];
  resources: string[];
  /** What the resources are, for messages: "its key parameter". */
  what: string;
}

/** The role `fn` (a Lambda function) runs as, among `resources`. */
export function roleOfFunction(resources: PolicyResource[], fn: PolicyResource): PolicyResource | undefined {
  return resources.find(
    (r) => r.type === ROLE && (r.props.arn === fn.props.role || r.props.name === roleNameOf(fn.props.role)),
  );
}

/** A statement on a role, with the resource that puts it there and where in it. */
export interface RoleStatement {
  resource: PolicyResource;
  doc: LocatedDocument;
  statement: Statement;
  index: number;
}

/** Every statement on `role`, and every attachment to it of a managed policy the pack cannot read. */
export function roleStatements(
  resources: PolicyResource[],
  role: PolicyResource,
): { statements: RoleStatement[]; unreadable: { resource: PolicyResource; arn: string }[] } {
  const roleName = role.props.name ?? role.name;
  const namesRole = (x: unknown) => x === roleName || roleNameOf(x) === roleName;
  const statements: RoleStatement[] = [];
  const unreadable: { resource: PolicyResource; arn: string }[] = [];
  for (const resource of resources) {
    const attachment = attachmentOf(resource.type, resource.props);
    const attached =
      resource === role ||
      (resource.type !== ROLE &&
        ((attachment?.roles ?? []).some(namesRole) || [resource.props.role, resource.props.roleName].some(namesRole)));
    if (!attached) continue;
    const docs = permissionDocuments(resource.type, resource.name, resource.props);
    for (const arn of attachment?.policyArns ?? []) {
      if (typeof arn !== "string" || awsManagedDocument(arn)) continue;
      const policy = stackPolicy(resources, arn);
      const policyStatements = policy && parseDocument(policy.props.policy);
      if (policyStatements)
        docs.push({
          where: `${shortType(resource.type)} "${resource.name}" attaches Policy "${policy!.name}", whose`,
          statements: policyStatements,
        });
      else if (!policy) unreadable.push({ resource, arn });
    }
    for (const doc of docs)
      doc.statements.forEach((statement, index) => statements.push({ resource, doc, statement, index }));
  }
  return { statements, unreadable };
}

/** The aws.iam.Policy of the stack an ARN names: by ARN, or by name while the ARN is not known yet. */
function stackPolicy(resources: PolicyResource[], arn: string): PolicyResource | undefined {
  return resources.find(
    (p) =>
      p.type === POLICY &&
      (typeof p.props.arn === "string" ? p.props.arn === arn : p.props.name && arn.endsWith(`/${p.props.name}`)),
  );
}

/** What a statement allows beyond the allow-list `grants`: one problem per action, with its resources outside. */
export function beyondGrants(s: Statement, grants: Grant[]): string[] {
  if (s.effect !== "Allow") return [];
  if (s.notActions) return ["uses NotAction, which allows every action it does not list: name the actions"];
  if (s.notResources) return ["uses NotResource, which allows every resource it does not list: name the resources"];
  const resources = s.resources ?? [];
  if (!resources.length) return ["names no resource"];
  return (s.actions ?? []).flatMap((action) => {
    const granting = grants.filter((g) => g.actions.some((a) => a.toLowerCase() === action.toLowerCase()));
    const outside = resources.filter((r) => !granting.some((g) => g.resources.includes(r)));
    return outside.length ? [`allows ${action} on ${quote(outside)}`] : [];
  });
}

/** The allow-list in words, for messages: `a, b on its table; c on its logs`. */
export const describeGrants = (grants: Grant[]) =>
  grants
    .map((g) => `${g.actions.join(", ")} on ${g.what}${g.resources.length ? ` (${g.resources.join(", ")})` : ""}`)
    .join("; ");

/**
 * Reports everything on the role of `fn` that the allow-list `grants` does not hold, and a trust that lets anyone
 * but Lambda assume it; `who` names the function in messages ("the public function").
 */
export function checkFunctionRole(
  resources: PolicyResource[],
  fn: PolicyResource,
  who: string,
  grants: Grant[],
  report: (message: string, urn: string) => void,
): void {
  const role = roleOfFunction(resources, fn);
  if (!role) return;
  const whose = `(role of ${who} "${fn.props.name ?? fn.name}")`;
  const only = `${who} may only ${describeGrants(grants)}`;
  const { statements, unreadable } = roleStatements(resources, role);
  for (const { resource, doc, statement, index } of statements)
    for (const p of beyondGrants(statement, grants))
      report(
        `${doc.where} ${describeStatement(statement, index)} ${whose} ${p}: ${only}${doc.hint ?? ""}`,
        resource.urn,
      );
  for (const { resource, arn } of unreadable)
    report(
      `${shortType(resource.type)} "${resource.name}" attaches ${arn} ${whose}, and the pack cannot read what it grants: ${only}`,
      resource.urn,
    );
  (parseDocument(role.props.assumeRolePolicy) ?? []).forEach((s, i) => {
    if (s.effect !== "Allow" || onlyService(s, LAMBDA_SERVICE)) return;
    const p = s.notPrincipal !== undefined ? { NotPrincipal: s.notPrincipal } : s.principal;
    report(
      `Role "${role.name}" trust ${describeStatement(s, i)} lets ${JSON.stringify(p)} assume the role of ${who} "${fn.props.name ?? fn.name}": trust only {"Service": "${LAMBDA_SERVICE}"}`,
      role.urn,
    );
  });
}

/** True when a trust statement's principal is `service` and nothing else. */
function onlyService(s: Statement, service: string): boolean {
  const p = s.principal as { Service?: unknown } | undefined;
  if (s.notPrincipal !== undefined || typeof p !== "object" || p === null || Object.keys(p).length !== 1) return false;
  const services = [p.Service].flat();
  return services.length === 1 && services[0] === service;
}

/** Every name a function's configuration mentions: its environment's values, JSON text read through. */
export function configuredNames(fn: PolicyResource): Set<string> | undefined {
  const variables = fn.props.environment?.variables;
  if (!variables || typeof variables !== "object") return undefined;
  const names = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (v && typeof v === "object") return Object.values(v).forEach(walk);
    if (typeof v !== "string") return;
    names.add(v);
    if (!/^\s*[{[]/.test(v)) return;
    try {
      walk(JSON.parse(v));
    } catch {
      // Not JSON: the text itself is the name.
    }
  };
  walk(variables);
  return names;
}

/**
 * The resources of `type` the function's configuration names (`nameOf`: a resource's name); every one of `type`
 * when the configuration is not known yet (a preview of a new stack).
 */
export function configuredResources(
  resources: PolicyResource[],
  fn: PolicyResource,
  type: string,
  nameOf: (r: PolicyResource) => unknown = (r) => r.props.name,
): PolicyResource[] {
  const names = configuredNames(fn);
  return resources.filter((r) => r.type === type && (!names || names.has(String(nameOf(r)))));
}

/** ARNs (known ones) of `rs`. */
export const arnsOf = (rs: PolicyResource[]): string[] =>
  rs.map((r) => r.props.arn).filter((a): a is string => typeof a === "string");

/** The function's logs: the streams of the stack's log group it writes to (`loggingConfig.logGroup`, else Lambda's default). */
export function logGrant(resources: PolicyResource[], fn: PolicyResource): Grant {
  const group = fn.props.loggingConfig?.logGroup ?? `/aws/lambda/${fn.props.name}`;
  const groups = resources.filter((r) => r.type === LOG_GROUP && r.props.name === group);
  return {
    actions: FUNCTION_LOG_ACTIONS,
    resources: arnsOf(groups).map((a) => `${a}:*`),
    what: "its log group's streams",
  };
}

/** Where the function's failed asynchronous runs go: its on-failure destination, or its dead-letter queue. */
export function failureDestinations(resources: PolicyResource[], fn: PolicyResource): string[] {
  const names = [fn.props.name, fn.props.arn].filter(Boolean);
  const configured = resources
    .filter((r) => r.type === INVOKE_CONFIG && names.includes(r.props.functionName))
    .map((r) => r.props.destinationConfig?.onFailure?.destination);
  return [...configured, fn.props.deadLetterConfig?.targetArn].filter((a): a is string => typeof a === "string");
}
