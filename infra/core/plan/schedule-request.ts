/**
 * The CreateSchedule request of one schedule, built in TypeScript: the same request the fan-out's CreateSchedule
 * task builds in ASL (infra/state-machines/fanout-definition.ts) for a plan row. The journey enrolment handler and scripts/enrol.ts
 * use it; a test runs the fan-out through the ASL interpreter and checks both give identical requests for a row.
 * The target is the one sender (sender-definition.ts), its input the row's (sender-input.ts recipientSenderInput),
 * for journeys as for campaigns.
 * Pure: no AWS SDK, no Pulumi.
 */
import { recipientSenderInput } from "../send/sender-input";
import { campaignGroupName } from "./naming";
import { PlanRow } from "./plan-row";

/** How Scheduler retries every schedule's send (its RetryPolicy), from the stack config. */
export interface ScheduleRetryPolicy {
  /**
   * Seconds Scheduler keeps retrying a send before dead-lettering it (every schedule's RetryPolicy). Required: the
   * stack passes `sendtime:maxEventAgeSeconds` (`7200` when unset).
   */
  maxEventAgeSeconds: number;
  /**
   * Times Scheduler retries a failed send (every schedule's RetryPolicy). Required: the stack passes
   * `sendtime:maxRetryAttempts` (`5` when unset).
   */
  maxRetryAttempts: number;
}

/**
 * What every schedule's target carries, from the stack (the SchedulerTarget component's roles and dead-letter queue,
 * the sender, the SES settings): the fan-out's parameters (FanOutParameters) extend it, and
 * journeys pass it to createScheduleRequest.
 */
export interface SchedulerTargetParameters extends ScheduleRetryPolicy {
  /** AWS partition of the account, e.g. "aws". */
  partition: string;
  /** Role EventBridge Scheduler assumes for a recipient's schedule: to start the one sender. */
  targetRoleArn: string;
  /** SQS queue that receives sends Scheduler gave up on. */
  deadLetterQueueArn: string;
  /** The sends' FromEmailAddress. */
  fromAddress: string;
  /** The sends' ConfigurationSetName. */
  configurationSetName: string;
  /** SES list management (one-click unsubscribe) of a recipient's send, when configured. */
  listManagement?: { contactListName: string; topicName: string };
  /** The one sender (sender-definition.ts) that every schedule starts. */
  senderArn: string;
}

/** The plan-row fields one schedule is made of. */
export type ScheduleRow = Pick<
  PlanRow,
  | "schedule_name"
  | "schedule_expression"
  | "timezone"
  | "email"
  | "template"
  | "template_data"
  | "recipient_id"
  | "step"
  | "variant"
  | "start_date"
  | "end_date"
>;

export interface CreateScheduleRequest {
  Name: string;
  GroupName: string;
  ScheduleExpression: string;
  ScheduleExpressionTimezone: string;
  /** A recurring row's start_date and end_date (ISO instants); absent for a one-time schedule. */
  StartDate?: string;
  EndDate?: string;
  FlexibleTimeWindow: { Mode: "FLEXIBLE"; MaximumWindowInMinutes: number };
  ActionAfterCompletion: "DELETE";
  Target: {
    Arn: string;
    RoleArn: string;
    /** The one sender's input (sender-input.ts SenderInput), as JSON text. */
    Input: string;
    RetryPolicy: { MaximumEventAgeInSeconds: number; MaximumRetryAttempts: number };
    DeadLetterConfig: { Arn: string };
  };
}

/** DeleteSchedule of one schedule: what an exit event sends per step. */
export interface DeleteScheduleRequest {
  Name: string;
  GroupName: string;
}

/** The CreateSchedule request for `row` in campaign (or journey) `campaignId`'s group. */
export function createScheduleRequest(
  t: SchedulerTargetParameters,
  campaignId: string,
  windowMinutes: number,
  row: ScheduleRow,
): CreateScheduleRequest {
  // In the fan-out's order: the dates come right after the zone, only on a row that has them.
  const dates =
    row.start_date === undefined || row.start_date === null
      ? undefined
      : { StartDate: row.start_date, EndDate: row.end_date };
  return senderScheduleRequest(t, campaignId, windowMinutes, row, recipientSenderInput(t, campaignId, row), dates);
}

/** What any schedule's request takes from its target: the sender, the role that starts it, retries, dead letters. */
export type SenderTargetParameters = Pick<
  SchedulerTargetParameters,
  "senderArn" | "targetRoleArn" | "maxEventAgeSeconds" | "maxRetryAttempts" | "deadLetterQueueArn"
>;

/**
 * The CreateSchedule request of one schedule of `campaignId`'s group that starts the one sender with `input` (and a
 * recurring schedule's `dates`): every schedule's, a recipient's (createScheduleRequest) and a bulk line's
 * (bulk-request.ts) alike.
 */
export function senderScheduleRequest(
  t: SenderTargetParameters,
  campaignId: string,
  windowMinutes: number,
  row: Pick<ScheduleRow, "schedule_name" | "schedule_expression" | "timezone">,
  input: unknown,
  dates?: Pick<CreateScheduleRequest, "StartDate" | "EndDate">,
): CreateScheduleRequest {
  return {
    Name: row.schedule_name,
    GroupName: campaignGroupName(campaignId),
    ScheduleExpression: row.schedule_expression,
    ScheduleExpressionTimezone: row.timezone,
    ...dates,
    FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: windowMinutes },
    ActionAfterCompletion: "DELETE",
    Target: {
      Arn: t.senderArn,
      RoleArn: t.targetRoleArn,
      Input: JSON.stringify(input),
      RetryPolicy: { MaximumEventAgeInSeconds: t.maxEventAgeSeconds, MaximumRetryAttempts: t.maxRetryAttempts },
      DeadLetterConfig: { Arn: t.deadLetterQueueArn },
    },
  };
}
