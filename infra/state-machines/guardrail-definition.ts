/**
 * The guardrails' two small EXPRESS state machines (Amazon States Language, JSONata; no Lambda):
 * - **arm**: started by the EventBridge rule on the fan-out's executions (status RUNNING, i.e. every launch), it puts
 *   the campaign's two alarms (bounce and complaint rates, infra/core/send/guardrails.ts) with PutMetricAlarm, then,
 *   when the launch says when its campaign is over (the execution input's `cleanup_at`), a one-time Scheduler
 *   schedule in the stack's alarm clean-up group that deletes those two alarms (a universal target,
 *   cloudwatch:deleteAlarms) once the last send and the guardrail window have passed (alarmDeletionAt).
 *   Input: the "Step Functions Execution Status Change" event; the campaign's tag is in the execution's input.
 * - **pause**: started by the EventBridge rule on the guardrail alarms' state changes (state ALARM). A campaign's
 *   alarm pauses that campaign; the account's reputation alarm pauses every campaign that has alarms (DescribeAlarms
 *   by the campaigns' alarm-name prefix, page by page). Each pause is the state write pause-campaign makes
 *   (scripts/lib/aws/campaign-state.ts): `campaign#<tag>` set `paused` with `updated_at` and the reason, on the
 *   condition that it is live (absent or `live`): a cancelled campaign is never overwritten, and an operator's own
 *   pause keeps its reason.
 * Pure: parameters in, ASL object out.
 */
import {
  accountPauseReason,
  campaignAlarmName,
  campaignAlarmRequest,
  campaignPauseReason,
  Guardrails,
  GUARDRAIL_KINDS,
  guardrailAlarmPrefix,
} from "../core/send/guardrails";
import { CAMPAIGN_STATE_ATTRIBUTES as A, campaignStateKey, LEDGER_KEY } from "../core/send/ledger";
import { BUSY_CALL_SECONDS } from "../core/send/sender-contract";
import { scheduler } from "../core/plan/quotas";

export interface GuardrailParameters {
  stack: string;
  guardrails: Guardrails;
  /** The occurrence ledger, which holds every campaign's state. */
  ledgerTableName: string;
  /** The alarm topic: each alarm notifies it. */
  topicArn: string;
  /**
   * Where the arm machine schedules each campaign's alarm deletion, and the role Scheduler runs it as (it may delete
   * the stack's campaign alarms only). Absent: no deletion scheduled (the alarms stay until cancel-campaign).
   */
  alarmCleanup?: { partition: string; groupName: string; roleArn: string; deadLetterQueueArn: string };
}

/** A throttled or timed-out call is retried (it changed nothing, or the retry writes the same); a failed condition is not. */
const RETRY = [
  {
    ErrorEquals: [
      "States.Timeout",
      "DynamoDB.ThrottlingException",
      "DynamoDB.ProvisionedThroughputExceededException",
      "DynamoDB.InternalServerErrorException",
      "CloudWatch.ThrottlingException",
      "CloudWatch.LimitExceededException",
      "Scheduler.ThrottlingException",
      "Scheduler.InternalServerException",
    ],
    IntervalSeconds: 1,
    BackoffRate: 2,
    MaxAttempts: 3,
  },
];

const task = (resource: string, args: unknown, next: string | undefined, extra: Record<string, unknown> = {}) => ({
  Type: "Task",
  Resource: resource,
  Arguments: args,
  TimeoutSeconds: BUSY_CALL_SECONDS,
  Retry: RETRY,
  ...(next ? { Next: next } : { End: true }),
  ...extra,
});

/** The arm machine: two PutMetricAlarm calls for the launched campaign, then its alarms' deletion scheduled. */
export function guardrailArmDefinition(p: GuardrailParameters): Record<string, unknown> {
  const [bounce, complaint] = GUARDRAIL_KINDS.map((k) =>
    withTag(campaignAlarmRequest(p.stack, p.guardrails, k.kind, "<tag>", p.topicArn), k.kind, p.stack),
  );
  const put = "arn:aws:states:::aws-sdk:cloudwatch:putMetricAlarm";
  return {
    Comment:
      "sendtime guardrails: puts a launched campaign's bounce and complaint alarms, and schedules their deletion",
    QueryLanguage: "JSONata",
    StartAt: "PutBounceAlarm",
    States: {
      PutBounceAlarm: task(put, bounce, "PutComplaintAlarm", { Output: "{% $states.input %}" }),
      ...(p.alarmCleanup
        ? {
            PutComplaintAlarm: task(put, complaint, "IsOverKnown", { Output: "{% $states.input %}" }),
            ...alarmDeletionStates(p, p.alarmCleanup),
          }
        : { PutComplaintAlarm: task(put, complaint, undefined) }),
    },
  };
}

