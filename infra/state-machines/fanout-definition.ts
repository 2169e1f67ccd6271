/**
 * The fan-out state machine (Amazon States Language, JSONPath): one EventBridge Scheduler schedule per plan row.
 * Pure: parameters in, ASL object out. Every per-recipient decision was made by the planner; this only moves plan
 * fields into CreateSchedule parameters.
 *
 * Execution input: {"campaign_id", "plan_bucket", "plan_key", "window_minutes", "campaign_tag"}.
 * Plan row (JSONL): {schedule_name, send_at, timezone, email, template, template_data, recipient_id, step, utc,
 * variant, schedule_expression} and, on recurring rows only, {start_date, end_date}; `variant` is a name of A-Z a-z
 * 0-9 _ - or null (older plans: absent); CreateSchedule's ScheduleExpression is the row's `schedule_expression` as is
 * (`at(...)` or `cron(...)`), and a row with `start_date` is created by a second CreateSchedule task that also passes
 * StartDate and EndDate. infra/core/plan/plan-row.ts owns the format.
 *
 * Every send carries the SES EmailTags `campaign` (= campaign_tag, see campaignTag in email-events.ts: SES tags take
 * no dot), `step` and, when the row has a variant, `variant`, so its events can be counted per campaign, step and
 * variant. Choice states test the row for a variant and for dates: JSONPath cannot read a field that may be missing.
 *
 * Never created late (infra/core/timing/promises.ts): a one-time row is created only when its `utc` is at least
 * CREATE_LEAD_MS after the latest moment its CreateSchedule can be made — the time of its own check
 * ($states.context.State.EnteredTime, just before the call) plus the worst case of the call's retries. Otherwise it is
 * not created: the child's output says "passed" for it (beside "created" and "exists"), and the Distributed Map's
 * ResultWriter writes those outputs to the results. This one check is JSONata: JSONPath has no date arithmetic.
 *
 * Every schedule's target is the one sender (sender-definition.ts), which alone calls SES: a recipient's row becomes
 * the sender's input of one entry, a bulk line (`entries`, bulk-plan-row.ts BulkPlanRow; one-time only) the input of its
 * entries, built by one JSONata state (JSONPath cannot map over the entries) as sender-input.ts builds it in
 * TypeScript. A row (or bulk line) of `channel: "sms"` (sms-input.ts SmsPlanFields) becomes the sender's SMS input, as
 * smsSenderInput() builds it. The never-created-late check applies to every one-time schedule.
 */
import { EMAIL_TAGS } from "../core/send/email-events";
import { SCHEDULER_CONTEXT } from "../core/send/frequency-cap";
import {
  CAMPAIGN_PREFIX,
  CLEANUP_SCHEDULE_NAME,
  RESULTS_PREFIX,
  schedulerDeleteGroupTargetArn,
  sdkIntegrationArn,
} from "../core/plan/naming";
import type { PlanRow } from "../core/plan/plan-row";
import type { SchedulerTargetParameters } from "../core/plan/schedule-request";
import { createScheduleRetry, scheduler, stepFunctions, worstCaseRowSeconds } from "../core/plan/quotas";
import { CREATE_LEAD_MS } from "../core/timing/promises";
import { UNSUBSCRIBE_TEMPLATE_KEY, unsubscribeHeaders } from "../core/consent/unsubscribe";
import { InternalError } from "../core/errors";
import { DEFAULT_SMS_MESSAGE_TYPE, SmsMessageType } from "../core/send/sms-input";

export type { PlanRow };

/** The fan-out's execution input. */
export interface FanOutInput {
  campaign_id: string;
  plan_bucket: string;
  plan_key: string;
  window_minutes: number;
  /** The `campaign` EmailTag value: campaignTag(campaign_id). */
  campaign_tag: string;
  /**
   * When the campaign's group deletes itself, in UTC, `YYYY-MM-DDTHH:MM:SS` (at()'s format): cleanupAt(). Absent (an
   * execution started by hand): no housekeeping schedule, the group stays until cancel-campaign.
   */
  cleanup_at?: string;
}

/** Minutes Scheduler may spread the housekeeping call over (it is one call; any window would do). */
const CLEANUP_WINDOW_MINUTES = 60;

