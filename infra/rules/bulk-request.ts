/**
 * The CreateSchedule request of one bulk plan line, built in TypeScript: the same request the fan-out builds in ASL
 * (infra/rules/fanout-definition.ts) for a bulk line. Its target is the bulk sender (sender-definition.ts), its
 * Input the sender's: the SendBulkEmail request plus what makes each invocation recognisable. Tools that rewrite one
 * schedule (remove or reschedule one recipient) build the new request here. Pure: no AWS SDK, no Pulumi.
 * https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendBulkEmail.html
 */
import { campaignTag, EMAIL_TAGS } from "./email-events";
import { SCHEDULER_CONTEXT } from "./gate-definition";
import { campaignGroupName } from "./naming";
import type { BulkEntry, BulkPlanRow, PlanRow } from "./plan-row";
import { scheduler, ses } from "./quotas";
import { UNSUBSCRIBE_TEMPLATE_KEY, unsubscribeAddress, unsubscribeHeaders } from "./unsubscribe";
import type { CreateScheduleRequest, ScheduleTarget } from "./schedule-request";

/** What a bulk schedule's target needs beyond every schedule's: the sender's ARN. */
export type BulkTarget = Omit<ScheduleTarget, "listManagement" | "sendGateArn"> & { senderArn: string };

export interface BulkEmailEntry {
  Destination: { ToAddresses: string[] };
  ReplacementEmailContent: { ReplacementTemplate: { ReplacementTemplateData: string } };
  ReplacementHeaders: { Name: string; Value: string }[];
}

export interface SendBulkEmailRequest {
  FromEmailAddress: string;
  ConfigurationSetName: string;
  DefaultContent: { Template: { TemplateName: string; TemplateData: string } };
  DefaultEmailTags: { Name: string; Value: string }[];
  BulkEmailEntries: BulkEmailEntry[];
}

/**
 * The one sender's input (sender-definition.ts): the request, each entry's recipient id (same order), the step, and
 * the invocation's identity (Scheduler fills in the schedule's ARN and scheduled time). A per-recipient schedule has
 * one entry and, with SES's own list management configured, `list_management`: the sender then sends it with
 * SendEmail and ListManagementOptions, as SES's one-click unsubscribe needs.
 */
export interface SenderInput {
  bulk: SendBulkEmailRequest;
  recipients: string[];
  campaign: string;
  step: number;
  schedule: string;
  scheduled_time: string;
  list_management?: { ContactListName: string; TopicName: string };
}

/**
 * One entry as SendBulkEmail takes it: one To address, its own template data (JSON text) and the one-click
 * unsubscribe pair made from the link in that data (the plan line carries the link once).
 */
export function bulkEmailEntry(e: BulkEntry): BulkEmailEntry {
  return {
    Destination: { ToAddresses: [e.email] },
    ReplacementEmailContent: { ReplacementTemplate: { ReplacementTemplateData: JSON.stringify(e.template_data) } },
    ReplacementHeaders: unsubscribeHeaders(e.template_data[UNSUBSCRIBE_TEMPLATE_KEY]),
  };
}

/** The SendBulkEmail request of a bulk line, fields in the order the fan-out writes them. */
export function sendBulkEmailRequest(
  t: Pick<BulkTarget, "fromAddress" | "configurationSetName">,
  campaignId: string,
  row: Pick<BulkPlanRow, "step" | "variant" | "template" | "entries">,
) {
  const tags: { Name: string; Value: string }[] = [
    { Name: EMAIL_TAGS.campaign, Value: campaignTag(campaignId) },
    { Name: EMAIL_TAGS.step, Value: String(row.step) },
  ];
  if (row.variant !== undefined && row.variant !== null) tags.push({ Name: EMAIL_TAGS.variant, Value: row.variant });
  const request: SendBulkEmailRequest = {
    FromEmailAddress: t.fromAddress,
    ConfigurationSetName: t.configurationSetName,
    DefaultContent: { Template: { TemplateName: row.template, TemplateData: "{}" } },
    DefaultEmailTags: tags,
    BulkEmailEntries: row.entries.map(bulkEmailEntry),
  };
  return request;
}

export function senderInput(
  t: Pick<BulkTarget, "fromAddress" | "configurationSetName">,
  campaignId: string,
  row: BulkPlanRow,
): SenderInput {
  return {
    bulk: sendBulkEmailRequest(t, campaignId, row),
    recipients: row.entries.map((e) => e.recipient_id),
    campaign: campaignTag(campaignId),
    step: row.step,
    schedule: SCHEDULER_CONTEXT.scheduleArn,
    scheduled_time: SCHEDULER_CONTEXT.scheduledTime,
  };
}

/**
 * The sender's input of one recipient's plan row: a request of one entry (its template data as the entry's, the
 * one-click headers when the data carries a link) and, when the stack has SES list management, `list_management`.
 */
