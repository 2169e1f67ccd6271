/**
 * Queue guards: the stack's queues are dead-letter queues, and a dead letter is acted on (redrive turns the send
 * queue's into schedules; the recorder's are opt-outs to record). Without a queue policy any principal of the account
 * whose own policy allows sqs:SendMessage can plant a message, so every queue has one policy that accepts messages
 * only from the stack's writers: a Deny of sqs:SendMessage to everyone else, excepting only the stack's roles
 * (aws:PrincipalArn) and services acting for a named resource (aws:SourceArn, aws:SourceAccount); Allows only for
 * services with those conditions or for the stack's roles; and no writer of the stack locked out (a role whose own
 * policy sends to the queue, a rule whose target dead-letters into it).
 */
import { PolicyResource, StackValidationPolicy } from "@pulumi/policy";
import { EVENTS_SERVICE } from "../infra/core/plan/naming";
import { quote, roleStatements } from "./function-roles";
import {
  allowedActions,
  conditionValues,
  describeStatement,
  parseDocument,
  Statement,
  wildcardMatch,
} from "./iam-document";
import { accountPinning, isEveryone, pinnedAccount } from "./iam";
import { EVENT_RULE, EVENT_TARGET, QUEUE, QUEUE_POLICY, ROLE } from "./resource-types";

const SEND = "sqs:SendMessage";
/** The operators of a Deny's exceptions: "deny unless the caller is one of these". */
const EXCEPTING = ["arnnotequals", "arnnotlike", "stringnotequals", "stringnotlike"];
const EXCEPTION_KEYS = ["aws:principalarn", "aws:sourcearn", "aws:sourceaccount"];
const WILDCARD = /[*?]/;
const ADD_DENY = `add {"Effect": "Deny", "Principal": "*", "Action": "${SEND}", "Resource": "<queue ARN>", "Condition": {"ArnNotEquals": {"aws:PrincipalArn": [<the stack's roles that write it>]}}}`;

/** A queue and what the checks need to know about the stack around it. */
interface Context {
  queue: PolicyResource;
  arn: string;
  resources: PolicyResource[];
  stackRoles: string[];
}

/** A queue's policies: QueuePolicy resources naming its URL (or depending on it), and its own `policy` if different. */
function policiesOf(resources: PolicyResource[], queue: PolicyResource) {
  const url = queue.props.url ?? queue.props.id;
  const separate = resources
    .filter(
      (r) =>
        r.type === QUEUE_POLICY &&
        ((url !== undefined && r.props.queueUrl === url) ||
          (r.propertyDependencies?.queueUrl ?? []).some((d) => d.urn === queue.urn)),
    )
    .map((r) => ({ resource: r, where: `QueuePolicy "${r.name}"`, document: r.props.policy as unknown }));
  // After a refresh the provider reports a QueuePolicy's document as the queue's own `policy` too: the same one.
  const same = (a: unknown, b: unknown) => JSON.stringify(parseDocument(a)) === JSON.stringify(parseDocument(b));
  const own = queue.props.policy;
  return own && !separate.some((p) => same(p.document, own))
    ? [...separate, { resource: queue, where: `Queue "${queue.name}" policy`, document: own as unknown }]
    : separate;
}

/** What is wrong with an Allow that lets someone send to the queue. */
function allowProblem(s: Statement, c: Context): string | undefined {
  if (s.notPrincipal !== undefined) return "uses NotPrincipal, which lets everyone it does not list send to it";
  if (isEveryone(s.principal))
    return `lets ${JSON.stringify(s.principal)} send to it: name a service (with aws:SourceArn or aws:SourceAccount) or the stack's roles`;
  const p = (s.principal ?? {}) as Record<string, unknown>;
  const others = [p.AWS ?? []]
    .flat()
    .map(String)
    .filter((a) => !c.stackRoles.includes(a));
  if (others.length)
    return `lets ${quote(others)} send to it, which ${others.length > 1 ? "are not roles" : "is not a role"} of this stack`;
  const foreign = Object.keys(p).filter((k) => k !== "AWS" && k !== "Service");
  if (foreign.length) return `lets ${JSON.stringify(s.principal)} send to it: name a service or the stack's roles`;
  if (p.Service !== undefined && !accountPinning(s).pinned)
    return `lets ${JSON.stringify({ Service: p.Service })} send to it without aws:SourceArn or aws:SourceAccount naming one account`;
  return undefined;
}

/** Whether a Deny refuses sqs:SendMessage on the queue to everyone (its exceptions aside). */
function deniesEveryone(s: Statement, queueArn: string): boolean {
  if (s.effect !== "Deny" || !isEveryone(s.principal)) return false;
  const action = s.notActions
    ? !s.notActions.some((a) => wildcardMatch(a, SEND))
    : (s.actions ?? []).some((a) => wildcardMatch(a, SEND));
  const resource = s.notResources
    ? !s.notResources.some((r) => wildcardMatch(r, queueArn))
    : !s.resources || s.resources.some((r) => wildcardMatch(r, queueArn));
  return action && resource;
}

