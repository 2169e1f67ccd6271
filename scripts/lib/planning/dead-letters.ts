/**
 * Reading a failed send back from the dead-letter queue, and naming its redrive. Pure: no AWS SDK.
 *
 * Two writers share the stack's queue (deadLetterQueueUrl):
 * - EventBridge Scheduler, when a schedule's target fails after its retries: the body is the target's Input as sent,
 *   and message attributes name the schedule (SCHEDULE_ARN, SCHEDULED_TIME, TARGET_ARN, ERROR_CODE, ERROR_MESSAGE,
 *   IS_PAYLOAD_TRUNCATED, …). https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html
 * - the send gate (infra/rules/gate-definition.ts), when a capped send fails: the body is `{"input": <GateInput>, "error":
 *   {...}}` and there are no attributes; the input names the schedule (`schedule`, `scheduled_time`).
 * - the bulk sender (infra/rules/sender-definition.ts), one message per failed entry: `{"input": <SenderInput holding
 *   that entry alone>, "error", "delivery": "not-sent" | "unknown"}`, no attributes. Scheduler itself dead-letters a
 *   bulk schedule whose sender it could not start (TARGET_ARN = the sender): the body is the whole SenderInput.
 * The journeys' own queue holds trigger events the enrolment function could not handle, not sends: not read here.
 */
import { createHash } from "crypto";
import {
  CAMPAIGN_PREFIX,
  campaignIdProblem,
  CLEANUP_SCHEDULE_NAME,
  scheduleName,
  sesSendEmailTargetArn,
} from "../../../infra/rules/naming";
import { scheduler } from "../../../infra/rules/quotas";
import { EMAIL_TAGS } from "../../../infra/rules/email-events";
import { REDRIVE_DELAY_MS } from "../../../infra/rules/promises";

/** One SQS message as ReceiveMessage returns it (the fields read here). */
export interface DeadLetterMessage {
  MessageId?: string;
  ReceiptHandle?: string;
  Body?: string;
  MessageAttributes?: Record<string, { StringValue?: string; DataType?: string } | undefined>;
}

/** What a redrive needs from one dead letter. */
export interface FailedSend {
  campaignId: string;
  group: string;
  /** The failed schedule's name. */
  original: string;
  /** Which send this was, the same for every copy of the message: `<schedule ARN> @ <scheduled time>`. */
  identity: string;
  /**
   * "ses": the SES universal target (Input = the SendEmail request); "gate": the send gate (Input = GateInput);
   * "bulk": the bulk sender (Input = SenderInput: one entry from the sender's dead letter, every entry from Scheduler's).
   */
  via: "ses" | "gate" | "bulk";
  /**
   * The name the redrive counts `-r<N>` on from: the failed schedule's, except for one entry of a bulk schedule,
   * whose up to 50 entries cannot share one name: the recipient-step's own (`<id>-<step>`, naming.ts scheduleName).
   */
  redriveBase: string;
  targetArn: string;
  /** The Input the redriven schedule is created with. */
  input: string;
  /** Why it failed, as far as the message says. */
  error: string;
}

/** A dead letter that cannot be redriven, and why (it is left in the queue). */
export interface Unreadable {
  campaignId?: string;
  reason: string;
}

/** Where the stack sends: the partition's SES target and, with a frequency cap, the send gate. */
export interface SendTargets {
  partition: string;
  sendGateArn?: string;
  /** The bulk sender bulk schedules start (stack output senderStateMachineArn). */
  senderArn?: string;
  /**
   * Redrive a bulk entry the sender marked `delivery: "unknown"` (SES may have sent it: the call failed without saying
   * nothing was sent). Default: left in the queue, since a redrive may then send it twice.
   */
  resendUnknown?: boolean;
}

const SCHEDULE_ARN =
  /^arn:([a-z-]+):scheduler:[a-z0-9-]+:\d{12}:schedule\/([0-9A-Za-z_.-]{1,64})\/([0-9A-Za-z_.-]{1,64})$/;