/**
 * When a campaign's group may go: after its last send, that send's flexible window, and the longest Scheduler keeps
 * retrying a send (the API's maximum MaximumEventAgeInSeconds, whatever the stack sets), rounded up to the minute.
 */
export function cleanupAt(lastSendUtc: Date, windowMinutes: number): string {
  const ms = lastSendUtc.getTime() + windowMinutes * 60_000 + scheduler.maxEventAgeSeconds.max * 1000;
  return new Date(Math.ceil(ms / 60_000) * 60_000).toISOString().slice(0, 19);
}

/** How the fan-out runs, from the stack config (infra/config.ts). */
export interface FanOutShape {
  /**
   * Distributed Map MaxConcurrency: child executions at once. Required: the stack passes `sendtime:maxConcurrency`,
   * by default paced to `createScheduleTps` (`pacedConcurrency` in infra/core/plan/quotas.ts).
   */
  maxConcurrency: number;
  /**
   * Plan rows per child execution, at most (ItemBatcher MaxItemsPerBatch; 256 KB fills first for large rows).
   * Required: the stack passes `sendtime:batchSize` (`400` when unset).
   */
  batchSize: number;
  /**
   * CreateSchedule calls at once inside a child (inline Map MaxConcurrency, at most 40). Required: the stack passes
   * `sendtime:innerConcurrency`, by default paced to `createScheduleTps` with `maxConcurrency`.
   */
  innerConcurrency: number;
  /**
   * Percentage of items that may fail before the whole Map Run fails. Required: the stack passes
   * `sendtime:toleratedFailurePercentage` (`5` when unset).
   */
  toleratedFailurePercentage: number;
}

/** The fan-out's parameters: its shape, what every schedule's target carries (SchedulerTargetParameters), and its own roles. */
export interface FanOutParameters extends FanOutShape, SchedulerTargetParameters {
  /**
   * Role EventBridge Scheduler assumes for the housekeeping schedule, which deletes the campaign's group (the only
   * role that may; the journeys cannot pass it).
   * @default none: no housekeeping schedule, the group stays until cancel-campaign
   */
  housekeepingRoleArn?: string;
  /** Bucket the fan-out writes its results (failed batches) to, under `results/`. */
  resultsBucket: string;
  /**
   * SendTextMessage's MessageType of every text (stack config `sendtime:sms.messageType`); a row's own `message_type`
   * (PROMOTIONAL or TRANSACTIONAL, from `--sms-message-type`) wins.
   * @default "PROMOTIONAL"
   */
  smsMessageType?: SmsMessageType;
}

/**
 * Errors worth retrying: the service is busy or briefly broken. Anything else fails the row's batch, notably
 * ServiceQuotaExceededException: the account is out of schedules (or groups), which no retry fixes.
 */
export const RETRYABLE_SCHEDULER_ERRORS = ["Scheduler.ThrottlingException", "Scheduler.InternalServerException"];

/** CreateSchedule/CreateScheduleGroup of a name that exists: a re-run or a redrive, and not an error. */
export const ALREADY_EXISTS = "Scheduler.ConflictException";

export const STATE_NAMES = {
  ensureGroup: "EnsureScheduleGroup",
  fanOut: "FanOut",
  createSchedules: "CreateSchedules",
  request: "SenderRequest",
  isRecurring: "IsRecurring",
  createSchedule: "CreateSchedule",
  createRecurringSchedule: "CreateRecurringSchedule",
  scheduleExists: "ScheduleExists",
  inTime: "InTime",
  passed: "Passed",
  hasCleanupTime: "HasCleanupTime",
  cleanupRequest: "CleanupRequest",
  scheduleCleanup: "ScheduleCleanup",
  readCleanup: "ReadCleanup",
  isCleanupLater: "IsCleanupLater",
  moveCleanup: "MoveCleanup",
} as const;

const retryThrottles = () => [
  {
    ErrorEquals: RETRYABLE_SCHEDULER_ERRORS,
    IntervalSeconds: createScheduleRetry.intervalSeconds,
    BackoffRate: createScheduleRetry.backoffRate,
    MaxAttempts: createScheduleRetry.maxAttempts,
    MaxDelaySeconds: createScheduleRetry.maxDelaySeconds,
    JitterStrategy: "FULL",
  },
];

/** What a row's child output says for it: its schedule was made, was there already, or was due too soon to make. */
export const ROW_OUTCOMES = { created: "created", exists: "exists", passed: "passed" } as const;

