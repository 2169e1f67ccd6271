/**
 * The send gate (Amazon States Language, JSONata): with a frequency cap, Scheduler starts this small EXPRESS state
 * machine instead of calling SES. Pure: parameters in, ASL object out; no Lambda.
 *
 * Input (the schedule's Target.Input, written by the fan-out; Scheduler fills the two context attributes):
 *   {"email": <SES SendEmail input>, "campaign": "<campaign tag>",
 *    "schedule": "<aws.scheduler.schedule-arn>", "scheduled_time": "<aws.scheduler.scheduled-time>"}
 *
 * 1. Admit: one conditional DynamoDB UpdateItem on `<address>#<period>` (the period of the scheduled time, UTC) adds
 *    1 to `sends` and the occurrence (`<schedule ARN>@<scheduled time>`) to `schedules` only while `sends < max` and
 *    the occurrence is not already in `schedules`. Both are the same on every invocation of one occurrence, so an
 *    invocation Scheduler repeats (it retries StartExecution) finds itself already admitted and neither counts nor
 *    sends again; a recurring schedule keeps its ARN, and each of its occurrences is a send of its own.
 * 2. Refused: GetItem tells a repeat (the occurrence is there: nothing to do) from a capped send (counted in CloudWatch,
 *    `sendtime` / `CappedSends` per campaign, and not sent).
 * 3. Send: SES v2 SendEmail with the input as the fan-out built it.
 * 4. Release: a send that fails after its admission gives the admission back (the count, and the occurrence from the
 *    set) before it is dead-lettered, so that a redrive of the same input is admitted again rather than taken for a
 *    repeat — and a failed send does not use up the address's cap.
 * Any failure (DynamoDB, SES, CloudWatch) sends `{input, error}` to the dead-letter queue, as Scheduler does for a send
 * it gives up on, then fails the execution; when the release itself fails, the message also has `release_error`.
 */
import { sdkIntegrationArn } from "./naming";

export const CAP_PERIODS = ["day", "month"] as const;
export type CapPeriod = (typeof CAP_PERIODS)[number];

export interface FrequencyCap {
  /** Sends an address may get per period, across campaigns. */
  max: number;
  /** Calendar period in UTC. */
  per: CapPeriod;
}

export interface GateParameters {
  partition: string;
  cap: FrequencyCap;
  tableName: string;
  deadLetterQueueUrl: string;
}

/** The gate's input, as the fan-out writes it into each schedule. */
export interface GateInput {
  email: Record<string, unknown>;
  campaign: string;
  schedule: string;
  scheduled_time: string;
}

/** What Scheduler fills in, in a schedule's Target.Input, when it invokes the gate: the same on every retry. */
export const SCHEDULER_CONTEXT = {
  scheduleArn: "<aws.scheduler.schedule-arn>",
  scheduledTime: "<aws.scheduler.scheduled-time>",
} as const;

/** Where capped sends are counted. */
export const CAPPED_METRIC = { namespace: "sendtime", name: "CappedSends" } as const;

export const GATE_STATES = {
  admit: "Admit",
  lookUp: "LookUp",
  repeatOrCapped: "RepeatOrCapped",
  repeat: "AlreadyAdmitted",
  countCapped: "CountCapped",
  capped: "Capped",
  send: "Send",
  release: "Release",
  deadLetter: "DeadLetter",
  failed: "Failed",
} as const;

/** JSONata paths to the gate's input: the state input itself, or (after a caught error) its `input` field. */
const INPUT = "$states.input";
const CAUGHT_INPUT = "$states.input.input";

/** JSONata: one occurrence of one schedule, the same on every retry of it (a recurring schedule has many). */
const invocation = (i: string) => `${i}.schedule & '@' & ${i}.scheduled_time`;

/** JSONata: the period key of the scheduled time, and when its item may expire (a day after the period ends). */
const PERIOD: Record<CapPeriod, { key: (i: string) => string; expiresAt: (i: string) => string }> = {
  day: {
    key: (i) => `$substring(${i}.scheduled_time, 0, 10)`,
    expiresAt: (i) => `$string($toMillis($substring(${i}.scheduled_time, 0, 10) & 'T00:00:00Z') / 1000 + 2 * 86400)`,
  },
  month: {
    key: (i) => `$substring(${i}.scheduled_time, 0, 7)`,
    expiresAt: (i) => `$string($toMillis($substring(${i}.scheduled_time, 0, 7) & '-01T00:00:00Z') / 1000 + 33 * 86400)`,
  },
};