/** The Scheduler context attributes the fan-out writes into a gate input (each occurrence gets its own values). */
const GATE_CONTEXT = {
  schedule: "<aws.scheduler.schedule-arn>",
  scheduled_time: "<aws.scheduler.scheduled-time>",
} as const;

/** Reads one dead letter: the failed send, or why it cannot be redriven. */
export function readDeadLetter(m: DeadLetterMessage, targets: SendTargets): FailedSend | Unreadable {
  const attribute = (name: string) => m.MessageAttributes?.[name]?.StringValue;
  let body: unknown;
  try {
    body = JSON.parse(m.Body ?? "");
  } catch {
    body = undefined;
  }
  const scheduleArn = attribute("SCHEDULE_ARN");
  if (scheduleArn !== undefined) return fromScheduler(m, body, scheduleArn, attribute, targets);
  if (isObject(body) && isObject(body.input) && isObject(body.input.bulk) && typeof body.input.schedule === "string")
    return fromSender(body, targets);
  if (isObject(body) && isObject(body.input) && typeof body.input.schedule === "string") return fromGate(body, targets);
  return {
    reason:
      "not a dead letter of Scheduler (no SCHEDULE_ARN attribute) nor of the send gate or the bulk sender (no input.schedule in its body)",
  };
}

function fromScheduler(
  m: DeadLetterMessage,
  body: unknown,
  scheduleArn: string,
  attribute: (name: string) => string | undefined,
  targets: SendTargets,
): FailedSend | Unreadable {
  const schedule = campaignSchedule(scheduleArn);
  if ("reason" in schedule) return schedule;
  const { campaignId } = schedule;
  if (attribute("IS_PAYLOAD_TRUNCATED") === "true")
    return {
      campaignId,
      reason: `${scheduleArn}: Scheduler truncated the message's body (IS_PAYLOAD_TRUNCATED): the send cannot be rebuilt`,
    };
  const scheduledTime = attribute("SCHEDULED_TIME");
  if (!scheduledTime || scheduledTime.length > 40)
    return {
      campaignId,
      reason: `${scheduleArn}: no SCHEDULED_TIME attribute, so a second redrive could not be told apart`,
    };
  const targetArn = attribute("TARGET_ARN") ?? "";
  const error = [attribute("ERROR_CODE"), attribute("ERROR_MESSAGE")].filter(Boolean).join(": ") || "unknown error";
  const base = {
    ...schedule,
    redriveBase: schedule.original,
    identity: `${scheduleArn} @ ${scheduledTime}`,
    targetArn,
    error,
  };
  if (targets.senderArn !== undefined && targetArn === targets.senderArn) {
    // The sender never started: no entry was sent; the whole schedule is redriven as one bulk schedule.
    const problem = isObject(body) ? senderInputProblem(body) : "the body is not JSON";
    if (problem) return { campaignId, reason: `${scheduleArn}: ${problem}` };
    return { ...base, via: "bulk", input: senderInput(body as Record<string, unknown>) };
  }
  if (targetArn === sesSendEmailTargetArn(schedule.partition)) {
    if (!isObject(body))
      return { campaignId, reason: `${scheduleArn}: the body is not the JSON SendEmail request the schedule sent` };
    return { ...base, via: "ses", input: m.Body! };
  }
  if (targets.sendGateArn !== undefined && targetArn === targets.sendGateArn) {
    if (!isObject(body) || !isObject(body.email))
      return { campaignId, reason: `${scheduleArn}: the body is not the send gate's input` };
    return { ...base, via: "gate", input: gateInput(body) };
  }
  return {
    campaignId,
    reason: `${scheduleArn}: target ${targetArn || "(none)"} is not one of the stack's (SES SendEmail${targets.sendGateArn ? ", the send gate" : ""}${targets.senderArn ? ", the bulk sender" : ""})`,
  };
}

