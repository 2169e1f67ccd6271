/**
 * Public endpoint guards: a Lambda function behind a function URL with authorization NONE (the one-click unsubscribe
 * endpoint) can be invoked by anyone on the internet, so its role holds an allow-list of what opting out takes (what
 * infra/handlers/unsubscribe.ts calls): read its signing key's parameter, the three contact calls on its contact list,
 * record in its opt-out table, use the key those are encrypted with, write its logs. Anything else on the role, and a
 * trust that lets anyone but Lambda assume it, is a violation (function-roles.ts).
 */
import { PolicyResource, StackValidationPolicy } from "@pulumi/policy";
import { KMS_KEY_USE_ACTIONS } from "../infra/core/plan/naming";
import {
  OPT_OUT_WRITE_ACTIONS,
  UNSUBSCRIBE_KEY_READ_ACTION,
  UNSUBSCRIBE_SES_ACTIONS,
} from "../infra/core/consent/unsubscribe-endpoint";
import { arnsOf, checkFunctionRole, configuredResources, Grant, logGrant } from "./function-roles";
import { CONTACT_LIST, FUNCTION, FUNCTION_URL, PARAMETER, TABLE } from "./resource-types";

/** The functions behind a URL with authorization NONE. */
function publicFunctions(resources: PolicyResource[]): PolicyResource[] {
  const urls = resources.filter((r) => r.type === FUNCTION_URL && r.props.authorizationType === "NONE");
  return resources.filter(
    (r) => r.type === FUNCTION && urls.some((u) => [r.props.name, r.props.arn].includes(u.props.functionName)),
  );
}

/** What the public function may do: on the stack's resources its configuration names, and its own logs. */
function allowList(resources: PolicyResource[], fn: PolicyResource): Grant[] {
  const parameters = configuredResources(resources, fn, PARAMETER);
  const lists = configuredResources(resources, fn, CONTACT_LIST, (r) => r.props.contactListName);
  const tables = configuredResources(resources, fn, TABLE);
  const keys = [
    ...parameters.map((p) => p.props.keyId),
    ...tables.map((t) => t.props.serverSideEncryption?.kmsKeyArn),
  ].filter((k): k is string => typeof k === "string" && k.startsWith("arn:"));
  const grants: Grant[] = [
    { actions: [UNSUBSCRIBE_KEY_READ_ACTION], resources: arnsOf(parameters), what: "its key parameter" },
    { actions: UNSUBSCRIBE_SES_ACTIONS, resources: arnsOf(lists), what: "its contact list" },
    { actions: OPT_OUT_WRITE_ACTIONS, resources: arnsOf(tables), what: "its opt-out table" },
    logGrant(resources, fn),
  ];
  if (keys.length) grants.push({ actions: KMS_KEY_USE_ACTIONS, resources: [...new Set(keys)], what: "their key" });
  return grants;
}

export const publicFunctionRoleMinimal: StackValidationPolicy = {
  name: "public-function-role-minimal",
  description:
    "A Lambda function behind a function URL with authorization NONE (the unsubscribe endpoint) holds an allow-list: ssm:GetParameter on its key parameter, ses:GetContact, CreateContact, UpdateContact on its contact list, dynamodb:UpdateItem on its opt-out table, their KMS key, its logs; its role trusts only Lambda.",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    for (const fn of publicFunctions(args.resources))
      checkFunctionRole(args.resources, fn, "the public function", allowList(args.resources, fn), report);
  },
};
