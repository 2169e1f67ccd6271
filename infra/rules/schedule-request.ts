/**
 * The CreateSchedule request of one schedule, built in TypeScript: the same request the fan-out's CreateSchedule
 * task builds in ASL (infra/rules/fanout-definition.ts) for a plan row. The journey enrolment handler and scripts/enrol.ts
 * use it; a test runs the fan-out through the ASL interpreter and checks both give identical requests for a row.
 * With a frequency cap (`sendGateArn`), the target is the send gate and its input the gate's (gate-definition.ts),
 * for journeys as for campaigns.
 * Pure: no AWS SDK, no Pulumi.
 */
import { campaignTag, EMAIL_TAGS } from "./email-events";
import type { FanOutParameters } from "./fanout-definition";
import { GateInput, SCHEDULER_CONTEXT } from "./frequency-cap";
import { campaignGroupName, sesSendEmailTargetArn } from "./naming";
import { PlanRow } from "./plan-row";

/** What every schedule's SES target carries, from the stack (the fan-out's parameters of the same name). */
export type ScheduleTarget = Pick<
  FanOutParameters,
  | "partition"
  | "targetRoleArn"
  | "deadLetterQueueArn"
  | "fromAddress"
  | "configurationSetName"
  | "listManagement"
  | "maxEventAgeSeconds"
  | "maxRetryAttempts"
  | "sendGateArn"
>;

/** The plan-row fields one schedule is made of. */
export type ScheduleRow = Pick<
  PlanRow,
  | "schedule_name"
  | "schedule_expression"
  | "timezone"
  | "email"
  | "template"
  | "template_data"
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
    /** The SES v2 SendEmail request, or with a frequency cap the send gate's input, as JSON text. */
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

/**
 * The SendEmail request a schedule's target sends, fields in the order the fan-out writes them, with the EmailTags
 * `campaign` (campaignTag of the campaign or journey), `step` and, when the row has one, `variant`.
 */
export function sendEmailInput(t: ScheduleTarget, campaignId: string, row: ScheduleRow): Record<string, unknown> {
  const tags: { Name: string; Value: string }[] = [
    { Name: EMAIL_TAGS.campaign, Value: campaignTag(campaignId) },
    { Name: EMAIL_TAGS.step, Value: String(row.step) },
  ];
  if (row.variant !== undefined && row.variant !== null) tags.push({ Name: EMAIL_TAGS.variant, Value: row.variant });
  const email: Record<string, unknown> = {
    FromEmailAddress: t.fromAddress,
    Destination: { ToAddresses: [row.email] },
    Content: { Template: { TemplateName: row.template, TemplateData: JSON.stringify(row.template_data) } },
    ConfigurationSetName: t.configurationSetName,
    EmailTags: tags,
  };
  if (t.listManagement) {
    email.ListManagementOptions = {
      ContactListName: t.listManagement.contactListName,
      TopicName: t.listManagement.topicName,
    };
  }
  return email;
}

/** The CreateSchedule request for `row` in campaign (or journey) `campaignId`'s group. */
export function createScheduleRequest(
  t: ScheduleTarget,
  campaignId: string,
  windowMinutes: number,
  row: ScheduleRow,
): CreateScheduleRequest {
  const email = sendEmailInput(t, campaignId, row);
  const gateInput: GateInput = {
    email,
    campaign: campaignTag(campaignId),
    schedule: SCHEDULER_CONTEXT.scheduleArn,
    scheduled_time: SCHEDULER_CONTEXT.scheduledTime,
  };
  return {
    Name: row.schedule_name,
    GroupName: campaignGroupName(campaignId),
    ScheduleExpression: row.schedule_expression,
    ScheduleExpressionTimezone: row.timezone,
    // In the fan-out's order: the dates come right after the zone, only on a row that has them.
    ...(row.start_date === undefined || row.start_date === null
      ? {}
      : { StartDate: row.start_date, EndDate: row.end_date }),
    FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: windowMinutes },
    ActionAfterCompletion: "DELETE",
    Target: {
      Arn: t.sendGateArn ?? sesSendEmailTargetArn(t.partition),
      RoleArn: t.targetRoleArn,
      Input: JSON.stringify(t.sendGateArn ? gateInput : email),
      RetryPolicy: { MaximumEventAgeInSeconds: t.maxEventAgeSeconds, MaximumRetryAttempts: t.maxRetryAttempts },
      DeadLetterConfig: { Arn: t.deadLetterQueueArn },
    },
  };
}