function fromGate(body: Record<string, unknown>, targets: SendTargets): FailedSend | Unreadable {
  const input = body.input as Record<string, unknown>;
  const scheduleArn = input.schedule as string;
  const schedule = campaignSchedule(scheduleArn);
  if ("reason" in schedule) return schedule;
  const { campaignId } = schedule;
  if (
    !isObject(input.email) ||
    typeof input.scheduled_time !== "string" ||
    !input.scheduled_time ||
    input.scheduled_time.length > 40
  )
    return { campaignId, reason: `${scheduleArn}: the send gate's dead letter has no email or scheduled_time` };
  if (targets.sendGateArn === undefined)
    return {
      campaignId,
      reason: `${scheduleArn}: a send gate's dead letter, but the stack outputs have no sendGateArn`,
    };
  const e = isObject(body.error) ? body.error : {};
  const error = [e.Error, e.Cause].filter((x) => typeof x === "string" && x).join(": ") || "unknown error";
  return {
    ...schedule,
    redriveBase: schedule.original,
    identity: `${scheduleArn} @ ${input.scheduled_time}`,
    via: "gate",
    targetArn: targets.sendGateArn,
    input: gateInput(input),
    error,
  };
}

/**
 * One entry the bulk sender dead-lettered: redriven as a one-entry bulk schedule (the sender again, so its statuses
 * are read and a failure comes back here), named after the recipient-step. An entry SES may have sent is left unless
 * `resendUnknown`.
 */
function fromSender(body: Record<string, unknown>, targets: SendTargets): FailedSend | Unreadable {
  const input = body.input as Record<string, unknown>;
  const scheduleArn = input.schedule as string;
  const schedule = campaignSchedule(scheduleArn);
  if ("reason" in schedule) return schedule;
  const { campaignId } = schedule;
  const problem = senderInputProblem(input);
  if (problem) return { campaignId, reason: `${scheduleArn}: the bulk sender's dead letter: ${problem}` };
  const recipients = input.recipients as string[];
  if (recipients.length !== 1)
    return {
      campaignId,
      reason: `${scheduleArn}: the bulk sender's dead letter holds ${recipients.length} entries; it writes one per message`,
    };
  if (targets.senderArn === undefined)
    return {
      campaignId,
      reason: `${scheduleArn}: a bulk sender's dead letter, but the stack outputs have no senderStateMachineArn`,
    };
  const step = bulkStep(schedule.original, input.bulk as Record<string, unknown>);
  if (step === undefined)
    return {
      campaignId,
      reason: `${scheduleArn}: the bulk sender's dead letter names no step (schedule name bulk.<step>.… or a step tag)`,
    };
  const e = isObject(body.error) ? body.error : {};
  const error = [e.Error, e.Cause].filter((x) => typeof x === "string" && x).join(": ") || "unknown error";
  const recipientSchedule = scheduleName(recipients[0], step);
  if (body.delivery === "unknown" && !targets.resendUnknown)
    return {
      campaignId,
      reason: `${scheduleArn} entry ${recipientSchedule}: SES may have sent it (${error}; delivery unknown): not redriven, so it is not sent twice; check the address's SEND events, then redrive with --resend-unknown or delete the message`,
    };
  return {
    ...schedule,
    // A redriven entry's schedule is already named after its recipient-step: count on from it.
    redriveBase: /^bulk\./.test(schedule.original) ? recipientSchedule : schedule.original,
    identity: `${scheduleArn} @ ${input.scheduled_time} entry ${recipientSchedule}`,
    via: "bulk",
    targetArn: targets.senderArn,
    input: senderInput(input),
    error,
  };
}