export function recipientSenderInput(
  t: Pick<BulkTarget, "fromAddress" | "configurationSetName"> & {
    listManagement?: { contactListName: string; topicName: string };
  },
  campaignId: string,
  row: Pick<PlanRow, "recipient_id" | "email" | "template" | "template_data" | "step" | "variant">,
): SenderInput {
  const link = row.template_data[UNSUBSCRIBE_TEMPLATE_KEY];
  const entry: BulkEmailEntry = {
    Destination: { ToAddresses: [row.email] },
    ReplacementEmailContent: { ReplacementTemplate: { ReplacementTemplateData: JSON.stringify(row.template_data) } },
    ReplacementHeaders: typeof link === "string" && link !== "" ? unsubscribeHeaders(link) : [],
  };
  const request = sendBulkEmailRequest(t, campaignId, { ...row, entries: [] });
  return {
    bulk: { ...request, BulkEmailEntries: [entry] },
    recipients: [row.recipient_id],
    campaign: campaignTag(campaignId),
    step: row.step,
    schedule: SCHEDULER_CONTEXT.scheduleArn,
    scheduled_time: SCHEDULER_CONTEXT.scheduledTime,
    ...(t.listManagement
      ? {
          list_management: {
            ContactListName: t.listManagement.contactListName,
            TopicName: t.listManagement.topicName,
          },
        }
      : {}),
  };
}

/** The CreateSchedule request for bulk line `row` in campaign `campaignId`'s group (one-time: at() only). */
export function bulkScheduleRequest(
  t: BulkTarget,
  campaignId: string,
  windowMinutes: number,
  row: BulkPlanRow,
): CreateScheduleRequest {
  return {
    Name: row.schedule_name,
    GroupName: campaignGroupName(campaignId),
    ScheduleExpression: row.schedule_expression,
    ScheduleExpressionTimezone: row.timezone,
    FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: windowMinutes },
    ActionAfterCompletion: "DELETE",
    Target: {
      Arn: t.senderArn,
      RoleArn: t.targetRoleArn,
      Input: JSON.stringify(senderInput(t, campaignId, row)),
      RetryPolicy: { MaximumEventAgeInSeconds: t.maxEventAgeSeconds, MaximumRetryAttempts: t.maxRetryAttempts },
      DeadLetterConfig: { Arn: t.deadLetterQueueArn },
    },
  };
}

/**
 * Why one more entry, to `address` (trimmed and case-folded: unsubscribeAddress), cannot join a bulk line of `entries`
 * entries to `addresses`, or undefined: a line holds at most ses.maxBulkEntries entries, each address once. The
 * planner asks before it adds each entry (bulk.ts), bulkRowProblem for each entry of a line it is given.
 */
export function bulkEntryRefusal(
  entries: number,
  addresses: ReadonlySet<string>,
  address: string,
): "full" | "repeated" | undefined {
  if (entries >= ses.maxBulkEntries) return "full";
  return addresses.has(address) ? "repeated" : undefined;
}

const PRINTABLE = /^[\x20-\x7e]*$/;
const HEADER_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

/**
 * Why a bulk line cannot be sent as one SendBulkEmail request from one schedule, or undefined: 1 to
 * ses.maxBulkEntries entries, each address once, each entry's template data within SES's limit, headers as SES's
 * MessageHeader allows, and the sender's input (the schedule's Target.Input) within scheduler.maxTargetInputBytes.
 * `t` supplies the sender fields of the stack; the size check uses them.
 */
export function bulkRowProblem(
  row: BulkPlanRow,
  t: Pick<BulkTarget, "fromAddress" | "configurationSetName">,
  campaignId: string,
): string | undefined {
  const n = row.entries?.length ?? 0;
  if (n < 1 || n > ses.maxBulkEntries) return `has ${n} entries; a bulk schedule holds 1 to ${ses.maxBulkEntries}`;
  if (!row.schedule_expression.startsWith("at("))
    return `is ${row.schedule_expression}; bulk schedules are one-time (at())`;
  const seen = new Set<string>();
  for (const [i, e] of row.entries.entries()) {
    const where = `entry ${i + 1} (${e.recipient_id})`;
    const address = unsubscribeAddress(e.email);
    if (bulkEntryRefusal(i, seen, address) === "repeated")
      return `${where} repeats an address of an earlier entry; one schedule sends each address once`;
    seen.add(address);
    const data = JSON.stringify(e.template_data);
    if (data.length > ses.maxTemplateDataChars)
      return `${where} has ${data.length} characters of template data, over SES's ${ses.maxTemplateDataChars}`;
    const link = e.template_data?.[UNSUBSCRIBE_TEMPLATE_KEY];
    if (typeof link !== "string" || link === "")
      return `${where} has no ${UNSUBSCRIBE_TEMPLATE_KEY} in its template data; its List-Unsubscribe header is made from it`;
    for (const h of unsubscribeHeaders(link)) {
      const { maxNameChars, maxValueChars, maxTotalChars } = ses.header;
      if (!HEADER_NAME.test(h.Name) || h.Name.length > maxNameChars)
        return `${where} header name ${JSON.stringify(h.Name)} is not 1–${maxNameChars} printable ASCII characters without ":"`;
      if (!PRINTABLE.test(h.Value) || h.Value.length > maxValueChars || h.Name.length + h.Value.length > maxTotalChars)
        return `${where} header ${h.Name} value is not printable ASCII of at most ${maxValueChars} characters (${maxTotalChars} with the name)`;
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(senderInput(t, campaignId, row)), "utf8");
  if (bytes > scheduler.maxTargetInputBytes)
    return `makes a schedule input of ${bytes} bytes, over Scheduler's ${scheduler.maxTargetInputBytes}: put fewer entries in it`;
  return undefined;
}
