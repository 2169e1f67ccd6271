/**
 * A small IAM policy evaluator for identity policies, written from the IAM reference and independent of the policy
 * pack's reading of documents (policy/iam-document.ts): it answers whether a role's policies allow one request.
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html
 *
 * - An explicit Deny wins over any Allow; without an Allow the request is implicitly denied.
 * - Action / NotAction: case-insensitive, with the wildcards `*` and `?`.
 * - Resource / NotResource: case-sensitive; `*` and `?` stay within the ARN's colon-separated segments, except in the
 *   last (resource) segment, where they match anything (`log-group:x:*` covers `log-group:x:log-stream:y`).
 * - Condition: every operator of a statement, every key of an operator, must hold; a key holds when the request's
 *   value equals (or matches) one of the listed values; a key the request lacks does not hold. The negated operators
 *   (StringNotEquals, StringNotLike, ArnNotEquals, ArnNotLike) hold when the value matches none of the listed values,
 *   and when the request lacks the key (reference_policies_elements_condition_operators.html). Operators: those,
 *   StringEquals, StringLike, ArnEquals, ArnLike, Bool, and ForAllValues: over StringEquals and StringLike for a
 *   multivalued key (dynamodb:LeadingKeys): every value of the request's set must match one of the listed values, and,
 *   as in IAM, an absent key or an empty set holds. Condition keys are case-insensitive. Anything else throws: the
 *   evaluator never guesses.
 * - A resource policy (evaluateResourcePolicy) also matches Principal: "*" and {"AWS": "*"} are everyone, {"AWS":
 *   <ARN>} that role, {"Service": <name>} that service.
 */
import * as assert from "assert";

export interface IamStatement {
  Effect: "Allow" | "Deny";
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  Condition?: Record<string, Record<string, string | string[] | boolean>>;
  Principal?: unknown;
  Sid?: string;
}

export interface IamRequest {
  action: string;
  resource: string;
  /**
   * Condition keys of the request, e.g. {"iam:PassedToService": "scheduler.amazonaws.com"}; a multivalued key as a
   * list, e.g. {"dynamodb:LeadingKeys": ["enr#onboarding#u-42#e1"]}.
   */
  context?: Record<string, string | string[]>;
}

export type Decision = "Allow" | "ImplicitDeny" | "ExplicitDeny";

