/**
 * The SES opt-out recorder (infra/ses-opt-outs.ts): the function an EventBridge rule on SES's events invokes to record
 * opt-outs made through SES in the opt-out table the sender reads. It is not public, but it writes the table
 * that decides who bulk sends skip, so its role is held to what recording takes, as the public endpoint's is
 * (public-endpoints.ts, one mechanism: function-roles.ts): update its opt-out table, keep a failed event in its
 * on-failure destination, use the table's key, write its logs; its role trusts only Lambda.
 */
import { PolicyResource, StackValidationPolicy } from "@pulumi/policy";
import { KMS_KEY_USE_ACTIONS } from "../infra/core/plan/naming";
import { OPT_OUT_WRITE_ACTIONS } from "../infra/core/consent/unsubscribe-endpoint";
import { SES_EVENT_SOURCE, SES_OPT_OUT_HANDLER_NAME } from "../infra/core/consent/ses-subscription";
import { arnsOf, checkFunctionRole, configuredResources, failureDestinations, Grant, logGrant } from "./function-roles";
import { EVENT_RULE, EVENT_TARGET, FUNCTION, TABLE } from "./resource-types";

/** Functions that handle SES's events: the recorder's entry point, or the target of a rule on source aws.ses. */
function recorders(resources: PolicyResource[]): PolicyResource[] {
  const sesRules = resources
    .filter((r) => r.type === EVENT_RULE && matchesSes(r.props.eventPattern))
    .map((r) => r.props.name);
  const targeted = resources
    .filter((r) => r.type === EVENT_TARGET && sesRules.includes(r.props.rule))
    .map((r) => String(r.props.arn ?? ""));
  return resources.filter(
    (r) =>
      r.type === FUNCTION &&
      (r.props.handler === SES_OPT_OUT_HANDLER_NAME ||
        targeted.some((a) => a && a.split(":").slice(0, 7).join(":") === r.props.arn)),
  );
}

function matchesSes(pattern: unknown): boolean {
  try {
    const p = typeof pattern === "string" ? JSON.parse(pattern) : pattern;
    return Array.isArray(p?.source) && p.source.includes(SES_EVENT_SOURCE);
  } catch {
    return false;
  }
}

/** What the recorder may do: update the table its configuration names, keep failed events, use the key, log. */
function allowList(resources: PolicyResource[], fn: PolicyResource): Grant[] {
  const tables = configuredResources(resources, fn, TABLE);
  const keys = tables
    .map((t) => t.props.serverSideEncryption?.kmsKeyArn)
    .filter((k): k is string => typeof k === "string" && k.startsWith("arn:"));
  const grants: Grant[] = [
    { actions: OPT_OUT_WRITE_ACTIONS, resources: arnsOf(tables), what: "its opt-out table" },
    { actions: ["sqs:SendMessage"], resources: failureDestinations(resources, fn), what: "its on-failure destination" },
    logGrant(resources, fn),
  ];
  if (keys.length)
    grants.push({ actions: KMS_KEY_USE_ACTIONS, resources: [...new Set(keys)], what: "its table's key" });
  return grants;
}

export const sesOptOutRecorderRoleMinimal: StackValidationPolicy = {
  name: "ses-opt-out-recorder-role-minimal",
  description:
    "The function that records SES's opt-outs (SUBSCRIPTION events) holds an allow-list: dynamodb:UpdateItem on its opt-out table, sqs:SendMessage to its on-failure destination, its table's KMS key, its logs; its role trusts only Lambda.",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    for (const fn of recorders(args.resources))
      checkFunctionRole(args.resources, fn, "the SES opt-out recorder", allowList(args.resources, fn), report);
  },
};