/** What is wrong with a Deny's exceptions: anything but the stack's roles and services for a named resource. */
function exceptionProblems(s: Statement, c: Context): string[] {
  const found: string[] = [];
  for (const [op, block] of Object.entries(s.condition ?? {})) {
    for (const [key, v] of Object.entries(block ?? {})) {
      const k = key.toLowerCase();
      if (!EXCEPTING.includes(op.toLowerCase()) || !EXCEPTION_KEYS.includes(k)) {
        found.push(
          `denies only when ${op} ${key} also holds: a Deny of other writers may except only by aws:PrincipalArn, aws:SourceArn or aws:SourceAccount`,
        );
        continue;
      }
      for (const value of [v].flat().map(String)) {
        if (k === "aws:principalarn" && !c.stackRoles.includes(value))
          found.push(`excepts aws:PrincipalArn "${value}", which is not a role of this stack`);
        if (k === "aws:sourcearn" && (WILDCARD.test(value) || !pinnedAccount(k, "arnequals", value)))
          found.push(`excepts aws:SourceArn "${value}", which does not name one resource of one account`);
        if (k === "aws:sourceaccount" && !pinnedAccount(k, "stringequals", value))
          found.push(`excepts aws:SourceAccount "${value}", which is not one account`);
      }
    }
  }
  return found;
}

/** The values a Deny excepts for `key` (under its negated operators). */
const excepted = (s: Statement, key: string) =>
  conditionValues(s, ["ArnNotEquals", "ArnNotLike", "StringNotEquals", "StringNotLike"], key) ?? [];

/** The stack's writers the queue's Denies refuse: roles whose own policy sends to it, rules that dead-letter into it. */
function lockedOut(statements: Statement[], c: Context): string[] {
  const denies = statements.filter((s) => deniesEveryone(s, c.arn));
  const found: string[] = [];
  for (const role of c.resources.filter((r) => r.type === ROLE && typeof r.props.arn === "string")) {
    const sends = roleStatements(c.resources, role).statements.some(
      ({ statement: s }) =>
        allowedActions(s, [SEND]).length > 0 &&
        (s.notResources
          ? !s.notResources.some((r) => wildcardMatch(r, c.arn))
          : (s.resources ?? []).some((r) => wildcardMatch(r, c.arn))),
    );
    if (sends && denies.some((d) => !excepted(d, "aws:PrincipalArn").includes(role.props.arn)))
      found.push(
        `denies Role "${role.name}", whose own policy allows it to send to the queue: add ${role.props.arn} to the Deny's aws:PrincipalArn`,
      );
  }
  for (const target of c.resources.filter((r) => r.type === EVENT_TARGET && r.props.deadLetterConfig?.arn === c.arn)) {
    const rule = c.resources.find((r) => r.type === EVENT_RULE && r.props.name === target.props.rule);
    const ruleArn = rule?.props.arn;
    if (typeof ruleArn !== "string") continue;
    const allowed = statements.some(
      (s) =>
        s.effect === "Allow" &&
        allowedActions(s, [SEND]).length > 0 &&
        [(s.principal as { Service?: unknown })?.Service].flat().includes(EVENTS_SERVICE) &&
        (conditionValues(s, ["ArnEquals", "ArnLike"], "aws:SourceArn") ?? []).some((v) => wildcardMatch(v, ruleArn)),
    );
    if (!allowed || denies.some((d) => !excepted(d, "aws:SourceArn").includes(ruleArn)))
      found.push(
        `does not let EventBridge dead-letter for rule "${rule!.name}" (EventTarget "${target.name}"): allow ${EVENTS_SERVICE} with aws:SourceArn ${ruleArn}, and except it from the Deny`,
      );
  }
  return found;
}

/** Everything wrong with one policy of the queue. */
function policyProblems(statements: Statement[], c: Context): string[] {
  const found: string[] = [];
  statements.forEach((s, i) => {
    const label = describeStatement(s, i);
    if (s.effect === "Allow" && allowedActions(s, [SEND]).length) {
      const p = allowProblem(s, c);
      if (p) found.push(`${label} ${p}`);
    }
    if (deniesEveryone(s, c.arn)) found.push(...exceptionProblems(s, c).map((p) => `${label} ${p}`));
  });
  if (!statements.some((s) => deniesEveryone(s, c.arn)))
    found.push(`has no statement that denies ${SEND} to every other principal: ${ADD_DENY}`);
  return [...found, ...lockedOut(statements, c)];
}

export const queuePolicyStackOnly: StackValidationPolicy = {
  name: "queue-policy-stack-only",
  description:
    "Every SQS queue has one policy that denies sqs:SendMessage to every principal but the stack's roles (aws:PrincipalArn) and services for a named resource (aws:SourceArn, aws:SourceAccount), allows only those, and locks none of the stack's writers out.",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    const stackRoles = args.resources
      .filter((r) => r.type === ROLE)
      .map((r) => r.props.arn)
      .filter((a): a is string => typeof a === "string");
    for (const queue of args.resources.filter((r) => r.type === QUEUE)) {
      const label = `Queue "${queue.name}"`;
      const policies = policiesOf(args.resources, queue);
      if (!policies.length)
        report(
          `${label} has no queue policy, so any principal of the account allowed ${SEND} can put a message in it: add one aws.sqs.QueuePolicy that denies ${SEND} to every principal but the stack's roles that write it (aws:PrincipalArn) and the services it names by aws:SourceArn`,
          queue.urn,
        );
      if (policies.length > 1)
        report(
          `${label} has ${policies.length} queue policies (${policies.map((p) => p.where).join(", ")}): SQS keeps one, the last written: make them one`,
          queue.urn,
        );
      if (typeof queue.props.arn !== "string") continue;
      const c: Context = { queue, arn: queue.props.arn, resources: args.resources, stackRoles };
      for (const p of policies) {
        const statements = parseDocument(p.document);
        // A document not known yet (a preview of a new stack) is checked at the next preview.
        if (!statements) continue;
        for (const problem of policyProblems(statements, c))
          report(`${p.where} (queue "${queue.name}") ${problem}`, p.resource.urn);
      }
    }
  },
};