/**
 * How long before its `utc` a one-time row must be checked to be created: CREATE_LEAD_MS after the last moment its
 * CreateSchedule can go through, i.e. after every retry the task allows (worstCaseRowSeconds, at its call budget).
 */
export const CREATE_CHECK_LEAD_MS = CREATE_LEAD_MS + worstCaseRowSeconds() * 1000;

/** `campaign-<campaign_id>`, computed in the state machine from the execution input. */
const groupNameExpression = (path: string) => `States.Format('${CAMPAIGN_PREFIX}{}', ${path})`;

export function fanOutDefinition(p: FanOutParameters): Record<string, unknown> {
  const S = STATE_NAMES;
  return {
    Comment: "sendtime fan-out: one EventBridge Scheduler schedule per plan row, idempotent on re-run",
    StartAt: S.ensureGroup,
    States: {
      [S.ensureGroup]: ensureScheduleGroup(p),
      ...(p.housekeepingRoleArn ? cleanupStates(p, p.housekeepingRoleArn) : {}),
      [S.fanOut]: distributedFanOut(p),
    },
  };
}

function ensureScheduleGroup(p: FanOutParameters) {
  const next = p.housekeepingRoleArn ? STATE_NAMES.hasCleanupTime : STATE_NAMES.fanOut;
  return {
    Type: "Task",
    Comment: "The campaign's group; it exists already on a re-run.",
    Resource: sdkIntegrationArn(p.partition, "scheduler", "createScheduleGroup"),
    Parameters: {
      "Name.$": groupNameExpression("$.campaign_id"),
      // The tag also makes an execution started without campaign_tag fail here, before any schedule exists.
      Tags: [
        { Key: "sendtime:campaign", "Value.$": "$.campaign_id" },
        { Key: "sendtime:campaign-tag", "Value.$": "$.campaign_tag" },
      ],
    },
    ResultPath: null,
    Retry: retryThrottles(),
    Catch: [{ ErrorEquals: [ALREADY_EXISTS], ResultPath: null, Next: next }],
    Next: next,
  };
}

/**
 * Housekeeping: one schedule in the campaign's own group that deletes the group at `cleanup_at` (after the last send
 * and its retries), so finished campaigns do not use up the account's 500 groups. It lives in the group it deletes, so
 * cancel-campaign removes it with the rest. A re-run whose cleanup_at is later moves it (UpdateSchedule); an earlier
 * one leaves it: the group stays until the latest launch's sends are done. Without cleanup_at (an execution started
 * by hand) there is none. It runs as the housekeeping role, the only one that may delete groups.
 */
function cleanupStates(p: FanOutParameters, roleArn: string) {
  const S = STATE_NAMES;
  const task = (action: string, parameters: object, next: string) => ({
    Type: "Task",
    Resource: sdkIntegrationArn(p.partition, "scheduler", action),
    Parameters: parameters,
    ResultPath: null,
    Retry: retryThrottles(),
    Next: next,
  });
  const description = "$.cleanup.existing.Description";
  return {
    [S.hasCleanupTime]: {
      Type: "Choice",
      Choices: [{ Variable: "$.cleanup_at", IsPresent: true, Next: S.cleanupRequest }],
      Default: S.fanOut,
    },
    [S.cleanupRequest]: {
      Type: "Pass",
      Parameters: {
        "group.$": groupNameExpression("$.campaign_id"),
        "expression.$": "States.Format('at({})', $.cleanup_at)",
        // The instant, also kept as the schedule's Description, where a re-run reads it back to compare.
        "instant.$": "States.Format('{}Z', $.cleanup_at)",
        target_input: { "Name.$": groupNameExpression("$.campaign_id") },
      },
      ResultPath: "$.cleanup",
      Next: S.scheduleCleanup,
    },
    [S.scheduleCleanup]: {
      ...task("createSchedule", cleanupSchedule(p, roleArn), S.fanOut),
      Catch: [{ ErrorEquals: [ALREADY_EXISTS], ResultPath: null, Next: S.readCleanup }],
    },
    [S.readCleanup]: {
      ...task("getSchedule", { Name: CLEANUP_SCHEDULE_NAME, "GroupName.$": "$.cleanup.group" }, S.isCleanupLater),
      ResultPath: "$.cleanup.existing",
    },
    [S.isCleanupLater]: {
      Type: "Choice",
      Choices: [
        // Rules run in order: a Description that is missing or not ours is replaced, never compared.
        { Variable: description, IsPresent: false, Next: S.moveCleanup },
        { Not: { Variable: description, IsTimestamp: true }, Next: S.moveCleanup },
        { Variable: "$.cleanup.instant", TimestampGreaterThanPath: description, Next: S.moveCleanup },
      ],
      Default: S.fanOut,
    },
    [S.moveCleanup]: task("updateSchedule", cleanupSchedule(p, roleArn), S.fanOut),
  };
}