/** JSONata: the table key of the input's address and period. */
const keyOf = (cap: FrequencyCap, i: string) =>
  `{% { 'pk': { 'S': ${i}.email.Destination.ToAddresses[0] & '#' & ${PERIOD[cap.per].key(i)} } } %}`;

export const DYNAMODB_BUSY = [
  "DynamoDB.ProvisionedThroughputExceededException",
  "DynamoDB.ThrottlingException",
  "DynamoDB.InternalServerErrorException",
];

export function gateDefinition(p: GateParameters): Record<string, unknown> {
  const S = GATE_STATES;
  const key = keyOf(p.cap, INPUT);
  const toDeadLetter = [
    {
      ErrorEquals: ["States.ALL"],
      Next: S.deadLetter,
      Output: "{% { 'input': $states.input, 'error': $states.errorOutput } %}",
    },
  ];
  return {
    Comment: `sendtime send gate: at most ${p.cap.max} sends per address per ${p.cap.per} (UTC), then SES`,
    QueryLanguage: "JSONata",
    StartAt: S.admit,
    States: {
      [S.admit]: {
        ...admitState(p, key),
        Catch: [
          { ErrorEquals: ["DynamoDB.ConditionalCheckFailedException"], Next: S.lookUp, Output: "{% $states.input %}" },
          ...toDeadLetter,
        ],
        Next: S.send,
      },
      [S.lookUp]: {
        Type: "Task",
        Comment: "Refused: a repeat of an admitted schedule, or the cap.",
        Resource: `arn:${p.partition}:states:::dynamodb:getItem`,
        Arguments: lookUpArguments(p, INPUT),
        Output: `{% { 'input': $states.input, 'repeat': ${isRepeat(INPUT)} } %}`,
        Retry: [retryBusy(DYNAMODB_BUSY)],
        Catch: toDeadLetter,
        Next: S.repeatOrCapped,
      },
      [S.repeatOrCapped]: {
        Type: "Choice",
        Choices: [{ Condition: "{% $states.input.repeat %}", Next: S.repeat }],
        Default: S.countCapped,
      },
      [S.repeat]: { Type: "Succeed", Comment: "This schedule was admitted before: not counted, not sent again." },
      [S.countCapped]: countCappedState(p),
      [S.capped]: { Type: "Succeed", Comment: "Over the cap: counted, not sent." },
      [S.send]: {
        Type: "Task",
        Resource: sdkIntegrationArn(p.partition, "sesv2", "sendEmail"),
        Arguments: "{% $states.input.email %}",
        Retry: [retryBusy(["SesV2.TooManyRequestsException", "SesV2.LimitExceededException"])],
        Catch: [
          {
            ErrorEquals: ["States.ALL"],
            Next: S.release,
            Output: "{% { 'input': $states.input, 'error': $states.errorOutput } %}",
          },
        ],
        End: true,
      },
      [S.release]: releaseState(p),
      [S.deadLetter]: {
        Type: "Task",
        Resource: `arn:${p.partition}:states:::sqs:sendMessage`,
        Arguments: { QueueUrl: p.deadLetterQueueUrl, MessageBody: "{% $string($states.input) %}" },
        Retry: [retryBusy(["States.ALL"])],
        Next: S.failed,
      },
      [S.failed]: {
        Type: "Fail",
        Error: "SendGate.Failed",
        Cause: "the send failed and was put in the dead-letter queue",
      },
    },
  };
}

/**
 * One conditional update admits the send: the address's count for the period goes up by one and the schedule joins
 * its set, only while the count is under the cap and the schedule is not already in the set (a repeat delivery).
 */
function admitState(p: GateParameters, key: string) {
  return {
    Type: "Task",
    Resource: `arn:${p.partition}:states:::dynamodb:updateItem`,
    Arguments: { ...admissionArguments(p, INPUT), Key: key },
    Output: "{% $states.input %}",
    Retry: [retryBusy(DYNAMODB_BUSY)],
  };
}

/** Where the gate counts: its table and cap (the bulk sender admits its entries with the same). */
export type Admissions = Pick<GateParameters, "cap" | "tableName">;

/**
 * The admitting UpdateItem's arguments for the gate input at JSONata path `i` (`{email, schedule, scheduled_time}`;
 * `email` needs only Destination.ToAddresses, so a SendBulkEmail entry will do).
 */
