/**
 * The one sender's input (sender-definition.ts), built in TypeScript as the fan-out builds it in ASL: a SendBulkEmail
 * request of 1 to 50 entries, each entry's recipient id, the step, and what makes each invocation recognisable. The
 * builders of a bulk line's and of one recipient's input; the schedule requests (bulk-request.ts,
 * schedule-request.ts), redrive and the tests use them. Pure: no AWS SDK, no Pulumi.
 * https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendBulkEmail.html
 */
import { campaignTag, EMAIL_TAGS } from "./email-events";
import { SCHEDULER_CONTEXT } from "./frequency-cap";
import type { BulkEntry, BulkPlanRow } from "../plan/bulk-plan-row";
import type { PlanRow } from "../plan/plan-row";
import { UNSUBSCRIBE_TEMPLATE_KEY, unsubscribeHeaders } from "../consent/unsubscribe";

/** The stack's sending fields every input carries. */
export interface SendingFields {
  fromAddress: string;
  configurationSetName: string;
}

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
  t: SendingFields,
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

export function senderInput(t: SendingFields, campaignId: string, row: BulkPlanRow): SenderInput {
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
  t: SendingFields & {
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
