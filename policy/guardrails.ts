/**
 * Guardrails wired to the pause: a stack with guardrail alarms (`sendtime-<stack>-guardrail-…`) must route their ALARM
 * state changes to a state machine that sets the campaign paused in the ledger, and must put each launched campaign's
 * alarms (a rule on the fan-out's starts to a state machine that calls PutMetricAlarm). An alarm nobody listens to
 * only emails: the campaign keeps sending.
 */
import { PolicyResource, StackValidationPolicy } from "@pulumi/policy";

const ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm";
const RULE = "aws:cloudwatch/eventRule:EventRule";
const TARGET = "aws:cloudwatch/eventTarget:EventTarget";
const MACHINE = "aws:sfn/stateMachine:StateMachine";
const GUARDRAIL_ALARM = /^sendtime-.+-guardrail-/;

const parse = (text: unknown): any => {
  try {
    return typeof text === "string" ? JSON.parse(text) : text;
  } catch {
    return undefined;
  }
};

/** Every Task of a definition, in Maps too. */
function tasks(states: Record<string, any> | undefined): any[] {
  return Object.values(states ?? {}).flatMap((s: any) =>
    s?.Type === "Task" ? [s] : s?.Type === "Map" ? tasks(s.ItemProcessor?.States ?? s.Iterator?.States) : [],
  );
}

/** Whether a definition sets a ledger item `paused`, on a condition (so a cancelled campaign is never overwritten). */
function setsPaused(machine: PolicyResource): boolean {
  return tasks(parse(machine.props.definition)?.States).some(
    (t) =>
      /:states:::(aws-sdk:)?dynamodb:updateItem$/.test(String(t.Resource)) &&
      t.Arguments?.ExpressionAttributeValues?.[":state"]?.S === "paused" &&
      typeof t.Arguments?.ConditionExpression === "string",
  );
}

const putsAlarms = (machine: PolicyResource) =>
  tasks(parse(machine.props.definition)?.States).some((t) =>
    /:states:::aws-sdk:cloudwatch:putMetricAlarm$/.test(String(t.Resource)),
  );

/** The state machines the rule's targets start. */
function targetsOf(rule: PolicyResource, resources: PolicyResource[]): PolicyResource[] {
  const arns = resources
    .filter((r) => r.type === TARGET && r.props.rule !== undefined && r.props.rule === rule.props.name)
    .map((t) => t.props.arn);
  return resources.filter((r) => r.type === MACHINE && r.props.arn !== undefined && arns.includes(r.props.arn));
}

/** Whether a rule's pattern takes `name`'s ALARM state changes. */
function matchesAlarm(rule: PolicyResource, name: string): boolean {
  const p = parse(rule.props.eventPattern);
  if (!p?.source?.includes("aws.cloudwatch") || !p["detail-type"]?.includes("CloudWatch Alarm State Change"))
    return false;
  const states = p.detail?.state?.value;
  if (states !== undefined && !states.includes("ALARM")) return false;
  const names = p.detail?.alarmName;
  if (names === undefined) return true;
  return names.some((n: any) => n === name || (typeof n?.prefix === "string" && name.startsWith(n.prefix)));
}

function isLaunchRule(rule: PolicyResource): boolean {
  const p = parse(rule.props.eventPattern);
  return (
    p?.source?.includes("aws.states") &&
    p["detail-type"]?.includes("Step Functions Execution Status Change") &&
    (p.detail?.status === undefined || p.detail.status.includes("RUNNING"))
  );
}

export const guardrailAlarmsWiredToPause: StackValidationPolicy = {
  name: "guardrail-alarms-wired-to-pause",
  description:
    "Every guardrail alarm's ALARM state change reaches a state machine that sets the campaign paused (a conditional ledger write), and every launch puts its campaign's alarms: an alarm nobody acts on lets the campaign keep sending.",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    const alarms = args.resources.filter((r) => r.type === ALARM && GUARDRAIL_ALARM.test(String(r.props.name ?? "")));
    if (!alarms.length) return;
    const rules = args.resources.filter((r) => r.type === RULE);
    for (const alarm of alarms) {
      const name = String(alarm.props.name);
      const routed = rules.filter((r) => matchesAlarm(r, name));
      if (!routed.some((r) => targetsOf(r, args.resources).some(setsPaused)))
        report(
          `MetricAlarm "${alarm.name}" (${name}) is a guardrail alarm, but no EventBridge rule routes its ALARM state changes to a state machine that sets the campaign paused: add a rule on "CloudWatch Alarm State Change" for its name whose target makes the pause's conditional UpdateItem`,
          alarm.urn,
        );
    }
    const armed = rules.filter(isLaunchRule).some((r) => targetsOf(r, args.resources).some(putsAlarms));
    if (!armed)
      report(
        `the stack has guardrail alarms but no rule on the fan-out's starts ("Step Functions Execution Status Change", RUNNING) to a state machine that puts each campaign's alarms (PutMetricAlarm): no campaign would be watched`,
      );
  },
};