const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Whether `value` matches `pattern` with `*` (any run) and `?` (one character); `within` keeps them off `:`. */
function wildcard(pattern: string, value: string, caseInsensitive: boolean, within = false): boolean {
  const any = within ? "[^:]*" : "[\\s\\S]*";
  const one = within ? "[^:]" : "[\\s\\S]";
  const source = pattern
    .split("")
    .map((c) => (c === "*" ? any : c === "?" ? one : c.replace(/[.+^${}()|[\]\\/-]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`, caseInsensitive ? "i" : "").test(value);
}

function actionMatches(pattern: string, action: string): boolean {
  return wildcard(pattern, action, true);
}

/** An ARN pattern against an ARN: the first five segments one by one, then the rest (the resource) as a whole. */
export function resourceMatches(pattern: string, resource: string): boolean {
  if (pattern === "*") return true;
  const split = (arn: string) => {
    const parts = arn.split(":");
    return parts.length < 6 ? undefined : [...parts.slice(0, 5), parts.slice(5).join(":")];
  };
  const [p, r] = [split(pattern), split(resource)];
  if (!p || !r) return wildcard(pattern, resource, false);
  return p.every((seg, i) => (i < 5 ? wildcard(seg, r[i], false, true) : wildcard(seg, r[i], false)));
}

/** One single-valued operator on one value of the request. */
function valueMatches(operator: string, actual: string, values: string[]): boolean {
  switch (operator) {
    case "StringEquals":
    case "ArnEquals":
      return values.includes(actual);
    case "StringLike":
    case "ArnLike":
      return values.some((v) => wildcard(v, actual, false));
    case "Bool":
      return values.some((v) => v.toLowerCase() === actual.toLowerCase());
    default:
      throw new Error(`the evaluator does not know the condition operator ${operator}`);
  }
}

const NEGATED: Record<string, string> = {
  StringNotEquals: "StringEquals",
  StringNotLike: "StringLike",
  ArnNotEquals: "ArnEquals",
  ArnNotLike: "ArnLike",
};

function conditionHolds(condition: IamStatement["Condition"], context: Record<string, string | string[]>): boolean {
  if (!condition) return true;
  const lower = Object.fromEntries(Object.entries(context).map(([k, v]) => [k.toLowerCase(), v]));
  return Object.entries(condition).every(([operator, keys]) =>
    Object.entries(keys).every(([key, expected]) => {
      const actual = lower[key.toLowerCase()];
      const values = (Array.isArray(expected) ? expected : [expected]).map(String);
      const forAll = /^ForAllValues:(StringEquals|StringLike)$/.exec(operator);
      if (forAll) return list(actual).every((a) => valueMatches(forAll[1], a, values));
      if (operator.includes(":")) throw new Error(`the evaluator does not know the condition operator ${operator}`);
      if (Array.isArray(actual))
        throw new Error(`${key} is multivalued: ${operator} needs ForAllValues or ForAnyValue`);
      const negated = NEGATED[operator];
      if (negated) return actual === undefined || !valueMatches(negated, actual, values);
      if (actual === undefined) return false;
      return valueMatches(operator, actual, values);
    }),
  );
}

function statementApplies(s: IamStatement, request: IamRequest): boolean {
  if ((s.Action === undefined) === (s.NotAction === undefined))
    throw new Error(`a statement needs Action or NotAction: ${JSON.stringify(s)}`);
  if ((s.Resource === undefined) === (s.NotResource === undefined))
    throw new Error(`an identity statement needs Resource or NotResource: ${JSON.stringify(s)}`);
  const action =
    s.Action !== undefined
      ? list(s.Action).some((a) => actionMatches(a, request.action))
      : !list(s.NotAction).some((a) => actionMatches(a, request.action));
  const resource =
    s.Resource !== undefined
      ? list(s.Resource).some((r) => resourceMatches(r, request.resource))
      : !list(s.NotResource).some((r) => resourceMatches(r, request.resource));
  return action && resource && conditionHolds(s.Condition, request.context ?? {});
}

/** The decision of a role's identity policies (every statement of every document) on one request. */
export function evaluate(statements: IamStatement[], request: IamRequest): Decision {
  const applying = statements.filter((s) => statementApplies(s, request));
  if (applying.some((s) => s.Effect === "Deny")) return "ExplicitDeny";
  return applying.some((s) => s.Effect === "Allow") ? "Allow" : "ImplicitDeny";
}

/** Asserts the evaluator's decision for each request: "Allow", or "Deny" (explicit or implicit). */
export function expectDecision(statements: IamStatement[], decision: "Allow" | "Deny", requests: IamRequest[]): void {
  for (const q of requests) {
    const got = evaluate(statements, q);
    assert.strictEqual(
      got === "Allow" ? "Allow" : "Deny",
      decision,
      `${q.action} on ${q.resource} ${JSON.stringify(q.context ?? {})}: ${got}`,
    );
  }
}

/** Who makes a request to a resource: a role (its ARN) or a service principal. */
export type Caller = { role: string } | { service: string };

function principalMatches(principal: unknown, caller: Caller): boolean {
  if (principal === "*") return true;
  if (typeof principal !== "object" || principal === null)
    throw new Error(`the evaluator does not know the principal ${JSON.stringify(principal)}`);
  const p = principal as { AWS?: string | string[]; Service?: string | string[] };
  const aws = list(p.AWS);
  if (aws.includes("*")) return true;
  return "role" in caller ? aws.includes(caller.role) : list(p.Service).includes(caller.service);
}

/** The decision of a resource policy on one request by `caller` (a statement without Principal throws). */
export function evaluateResourcePolicy(statements: IamStatement[], caller: Caller, request: IamRequest): Decision {
  const applying = statements.filter((s) => {
    if (s.Principal === undefined) throw new Error(`a resource policy statement needs Principal: ${JSON.stringify(s)}`);
    return principalMatches(s.Principal, caller) && statementApplies(s, request);
  });
  if (applying.some((s) => s.Effect === "Deny")) return "ExplicitDeny";
  return applying.some((s) => s.Effect === "Allow") ? "Allow" : "ImplicitDeny";
}