/** Why `input` is not a sender input that can be re-sent as it is, or undefined. */
function senderInputProblem(input: Record<string, unknown>): string | undefined {
  const bulk = input.bulk;
  if (!isObject(bulk) || !Array.isArray(bulk.BulkEmailEntries))
    return "no SendBulkEmail request (bulk.BulkEmailEntries)";
  const recipients = input.recipients;
  if (!Array.isArray(recipients) || !recipients.every((r) => typeof r === "string" && r))
    return "no recipient ids (recipients)";
  if (recipients.length !== bulk.BulkEmailEntries.length || !recipients.length)
    return `${recipients.length} recipient ids for ${bulk.BulkEmailEntries.length} entries`;
  if (typeof input.scheduled_time !== "string" || !input.scheduled_time || input.scheduled_time.length > 40)
    return "no scheduled_time";
  return undefined;
}

/** The step of a bulk schedule: from its name (naming.ts bulkScheduleName), else its step tag. */
function bulkStep(name: string, bulk: Record<string, unknown>): number | undefined {
  const fromName = /^bulk\.(\d+)\./.exec(name)?.[1];
  const tags = Array.isArray(bulk.DefaultEmailTags) ? bulk.DefaultEmailTags : [];
  const tag = tags.find((t) => isObject(t) && t.Name === EMAIL_TAGS.step);
  const text = fromName ?? (isObject(tag) && typeof tag.Value === "string" ? tag.Value : undefined);
  return text !== undefined && /^\d{1,4}$/.test(text) ? Number(text) : undefined;
}

/** The sender input of the redriven schedule: the same request and recipients, the context of its own run. */
function senderInput(input: Record<string, unknown>): string {
  return JSON.stringify({ ...input, ...GATE_CONTEXT });
}

/** The gate input of the redriven schedule: the same email and campaign, and the context attributes of its own run. */
function gateInput(input: Record<string, unknown>): string {
  return JSON.stringify({ email: input.email, campaign: input.campaign, ...GATE_CONTEXT });
}

function campaignSchedule(
  arn: string,
): { campaignId: string; group: string; original: string; partition: string } | Unreadable {
  const m = SCHEDULE_ARN.exec(arn);
  if (!m)
    return { reason: `schedule ${arn}: not a schedule ARN in a group (arn:…:scheduler:…:schedule/<group>/<name>)` };
  const [, partition, group, original] = m;
  const campaignId = group.slice(CAMPAIGN_PREFIX.length);
  if (!group.startsWith(CAMPAIGN_PREFIX) || campaignIdProblem(campaignId))
    return { reason: `schedule ${arn}: group ${group} is not a campaign's (${CAMPAIGN_PREFIX}<id>)` };
  if (original === CLEANUP_SCHEDULE_NAME)
    return { campaignId, reason: `schedule ${arn}: the campaign's housekeeping (it deletes the group), not a send` };
  return { campaignId, group, original, partition };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** How many `-r<N>` names a redrive tries for one send before it gives up (each taken by another send). */
export const MAX_REDRIVE_GENERATIONS = 20;

/**
 * The N-th candidate name of a send's redrive: `<original>-r<N>`, where `<original>` is the failed schedule's name
 * without its own `-r<M>` (a redrive of a redrive counts on: a1-1-r1 fails, a1-1-r2 follows). A name over 64
 * characters keeps its start and a hash of the whole, so it stays stable and unique.
 */
export function redriveName(original: string, n: number): string {
  const base = original.replace(/-r\d+$/, "");
  const suffix = `-r${n}`;
  if (base.length + suffix.length <= scheduler.nameMaxLength) return base + suffix;
  const hash = createHash("sha256").update(base, "utf8").digest("hex").slice(0, 8);
  return `${base.slice(0, scheduler.nameMaxLength - suffix.length - hash.length - 1)}.${hash}${suffix}`;
}

/** What a redriven schedule's Description says: which send it re-sends (a second redrive of it reads this back). */
export const redriveDescription = (identity: string) => `sendtime redrive of ${identity}`;

/** When a send redriven at `nowMs` goes: REDRIVE_DELAY_MS later, up to the next whole minute (at() has minutes). */
export function redriveAt(nowMs: number): number {
  return Math.ceil((nowMs + REDRIVE_DELAY_MS) / 60_000) * 60_000;
}
