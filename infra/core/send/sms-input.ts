/**
 * The one sender's input for a text message (sender-definition.ts): the SMS counterpart of sender-input.ts. A plan
 * row or bulk entry of channel `sms` becomes one entry; the sender builds each SendTextMessage request from it and the
 * stack's origination identity (a pool) and SMS configuration set, which the input never carries, so a schedule
 * cannot send from another pool. Pure: no AWS SDK, no Pulumi.
 * https://docs.aws.amazon.com/pinpoint/latest/apireference_smsvoicev2/API_SendTextMessage.html
 */
import { campaignTag } from "./email-events";
import { SCHEDULER_CONTEXT } from "./frequency-cap";

/** A step's channel; a plan row or entry without `channel` is an email. */
export type Channel = "email" | "sms";
export const CHANNELS: readonly Channel[] = ["email", "sms"];

/** SendTextMessage's MessageType: marketing texts are PROMOTIONAL (the default), one-time codes TRANSACTIONAL. */
export type SmsMessageType = "PROMOTIONAL" | "TRANSACTIONAL";
export const DEFAULT_SMS_MESSAGE_TYPE: SmsMessageType = "PROMOTIONAL";

/** The fields a plan row or bulk entry of channel `sms` carries beside the email row's (plan-row.ts). */
export interface SmsPlanFields {
  channel: "sms";
  /** E.164, checked by infra/core/zones/phone.ts when the plan was made. */
  phone: string;
  /** The text, rendered from templates/<name>/sms.txt with the row's data when the plan was made. */
  body: string;
  /** Message parts of the body (infra/core/sms/segments.ts), for pacing and cost. */
  segments: number;
  /**
   * ISO 8601 UTC: when the legal window holding the send closes (or the send's instant plus SMS_MAX_TTL_SECONDS
   * without legal hours). The sender's TimeToLive ends there; at or after it, the entry is skipped (`legal-hours`).
   */
  until: string;
  /** Under a jurisdiction's same-subject limit (3 texts in 24 h in FL, OK, MD): that number; absent otherwise. */
  same_subject_limit?: number;
}

/** One entry of the sender's SMS input. */
export interface SmsEntry {
  DestinationPhoneNumber: string;
  MessageBody: string;
  Until: string;
  SameSubjectLimit?: number;
}

export interface SmsRequest {
  MessageType: SmsMessageType;
  Entries: SmsEntry[];
}

/** The sender's input for texts: like SenderInput, with `channel` and `sms` in place of `bulk`. */
export interface SmsSenderInput {
  channel: "sms";
  sms: SmsRequest;
  recipients: string[];
  campaign: string;
  step: number;
  /** The A/B variant, passed on in SendTextMessage's Context; absent without variants. */
  variant?: string;
  schedule: string;
  scheduled_time: string;
}

/** SendTextMessage's TimeToLive bounds, in seconds (API reference: 5 to 259,200). */
export const SMS_MIN_TTL_SECONDS = 5;
export const SMS_MAX_TTL_SECONDS = 259_200;

export function smsEntry(e: Pick<SmsPlanFields, "phone" | "body" | "until" | "same_subject_limit">): SmsEntry {
  return {
    DestinationPhoneNumber: e.phone,
    MessageBody: e.body,
    Until: e.until,
    ...(e.same_subject_limit === undefined ? {} : { SameSubjectLimit: e.same_subject_limit }),
  };
}

/** The sender's input of SMS entries (one for a recipient's row, up to 50 for a bulk line) of one step. */
export function smsSenderInput(
  campaignId: string,
  step: { step: number; variant: string | null },
  entries: readonly (Pick<SmsPlanFields, "phone" | "body" | "until" | "same_subject_limit"> & {
    recipient_id: string;
  })[],
  messageType: SmsMessageType = DEFAULT_SMS_MESSAGE_TYPE,
): SmsSenderInput {
  return {
    channel: "sms",
    sms: { MessageType: messageType, Entries: entries.map(smsEntry) },
    recipients: entries.map((e) => e.recipient_id),
    campaign: campaignTag(campaignId),
    step: step.step,
    ...(step.variant === null ? {} : { variant: step.variant }),
    schedule: SCHEDULER_CONTEXT.scheduleArn,
    scheduled_time: SCHEDULER_CONTEXT.scheduledTime,
  };
}
