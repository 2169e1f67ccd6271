/**
 * Public endpoint guards: a Lambda function behind a function URL with authorization NONE (the one-click unsubscribe
 * endpoint) can be invoked by anyone on the internet, so its role must hold only what opting out takes: contact calls
 * on a named contact list, no sending, no wildcard resources.
 */
import { PolicyResource, StackValidationPolicy } from "@pulumi/policy";
import { UNSUBSCRIBE_SES_ACTIONS } from "../infra/rules/unsubscribe-endpoint";
import {
  allowedActions,
  describeStatement,
  PASS_ROLE,
  SES_SEND_ACTIONS,
  Statement,
  wildcardMatch,
} from "./iam-document";
import { LOG_STREAMS, quote, roleOfFunction, roleStatements } from "./function-roles";

const FUNCTION_URL = "aws:lambda/functionUrl:FunctionUrl";
const FUNCTION = "aws:lambda/function:Function";
/** A contact list named in full: no wildcard in its name, nothing under it. */
const CONTACT_LIST_ARN = /^arn:aws[a-z-]*:ses:[a-z0-9-]+:\d{12}:contact-list\/[A-Za-z0-9_-]+$/;

/** The functions behind a URL with authorization NONE, and the role each runs as. */
function publicFunctions(resources: PolicyResource[]): { fn: PolicyResource; role?: PolicyResource }[] {
  const urls = resources.filter((r) => r.type === FUNCTION_URL && r.props.authorizationType === "NONE");
  const fns = resources.filter(
    (r) => r.type === FUNCTION && urls.some((u) => [r.props.name, r.props.arn].includes(u.props.functionName)),
  );
  return fns.map((fn) => ({
    fn,
    role: roleOfFunction(resources, fn),
  }));
}

/** What is wrong with one statement of a public function's role, if anything. */
function problems(s: Statement): string[] {
  if (s.effect !== "Allow") return [];
  if (s.notActions) return ["uses NotAction: name the actions"];
  if (s.notResources) return ["uses NotResource: name the resources"];
  const found: string[] = [];
  const send = allowedActions(s, SES_SEND_ACTIONS);
  if (send.length) found.push(`allows ${send.join(", ")}: a public endpoint must not send email`);
  if (allowedActions(s, PASS_ROLE).length) found.push("allows iam:PassRole: a public endpoint must not pass roles");
  const ses = (s.actions ?? []).filter((a) => wildcardMatch("ses:*", a));
  const other = ses.filter(
    (a) => !(UNSUBSCRIBE_SES_ACTIONS as readonly string[]).some((x) => x.toLowerCase() === a.toLowerCase()),
  );
  if (other.length && !send.length)
    found.push(`allows ${other.join(", ")}: SES actions are limited to ${UNSUBSCRIBE_SES_ACTIONS.join(", ")}`);
  if (ses.length) {
    const outside = (s.resources ?? []).filter((r) => !CONTACT_LIST_ARN.test(r));
    if (outside.length || !s.resources?.length)
      found.push(
        `allows ${ses.join(", ")} on ${quote(outside.length ? outside : ["(no resource)"])}: name the contact list (arn:aws:ses:<region>:<account>:contact-list/<name>)`,
      );
  }
  const wild = (s.resources ?? []).filter((r) => /[*?]/.test(r) && !LOG_STREAMS.test(r));
  if (wild.length) found.push(`has the wildcard resource ${quote(wild)}: name each resource`);
  return found;
}

export const publicFunctionRoleMinimal: StackValidationPolicy = {
  name: "public-function-role-minimal",
  description:
    "A Lambda function behind a function URL with authorization NONE (the unsubscribe endpoint) may not send email or pass roles; its SES actions are contact calls on a named contact list; no wildcard resources.",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    for (const { fn, role } of publicFunctions(args.resources)) {
      if (!role) continue;
      for (const { resource, doc, statement, index } of roleStatements(args.resources, role))
        for (const p of problems(statement))
          report(
            `${doc.where} ${describeStatement(statement, index)} (role of the public function "${fn.props.name ?? fn.name}") ${p}${doc.hint ?? ""}`,
            resource.urn,
          );
    }
  },
};