export function admissionArguments(p: Admissions, i: string) {
  return {
    TableName: p.tableName,
    Key: keyOf(p.cap, i),
    UpdateExpression: "ADD sends :one, schedules :schedules SET expires_at = if_not_exists(expires_at, :expires)",
    ConditionExpression: "attribute_not_exists(sends) OR (sends < :max AND NOT contains(schedules, :schedule))",
    ExpressionAttributeValues: {
      ":one": { N: "1" },
      ":max": { N: String(p.cap.max) },
      ":schedule": { S: `{% ${invocation(i)} %}` },
      ":schedules": { SS: [`{% ${invocation(i)} %}`] },
      ":expires": { N: `{% ${PERIOD[p.cap.per].expiresAt(i)} %}` },
    },
  };
}

/** The GetItem that tells a refused admission's repeat from a capped send, and the JSONata test for a repeat. */
export function lookUpArguments(p: Admissions, i: string) {
  return { TableName: p.tableName, Key: keyOf(p.cap, i), ConsistentRead: true };
}
export const isRepeat = (i: string, item = "$states.result.Item") => `${invocation(i)} in ${item}.schedules.SS`;

/** The releasing UpdateItem's arguments (see releaseState) for the gate input at JSONata path `i`. */
export function releaseArguments(p: Admissions, i: string) {
  return {
    TableName: p.tableName,
    Key: keyOf(p.cap, i),
    UpdateExpression: "ADD sends :minus_one DELETE schedules :schedules",
    ConditionExpression: "contains(schedules, :schedule)",
    ExpressionAttributeValues: {
      ":minus_one": { N: "-1" },
      ":schedule": { S: `{% ${invocation(i)} %}` },
      ":schedules": { SS: [`{% ${invocation(i)} %}`] },
    },
  };
}

/**
 * Undoes the admission of a send that failed: one conditional UpdateItem takes 1 from `sends` and the occurrence out of
 * `schedules`, only while the occurrence is there (so it never takes back what another execution admitted). Its input
 * is `{input, error}` as the send's Catch made it, and so is its output, for the dead-letter queue. Nothing to give
 * back (the condition fails) is fine; a release that fails is dead-lettered too, its error beside the send's.
 */
function releaseState(p: GateParameters) {
  return {
    Type: "Task",
    Comment: "Gives the admission back, so that a redrive of this send is admitted again.",
    Resource: `arn:${p.partition}:states:::dynamodb:updateItem`,
    Arguments: releaseArguments(p, CAUGHT_INPUT),
    Output: "{% $states.input %}",
    Retry: [retryBusy(DYNAMODB_BUSY)],
    Catch: [
      {
        ErrorEquals: ["DynamoDB.ConditionalCheckFailedException"],
        Next: GATE_STATES.deadLetter,
        Output: "{% $states.input %}",
      },
      {
        ErrorEquals: ["States.ALL"],
        Next: GATE_STATES.deadLetter,
        Output:
          "{% { 'input': $states.input.input, 'error': $states.input.error, 'release_error': $states.errorOutput } %}",
      },
    ],
    Next: GATE_STATES.deadLetter,
  };
}

/** A capped send is counted per campaign (a metric), then the execution succeeds without sending. */
function countCappedState(p: GateParameters) {
  return {
    Type: "Task",
    Resource: sdkIntegrationArn(p.partition, "cloudwatch", "putMetricData"),
    Arguments: {
      Namespace: CAPPED_METRIC.namespace,
      MetricData: [
        {
          MetricName: CAPPED_METRIC.name,
          Dimensions: [{ Name: "campaign", Value: "{% $states.input.input.campaign %}" }],
          Value: 1,
          Unit: "Count",
        },
      ],
    },
    Output: "{% $states.input %}",
    Retry: [retryBusy(["CloudWatch.InternalServiceException", "CloudWatch.ThrottlingException"])],
    Catch: [
      {
        ErrorEquals: ["States.ALL"],
        Next: GATE_STATES.deadLetter,
        Output: "{% { 'input': $states.input.input, 'error': $states.errorOutput } %}",
      },
    ],
    Next: GATE_STATES.capped,
  };
}

function retryBusy(errors: string[]) {
  return {
    ErrorEquals: errors,
    IntervalSeconds: 1,
    BackoffRate: 2,
    MaxAttempts: 4,
    MaxDelaySeconds: 8,
    JitterStrategy: "FULL",
  };
}