/** The housekeeping schedule, for CreateSchedule and UpdateSchedule alike (an update replaces every field). */
function cleanupSchedule(p: FanOutParameters, roleArn: string) {
  return {
    Name: CLEANUP_SCHEDULE_NAME,
    "GroupName.$": "$.cleanup.group",
    "ScheduleExpression.$": "$.cleanup.expression",
    ScheduleExpressionTimezone: "UTC",
    "Description.$": "$.cleanup.instant",
    FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: CLEANUP_WINDOW_MINUTES },
    ActionAfterCompletion: "DELETE",
    Target: {
      Arn: schedulerDeleteGroupTargetArn(p.partition),
      RoleArn: roleArn,
      "Input.$": "States.JsonToString($.cleanup.target_input)",
      RetryPolicy: { MaximumEventAgeInSeconds: p.maxEventAgeSeconds, MaximumRetryAttempts: p.maxRetryAttempts },
      DeadLetterConfig: { Arn: p.deadLetterQueueArn },
    },
  };
}

function distributedFanOut(p: FanOutParameters) {
  return {
    Type: "Map",
    Comment: "Reads the plan (JSON Lines) from S3 and creates its schedules in batches of EXPRESS children.",
    ItemReader: {
      Resource: `arn:${p.partition}:states:::s3:getObject`,
      ReaderConfig: { InputType: "JSONL" },
      Parameters: { "Bucket.$": "$.plan_bucket", "Key.$": "$.plan_key" },
    },
    ItemBatcher: {
      MaxItemsPerBatch: p.batchSize,
      MaxInputBytesPerBatch: stepFunctions.maxBatchBytes,
      BatchInput: {
        "campaign_id.$": "$.campaign_id",
        "window_minutes.$": "$.window_minutes",
        "campaign_tag.$": "$.campaign_tag",
      },
    },
    MaxConcurrency: p.maxConcurrency,
    ToleratedFailurePercentage: p.toleratedFailurePercentage,
    ItemProcessor: {
      ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
      StartAt: STATE_NAMES.createSchedules,
      States: { [STATE_NAMES.createSchedules]: createSchedulesOfBatch(p) },
    },
    ResultWriter: {
      Resource: `arn:${p.partition}:states:::s3:putObject`,
      Parameters: { Bucket: p.resultsBucket, Prefix: RESULTS_PREFIX.replace(/\/$/, "") },
    },
    ResultPath: "$.fan_out",
    End: true,
  };
}

/** Inside a child: the batch's rows, `innerConcurrency` CreateSchedule calls at once. */
function createSchedulesOfBatch(p: FanOutParameters) {
  const S = STATE_NAMES;
  return {
    Type: "Map",
    ItemsPath: "$.Items",
    MaxConcurrency: p.innerConcurrency,
    ItemSelector: {
      "row.$": "$$.Map.Item.Value",
      "group.$": groupNameExpression("$.BatchInput.campaign_id"),
      "window_minutes.$": "$.BatchInput.window_minutes",
      "campaign_tag.$": "$.BatchInput.campaign_tag",
    },
    ItemProcessor: {
      ProcessorConfig: { Mode: "INLINE" },
      StartAt: S.request,
      States: {
        [S.request]: senderRequest(p),
        [S.isRecurring]: {
          Type: "Choice",
          Comment:
            "A recurring (cron) row carries start_date and end_date; a one-time row has none (older plans, null: none).",
          Choices: [
            { Variable: "$.start_date", IsPresent: false, Next: S.inTime },
            { Variable: "$.start_date", IsNull: true, Next: S.inTime },
          ],
          // A recurring row is not checked: cron() fires only after its StartDate, never for a time gone by.
          Default: S.createRecurringSchedule,
        },
        [S.inTime]: inTimeCheck("$states.input.utc", S.createSchedule),
        [S.createSchedule]: createSchedule(p, false),
        [S.createRecurringSchedule]: createSchedule(p, true),
        [S.scheduleExists]: { Type: "Pass", Result: ROW_OUTCOMES.exists, End: true },
        [S.passed]: {
          Type: "Pass",
          Comment: "Due too soon to create: not created, counted in the results.",
          Result: ROW_OUTCOMES.passed,
          End: true,
        },
      },
    },
    End: true,
  };
}

