/**
 * The guardrails' two small EXPRESS state machines (Amazon States Language, JSONata; no Lambda):
 * - **arm**: started by the EventBridge rule on the fan-out's executions (status RUNNING, i.e. every launch), it puts
 *   the campaign's two alarms (bounce and complaint rates, infra/core/send/guardrails.ts) with PutMetricAlarm.
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

export interface GuardrailParameters {
  stack: string;
  guardrails: Guardrails;
  /** The occurrence ledger, which holds every campaign's state. */
  ledgerTableName: string;
  /** The alarm topic: each alarm notifies it. */
  topicArn: string;
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

/** The arm machine: two PutMetricAlarm calls for the launched campaign. */
export function guardrailArmDefinition(p: GuardrailParameters): Record<string, unknown> {
  const [bounce, complaint] = GUARDRAIL_KINDS.map((k) =>
    withTag(campaignAlarmRequest(p.stack, p.guardrails, k.kind, "<tag>", p.topicArn), k.kind, p.stack),
  );
  return {
    Comment: "sendtime guardrails: puts a launched campaign's bounce and complaint alarms",
    QueryLanguage: "JSONata",
    StartAt: "PutBounceAlarm",
    States: {
      PutBounceAlarm: task("arn:aws:states:::aws-sdk:cloudwatch:putMetricAlarm", bounce, "PutComplaintAlarm", {
        Output: "{% $states.input %}",
      }),
      PutComplaintAlarm: task("arn:aws:states:::aws-sdk:cloudwatch:putMetricAlarm", complaint, undefined),
    },
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
  return task(
    "arn:aws:states:::dynamodb:updateItem",
    {
      TableName: p.ledgerTableName,
      Key: { [LEDGER_KEY]: { S: `{% '${campaignStateKey("")}' & ${tagExpr} %}` } },
      UpdateExpression: "SET #state = :state, #at = :at, #reason = :reason",
      ConditionExpression: "attribute_not_exists(#state) OR #state = :live",
      ExpressionAttributeNames: { "#state": A.state, "#at": A.updatedAt, "#reason": A.reason },
      ExpressionAttributeValues: {
        ":state": { S: "paused" },
        ":live": { S: "live" },
        ":at": { S: "{% $now() %}" },
        ":reason": { S: `{% ${reasonExpr} & ' (alarm ' & $states.context.Execution.Input.detail.alarmName & ')' %}` },
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