/**
 * When a campaign's alarms may go: its last send (and that send's flexible window) is the housekeeping instant
 * (`cleanup_at`, fanout-definition.ts cleanupAt) less Scheduler's longest retry of a send, which it adds; the window
 * after it lets the last sends' bounces and complaints still pause the campaign (a held send redriven later is no
 * longer guarded). As a JSONata expression of `cleanup_at` (UTC, `YYYY-MM-DDTHH:MM:SS`), in at()'s format.
 */
export function alarmDeletionAt(cleanupAtExpr: string, windowSeconds: number): string {
  const shift = (windowSeconds - scheduler.maxEventAgeSeconds.max) * 1000;
  return `$fromMillis($toMillis(${cleanupAtExpr} & 'Z') + ${shift}, '[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01]')`;
}

/** Minutes Scheduler may spread an alarm deletion over. */
export const ALARM_DELETION_WINDOW_MINUTES = 15;

/** IsOverKnown → ScheduleAlarmDeletion (CreateSchedule; on a re-launch UpdateSchedule, the same request). */
function alarmDeletionStates(p: GuardrailParameters, c: NonNullable<GuardrailParameters["alarmCleanup"]>) {
  const launch = "$parse($states.input.detail.input)";
  const names = GUARDRAIL_KINDS.map((k) => `'${campaignAlarmName(p.stack, k.kind, "")}' & ${launch}.campaign_tag`);
  const request = {
    Name: `{% ${launch}.campaign_tag %}`,
    GroupName: c.groupName,
    ScheduleExpression: `{% 'at(' & ${alarmDeletionAt(`${launch}.cleanup_at`, p.guardrails.windowSeconds)} & ')' %}`,
    ScheduleExpressionTimezone: "UTC",
    // Scheduler may spread it over 15 minutes (its cost is per hour: nothing to gain by more precision).
    FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: ALARM_DELETION_WINDOW_MINUTES },
    ActionAfterCompletion: "DELETE",
    Target: {
      Arn: `arn:${c.partition}:scheduler:::aws-sdk:cloudwatch:deleteAlarms`,
      RoleArn: c.roleArn,
      Input: `{% $string({'AlarmNames': [${names.join(", ")}]}) %}`,
      RetryPolicy: { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 },
      DeadLetterConfig: { Arn: c.deadLetterQueueArn },
    },
  };
  const scheduler = (action: string) => `arn:aws:states:::aws-sdk:scheduler:${action}`;
  return {
    IsOverKnown: {
      Type: "Choice",
      Choices: [{ Condition: `{% $exists(${launch}.cleanup_at) %}`, Next: "ScheduleAlarmDeletion" }],
      Default: "Armed",
    },
    ScheduleAlarmDeletion: task(scheduler("createSchedule"), request, "Armed", {
      Catch: [
        { ErrorEquals: ["Scheduler.ConflictException"], Next: "MoveAlarmDeletion", Output: "{% $states.input %}" },
      ],
    }),
    // A re-launch: the same schedule, at the new plan's end.
    MoveAlarmDeletion: task(scheduler("updateSchedule"), request, "Armed"),
    Armed: { Type: "Succeed" },
  };
}

/** The request with the campaign's tag taken from the event, in the alarm name and the metrics' dimension. */
function withTag(request: ReturnType<typeof campaignAlarmRequest>, kind: string, stack: string) {
  const tagExpr = "$parse($states.input.detail.input).campaign_tag";
  const prefix = campaignAlarmName(stack, kind as "bounce", "");
  const metrics = request.Metrics.map((m: any) =>
    m.MetricStat
      ? {
          ...m,
          MetricStat: {
            ...m.MetricStat,
            Metric: { ...m.MetricStat.Metric, Dimensions: [{ Name: "campaign", Value: `{% ${tagExpr} %}` }] },
          },
        }
      : m,
  );
  return { ...request, AlarmName: `{% '${prefix}' & ${tagExpr} %}`, Metrics: metrics };
}

const S = {
  isAlarm: "IsAlarm",
  whose: "WhoseAlarm",
  pauseOne: "PauseCampaign",
  listArmed: "ListArmedCampaigns",
  pauseEach: "PauseEachCampaign",
  morePages: "MorePages",
  done: "Done",
} as const;