/**
 * Never created late: a JSONata Choice, `utc` (a JSONata path) at least CREATE_CHECK_LEAD_MS after the check's own
 * time, or the row is passed. A utc that is missing or not a timestamp fails the batch.
 */
function inTimeCheck(utc: string, next: string) {
  return {
    Type: "Choice",
    QueryLanguage: "JSONata",
    Comment: `Never created late: utc at least ${CREATE_CHECK_LEAD_MS / 1000} s after now (a minute after the last retry). A utc that is missing or not a timestamp fails the batch.`,
    Choices: [
      {
        Condition: `{% $toMillis(${utc}) >= $toMillis($states.context.State.EnteredTime) + ${CREATE_CHECK_LEAD_MS} %}`,
        Next: next,
      },
    ],
    Default: STATE_NAMES.passed,
  };
}

const LINK_PLACEHOLDER = "\u0000link\u0000";

/**
 * JSONata for unsubscribeHeaders(<the value of `link`>), written from unsubscribeHeaders itself (one fact, one place):
 * each header's Value is its text around the link, joined with `&`.
 */
function replacementHeaders(link: string): string {
  const headers = unsubscribeHeaders(LINK_PLACEHOLDER).map((h) => {
    const parts = h.Value.split(LINK_PLACEHOLDER).map((text) => jsonataString(text));
    return `{ 'Name': ${jsonataString(h.Name)}, 'Value': ${parts.join(` & ${link} & `)} }`;
  });
  return `[${headers.join(", ")}]`;
}

/** A JSONata string literal (single-quoted, as the rest of these expressions). */
function jsonataString(text: string): string {
  if (!/^[\x20-\x26\x28-\x5b\x5d-\x7e]*$/.test(text))
    throw new InternalError(`${JSON.stringify(text)} is not plain text for a JSONata literal`);
  return `'${text}'`;
}

/**
 * Any row: the sender's input built in one JSONata Pass (the row itself is not kept, so the state stays within
 * 256 KB). A recipient's row is one entry, with SES list management when configured; a bulk line its entries. Field
 * order as sender-input.ts's.
 */
function senderRequest(p: FanOutParameters) {
  const S = STATE_NAMES;
  const tag = (name: string, value: string) => `{ 'Name': ${JSON.stringify(name)}, 'Value': ${value} }`;
  const link = "$e.template_data." + UNSUBSCRIBE_TEMPLATE_KEY;
  const request = [
    `'FromEmailAddress': ${JSON.stringify(p.fromAddress)}`,
    `'ConfigurationSetName': ${JSON.stringify(p.configurationSetName)}`,
    `'DefaultContent': { 'Template': { 'TemplateName': $row.template, 'TemplateData': '{}' } }`,
    `'DefaultEmailTags': [${tag(EMAIL_TAGS.campaign, "$states.input.campaign_tag")}, ${tag(EMAIL_TAGS.step, "$string($row.step)")}, ($row.variant ? ${tag(EMAIL_TAGS.variant, "$row.variant")})]`,
    `'BulkEmailEntries': [$map($entries, function($e) { { 'Destination': { 'ToAddresses': [$e.email] }, 'ReplacementEmailContent': { 'ReplacementTemplate': { 'ReplacementTemplateData': $string($e.template_data) } }, 'ReplacementHeaders': ${link} ? ${replacementHeaders(link)} : [] } })]`,
  ].join(", ");
  const listManagement = p.listManagement
    ? `, 'list_management': ($not($bulk) ? { 'ContactListName': ${JSON.stringify(p.listManagement.contactListName)}, 'TopicName': ${JSON.stringify(p.listManagement.topicName)} })`
    : "";
  const senderInput = [
    `'bulk': { ${request} }`,
    `'recipients': [$entries.recipient_id]`,
    `'campaign': $states.input.campaign_tag`,
    `'step': $row.step`,
    `'schedule': '${SCHEDULER_CONTEXT.scheduleArn}'`,
    `'scheduled_time': '${SCHEDULER_CONTEXT.scheduledTime}'`,
  ].join(", ");
  const entries =
    "$bulk := $exists($row.entries); $sms := $row.channel = 'sms'; $entries := $bulk ? $row.entries : ($sms ? [{ 'recipient_id': $row.recipient_id, 'phone': $row.phone, 'body': $row.body, 'until': $row.until, 'same_subject_limit': $row.same_subject_limit }] : [{ 'recipient_id': $row.recipient_id, 'email': $row.email, 'template_data': $row.template_data }])";
  return {
    Type: "Pass",
    QueryLanguage: "JSONata",
    Output: `{% ( $row := $states.input.row; ${entries}; { 'name': $row.schedule_name, 'expression': $row.schedule_expression, 'timezone': $row.timezone, 'group': $states.input.group, 'window_minutes': $states.input.window_minutes, 'utc': $row.utc, 'start_date': $row.start_date, 'end_date': $row.end_date, 'target_input': $sms ? ${smsSenderInputExpression(p)} : { ${senderInput}${listManagement} } } ) %}`,
    Next: S.isRecurring,
  };
}

