/**
 * The SES opt-out recorder (infra/ses-opt-outs.ts): the function an EventBridge rule on SES's events invokes to record
 * opt-outs made through SES in the opt-out table the bulk sender reads. It is not public, but it writes the table
 * that decides who bulk sends skip, so its role is held to what recording takes, as the public endpoint's is
 * (public-endpoints.ts): an allow-list of actions on named resources.
 */
import { PolicyResource, StackValidationPolicy } from "@pulumi/policy";
import { OPT_OUT_WRITE_ACTIONS } from "../infra/rules/unsubscribe-endpoint";
import { SES_EVENT_SOURCE, SES_OPT_OUT_HANDLER_NAME } from "../infra/rules/ses-subscription";
import { describeStatement, Statement } from "./iam-document";
import { LOG_STREAMS, quote, roleOfFunction, roleStatements } from "./function-roles";

const FUNCTION = "aws:lambda/function:Function";
const RULE = "aws:cloudwatch/eventRule:EventRule";
const TARGET = "aws:cloudwatch/eventTarget:EventTarget";

/** Every action the recorder may hold: record, keep a failed event, log, use the table's key. */
const ALLOWED_ACTIONS = [
  ...OPT_OUT_WRITE_ACTIONS,
  "sqs:SendMessage",
  "logs:CreateLogStream",
  "logs:PutLogEvents",
  "kms:GenerateDataKey",
  "kms:Decrypt",
];
/** A table named in full (no index, no wildcard). */
const TABLE_ARN = /^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/[A-Za-z0-9_.-]+$/;

/** Functions that handle SES's events: the recorder's entry point, or the target of a rule on source aws.ses. */
function recorders(resources: PolicyResource[]): PolicyResource[] {
  const sesRules = resources
    .filter((r) => r.type === RULE && matchesSes(r.props.eventPattern))
    .map((r) => r.props.name);
  const targeted = resources
    .filter((r) => r.type === TARGET && sesRules.includes(r.props.rule))
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

/** What is wrong with one statement of the recorder's role, if anything. */
function problems(s: Statement): string[] {
  if (s.effect !== "Allow") return [];
  if (s.notActions) return ["uses NotAction: name the actions"];
  if (s.notResources) return ["uses NotResource: name the resources"];
  const found: string[] = [];
  const other = (s.actions ?? []).filter((a) => !ALLOWED_ACTIONS.some((x) => x.toLowerCase() === a.toLowerCase()));
  if (other.length) found.push(`allows ${other.join(", ")}: the recorder may only ${ALLOWED_ACTIONS.join(", ")}`);
  const resources = s.resources ?? [];
  if (!resources.length) found.push("names no resource");
  const wild = resources.filter((r) => /[*?]/.test(r) && !LOG_STREAMS.test(r));
  if (wild.length) found.push(`has the wildcard resource ${quote(wild)}: name each resource`);
  const dynamo = (s.actions ?? []).some((a) => a.toLowerCase().startsWith("dynamodb:"));
  const notTables = resources.filter((r) => !TABLE_ARN.test(r) && !wild.includes(r));
  if (dynamo && notTables.length) found.push(`allows DynamoDB on ${quote(notTables)}: name the opt-out table`);
  return found;
}

export const sesOptOutRecorderRoleMinimal: StackValidationPolicy = {
  name: "ses-opt-out-recorder-role-minimal",
  description:
    "The function that records SES's opt-outs (SUBSCRIPTION events) in the opt-out table may only dynamodb:UpdateItem a named table, send to its dead-letter queue, log and use a KMS key; no SES action, no wildcard resource.",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    for (const fn of recorders(args.resources)) {
      const role = roleOfFunction(args.resources, fn);
      if (!role) continue;
      for (const { resource, doc, statement, index } of roleStatements(args.resources, role))
        for (const p of problems(statement))
          report(
            `${doc.where} ${describeStatement(statement, index)} (role of the SES opt-out recorder "${fn.props.name ?? fn.name}") ${p}${doc.hint ?? ""}`,
            resource.urn,
          );
    }
  },
};