/** The pause machine: one campaign on its own alarm, every armed campaign on the account's. */
export function guardrailPauseDefinition(p: GuardrailParameters): Record<string, unknown> {
  const prefix = guardrailAlarmPrefix(p.stack);
  const campaignPrefix = `${prefix}campaign-`;
  const name = "$states.context.Execution.Input.detail.alarmName";
  // `<prefix>campaign-<kind>-<tag>`: the kind has no `-`, the tag follows the first `-` after it.
  const rest = `$substringAfter(${name}, '${campaignPrefix}')`;
  const kindOf = `$substringBefore(${rest}, '-')`;
  const reasons = (f: (k: (typeof GUARDRAIL_KINDS)[number]["kind"]) => string) =>
    `{${GUARDRAIL_KINDS.map((k) => `'${k.kind}': ${jsonataString(f(k.kind))}`).join(", ")}}`;
  const campaignReason = `$lookup(${reasons((k) => campaignPauseReason(p.guardrails, k))}, ${kindOf})`;
  const accountKind = `$substringAfter(${name}, '${prefix}account-')`;
  const accountReason = `$lookup(${reasons((k) => accountPauseReason(p.guardrails, k))}, ${accountKind})`;
  const bouncePrefix = campaignAlarmName(p.stack, "bounce", "");
  return {
    Comment: "sendtime guardrails: pauses a campaign (or every campaign) when its guardrail alarm fires",
    QueryLanguage: "JSONata",
    StartAt: S.isAlarm,
    States: {
      [S.isAlarm]: {
        Type: "Choice",
        Choices: [
          {
            Condition: `{% $states.input.detail.state.value = 'ALARM' and ${startsWith(name, prefix)} %}`,
            Next: S.whose,
          },
        ],
        Default: S.done,
      },
      [S.whose]: {
        Type: "Choice",
        Choices: [{ Condition: `{% ${startsWith(name, campaignPrefix)} %}`, Next: S.pauseOne }],
        Default: S.listArmed,
      },
      [S.pauseOne]: pauseTask(p, `$substringAfter(${rest}, '-')`, campaignReason, S.done),
      [S.listArmed]: task(
        "arn:aws:states:::aws-sdk:cloudwatch:describeAlarms",
        // Arguments as one expression: the first page has no NextToken (no field, rather than an undefined one).
        `{% $merge([{'AlarmNamePrefix': ${jsonataString(bouncePrefix)}, 'AlarmTypes': ['MetricAlarm']}, $exists($states.input.next_token) ? {'NextToken': $states.input.next_token} : {}]) %}`,
        S.pauseEach,
        {
          // The last page has no NextToken: the key is then absent, and the loop ends.
          Output: `{% {'armed': [$states.result.MetricAlarms.AlarmName], 'next_token': $states.result.NextToken} %}`,
        },
      ),
      [S.pauseEach]: {
        Type: "Map",
        Items: "{% $states.input.armed %}",
        ItemSelector: `{% {'tag': $substringAfter($states.context.Map.Item.Value, '${bouncePrefix}'), 'reason': ${accountReason}} %}`,
        MaxConcurrency: 10,
        ItemProcessor: {
          ProcessorConfig: { Mode: "INLINE" },
          StartAt: "PauseArmed",
          States: {
            PauseArmed: pauseTask(p, "$states.input.tag", "$states.input.reason", "Paused"),
            Paused: { Type: "Succeed" },
          },
        },
        Output: "{% $states.input %}",
        Next: S.morePages,
      },
      [S.morePages]: {
        Type: "Choice",
        Choices: [{ Condition: "{% $exists($states.input.next_token) %}", Next: S.listArmed }],
        Default: S.done,
      },
      [S.done]: { Type: "Succeed" },
    },
  };
}

/**
 * The state write pause-campaign makes, conditional on the campaign being live: a failed condition (cancelled, or
 * paused already) is not an error, the item stays as it is.
 */
function pauseTask(p: GuardrailParameters, tagExpr: string, reasonExpr: string, next: string) {
  const reason = `{% ${reasonExpr} & ' (alarm ' & $states.context.Execution.Input.detail.alarmName & ')' %}`;
  return task(
    "arn:aws:states:::dynamodb:updateItem",
    {
      TableName: p.ledgerTableName,
      Key: { [LEDGER_KEY]: { S: `{% '${campaignStateKey("")}' & ${tagExpr} %}` } },
      // The pause is appended to the campaign's history too (campaign-report lists the pauses with their times).
      UpdateExpression:
        "SET #state = :state, #at = :at, #reason = :reason, #history = list_append(if_not_exists(#history, :none), :change)",
      ConditionExpression: "attribute_not_exists(#state) OR #state = :live",
      ExpressionAttributeNames: { "#state": A.state, "#at": A.updatedAt, "#reason": A.reason, "#history": A.history },
      ExpressionAttributeValues: {
        ":state": { S: "paused" },
        ":live": { S: "live" },
        ":at": { S: "{% $now() %}" },
        ":reason": { S: reason },
        ":none": { L: [] },
        // Its own $now(): within a millisecond or so of updated_at's.
        ":change": { L: [{ M: { state: { S: "paused" }, at: { S: "{% $now() %}" }, reason: { S: reason } } }] },
      },
    },
    next,
    {
      Output: "{% $states.input %}",
      Catch: [{ ErrorEquals: ["DynamoDB.ConditionalCheckFailedException"], Next: next, Output: "{% $states.input %}" }],
    },
  );
}

/** JSONata has no $startsWith: the string's first characters compared. */
const startsWith = (expr: string, prefix: string) =>
  `$substring(${expr}, 0, ${prefix.length}) = ${jsonataString(prefix)}`;

/** A JSONata string literal (JSONata's strings take JSON's escapes). */
const jsonataString = (s: string): string => JSON.stringify(s);