/**
 * JSONata over `$row` and `$entries`: the sender's SMS input of a row (or bulk line) of channel `sms`, field for field
 * and in the order sms-input.ts's smsSenderInput() builds it (tests/infra/state-machines/fanout-sms.test.ts holds the
 * two to each other). No SES list management: a text's opt-out is the pool's.
 */
function smsSenderInputExpression(p: FanOutParameters): string {
  const type = JSON.stringify(p.smsMessageType ?? DEFAULT_SMS_MESSAGE_TYPE);
  const entry =
    "$merge([{ 'DestinationPhoneNumber': $e.phone, 'MessageBody': $e.body, 'Until': $e.until }, $exists($e.same_subject_limit) ? { 'SameSubjectLimit': $e.same_subject_limit } : {}])";
  return [
    "$merge([",
    `{ 'channel': 'sms', 'sms': { 'MessageType': $row.message_type in ['PROMOTIONAL', 'TRANSACTIONAL'] ? $row.message_type : ${type}, 'Entries': [$map($entries, function($e) { ${entry} })] },`,
    "'recipients': [$entries.recipient_id], 'campaign': $states.input.campaign_tag, 'step': $row.step },",
    "$row.variant ? { 'variant': $row.variant } : {},",
    `{ 'schedule': '${SCHEDULER_CONTEXT.scheduleArn}', 'scheduled_time': '${SCHEDULER_CONTEXT.scheduledTime}' }`,
    "])",
  ].join(" ");
}

/** CreateSchedule of one row; a recurring row's also passes its StartDate and EndDate (ISO instants). */
function createSchedule(p: FanOutParameters, recurring: boolean) {
  const dates = recurring ? { "StartDate.$": "$.start_date", "EndDate.$": "$.end_date" } : {};
  return {
    Type: "Task",
    Resource: sdkIntegrationArn(p.partition, "scheduler", "createSchedule"),
    Parameters: {
      "Name.$": "$.name",
      "GroupName.$": "$.group",
      "ScheduleExpression.$": "$.expression",
      "ScheduleExpressionTimezone.$": "$.timezone",
      ...dates,
      FlexibleTimeWindow: { Mode: "FLEXIBLE", "MaximumWindowInMinutes.$": "$.window_minutes" },
      ActionAfterCompletion: "DELETE",
      Target: {
        Arn: p.senderArn,
        RoleArn: p.targetRoleArn,
        "Input.$": "States.JsonToString($.target_input)",
        RetryPolicy: { MaximumEventAgeInSeconds: p.maxEventAgeSeconds, MaximumRetryAttempts: p.maxRetryAttempts },
        DeadLetterConfig: { Arn: p.deadLetterQueueArn },
      },
    },
    ResultSelector: { outcome: ROW_OUTCOMES.created },
    OutputPath: "$.outcome",
    Retry: retryThrottles(),
    Catch: [{ ErrorEquals: [ALREADY_EXISTS], ResultPath: null, Next: STATE_NAMES.scheduleExists }],
    End: true,
  };
}
