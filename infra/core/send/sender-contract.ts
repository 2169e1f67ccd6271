/**
 * The one sender's contract, as numbers and names that handlers and CLIs read without its ASL builder
 * (infra/state-machines/sender-definition.ts): which SES statuses and errors mean what, how each call is retried and
 * timed out, and from those the longest an execution can run and the longest a send can follow a state read.
 */
import { CAPPED_METRIC } from "./frequency-cap";
import { ses } from "../plan/quotas";
import { NUMBER_SLOTS } from "./number-limit";

/** The metric of entries dropped because their address opted out after the plan was made. */
export const OPT_OUT_METRIC = { namespace: CAPPED_METRIC.namespace, name: "OptedOutSends" } as const;
/** How keys DynamoDB left unprocessed are asked again: rounds after the first, and the backoff between them. */
export const OPT_OUT_LOOKUP = { maxRetries: 1, intervalSeconds: 1, backoffRate: 2, maxDelaySeconds: 4 } as const;

/** The entry statuses worth another try within the execution: the account's rate, or a passing failure. */
export const TRANSIENT_ENTRY_STATUSES = ["ACCOUNT_THROTTLED", "TRANSIENT_FAILURE"] as const;
export const SENT_STATUS = "SUCCESS";

/** Whole-call errors after which SES sent nothing and the call may be repeated: it refused the request's rate. */
export const CALL_NOT_SENT_RETRYABLE = ["SesV2.TooManyRequestsException", "SesV2.LimitExceededException"] as const;
/** Whole-call errors after which SES sent nothing (client faults of the call): not retried, but not unknown. */
export const CALL_NOT_SENT = [
  ...CALL_NOT_SENT_RETRYABLE,
  "SesV2.AccountSuspendedException",
  "SesV2.BadRequestException",
  "SesV2.MailFromDomainNotVerifiedException",
  "SesV2.MessageRejected",
  // Step Functions names an SDK error with an Exception suffix when the API's own name has none (SES v2's MessageRejected).
  "SesV2.MessageRejectedException",
  "SesV2.NotFoundException",
  "SesV2.SendingPausedException",
] as const;

/** How transient entries are retried: rounds of SendBulkEmail after the first, and the backoff between them. */
export const ENTRY_RETRY = { maxRetries: 2, intervalSeconds: 2, backoffRate: 2, maxDelaySeconds: 8 } as const;
/** How a throttled call is retried (before its entries' statuses are known), and how long one call may take. */
export const CALL_RETRY = {
  maxAttempts: 2,
  intervalSeconds: 1,
  backoffRate: 2,
  maxDelaySeconds: 4,
  timeoutSeconds: 10,
} as const;
/**
 * DynamoDB and SQS calls at once in the sender's Maps (an inline Map runs at most 40), and SendTextMessage calls at
 * once (a bound on the burst a pool sees from one execution; the plan paces schedules to the pool's MPS).
 */
export const SENDER_CONCURRENCY = { admissions: 25, deadLetters: 25, numbers: 25, texts: 10 } as const;

/**
 * Texts (SendTextMessage, AWS End User Messaging SMS): Step Functions' SDK integration of pinpoint-sms-voice-v2 and
 * its error prefix (https://docs.aws.amazon.com/step-functions/latest/dg/supported-services-awssdk.html).
 */
export const SMS_SERVICE = "pinpointsmsvoicev2";
const SMS_ERROR = (name: string) => `PinpointSmsVoiceV2.${name}`;
/** The pool refused the rate: nothing sent, the entry is retried in the next round (as ACCOUNT_THROTTLED). */
export const SMS_RETRYABLE = [SMS_ERROR("ThrottlingException")] as const;
/** Client faults of the call: nothing was sent; not retried (the reason is kept). */
export const SMS_NOT_SENT = [
  SMS_ERROR("ValidationException"),
  SMS_ERROR("AccessDeniedException"),
  SMS_ERROR("ResourceNotFoundException"),
  SMS_ERROR("ServiceQuotaExceededException"),
  SMS_ERROR("ConflictException"),
] as const;
/**
 * A ConflictException whose Reason is DESTINATION_PHONE_NUMBER_OPTED_OUT: the number opted out (STOP, or the pool's
 * opt-out list). Step Functions passes the error's message as the Cause, so the sender looks for the Reason's name or
 * the words "opted out" in it; a ConflictException without either is not sent (never resent by itself).
 */
export const SMS_OPTED_OUT = {
  error: SMS_ERROR("ConflictException"),
  reason: "DESTINATION_PHONE_NUMBER_OPTED_OUT",
} as const;
/** One SendTextMessage's timeout; a timed-out call may have sent the text, so it is unknown, never repeated. */
export const SMS_CALL = { timeoutSeconds: 5 } as const;
/** Entries of one SMS input the sender sends (one for a recipient's row; a bulk line of texts at most this many). */
export const SMS_MAX_ENTRIES = 20;
/**
 * How a busy DynamoDB, CloudWatch or SQS call is retried: short, so that 50 entries fit EXPRESS's 5 minutes
 * (senderWorstCaseSeconds).
 */
export const BUSY_RETRY = { maxAttempts: 3, intervalSeconds: 1, backoffRate: 2, maxDelaySeconds: 4 } as const;
/**
 * The campaign's state is read before every round: a GetItem by key, tried twice, so that the rounds still fit
 * EXPRESS's 5 minutes. A state that cannot be read sends nothing, so a shorter retry never sends more.
 */
export const STATE_READ_RETRY = { ...BUSY_RETRY, maxAttempts: 2 } as const;
/**
 * The longest one DynamoDB, CloudWatch or SQS call may take from a task, in seconds: every such task times out after it
 * (withTaskTimeouts), so the worst cases below hold by construction, not by assumption.
 */
export const BUSY_CALL_SECONDS = 1;

/** One busy call's worst case: every attempt slow, every delay at its cap. */
function busyCallWorstSeconds(r: typeof BUSY_RETRY | typeof STATE_READ_RETRY = BUSY_RETRY): number {
  let total = BUSY_CALL_SECONDS;
  for (let a = 0; a < r.maxAttempts; a++)
    total += Math.min(r.intervalSeconds * r.backoffRate ** a, r.maxDelaySeconds) + BUSY_CALL_SECONDS;
  return total;
}

/** One SES call's worst case: every attempt at its timeout, every throttle delay at its cap. */
function sesCallWorstSeconds(): number {
  let call = CALL_RETRY.timeoutSeconds;
  for (let a = 0; a < CALL_RETRY.maxAttempts; a++)
    call +=
      Math.min(CALL_RETRY.intervalSeconds * CALL_RETRY.backoffRate ** a, CALL_RETRY.maxDelaySeconds) +
      CALL_RETRY.timeoutSeconds;
  return call;
}

/**
 * The longest one sender execution can run, at ses.maxBulkEntries entries: every call slow and retried to its limit,
 * every backoff at its cap. It must stay under EXPRESS's 5 minutes, or Step Functions would end it mid-way and
 * entries still pending would be lost.
 */
export function senderWorstCaseSeconds(entries: number = ses.maxBulkEntries, capped = true, checked = true): number {
  const waves = (concurrency: number) => Math.ceil(entries / concurrency);
  const busy = busyCallWorstSeconds();
  // Each round: the campaign's state read, then the SES call.
  const round = busyCallWorstSeconds(STATE_READ_RETRY) + sesCallWorstSeconds();
  let total = round;
  for (let r = 0; r < ENTRY_RETRY.maxRetries; r++)
    total += Math.min(ENTRY_RETRY.intervalSeconds * ENTRY_RETRY.backoffRate ** r, ENTRY_RETRY.maxDelaySeconds) + round;
  // The claim and the record of the outcomes.
  const ledger = 2 * busy;
  // Admission (update, then look-up when refused), the capped metric, release and dead letter of each entry.
  const admit = capped ? waves(SENDER_CONCURRENCY.admissions) * 2 * busy + busy : 0;
  // The opt-out look-up: every round slow and retried, every backoff at its cap, then the opted-out metric (one try).
  let lookUp = checked ? busy * (1 + OPT_OUT_LOOKUP.maxRetries) + BUSY_CALL_SECONDS : 0;
  for (let r = 0; checked && r < OPT_OUT_LOOKUP.maxRetries; r++)
    lookUp += Math.min(
      OPT_OUT_LOOKUP.intervalSeconds * OPT_OUT_LOOKUP.backoffRate ** r,
      OPT_OUT_LOOKUP.maxDelaySeconds,
    );
  const deadLetter = waves(SENDER_CONCURRENCY.deadLetters) * (capped ? 2 : 1) * busy;
  return total + ledger + lookUp + admit + deadLetter;
}

/**
 * The longest one sender execution of texts can run, at SMS_MAX_ENTRIES entries: the claim and the record, the cap's
 * admission, each entry's same-subject slots (one write per slot and a look-up), every round's state read and
 * SendTextMessage waves at their timeout, every backoff at its cap, and the release of cap and slot and the dead
 * letter of each entry. No opt-out look-up: the unsubscribe table holds addresses, not numbers.
 */
export function smsSenderWorstCaseSeconds(
  entries: number = SMS_MAX_ENTRIES,
  capped = true,
  slots: number = NUMBER_SLOTS,
): number {
  const waves = (concurrency: number) => Math.ceil(entries / concurrency);
  const busy = busyCallWorstSeconds();
  const round = busyCallWorstSeconds(STATE_READ_RETRY) + waves(SENDER_CONCURRENCY.texts) * SMS_CALL.timeoutSeconds;
  let total = round;
  for (let r = 0; r < ENTRY_RETRY.maxRetries; r++)
    total += Math.min(ENTRY_RETRY.intervalSeconds * ENTRY_RETRY.backoffRate ** r, ENTRY_RETRY.maxDelaySeconds) + round;
  const ledger = 2 * busy;
  const admit = capped ? waves(SENDER_CONCURRENCY.admissions) * 2 * busy + busy : 0;
  const numbers = waves(SENDER_CONCURRENCY.numbers) * (slots + 1) * busy;
  const settle = waves(SENDER_CONCURRENCY.deadLetters) * (capped ? 3 : 2) * busy;
  return total + ledger + admit + numbers + settle;
}

/**
 * The longest an SES call can still be under way after the sender read the campaign's state: the state is read
 * right before every SES call, so this is one state read and one call with its throttle retries, every attempt at
 * its timeout and every delay at its cap. `cancel-campaign` and `pause-campaign` wait this long after setting the
 * state: then no execution that read the old state can still be sending.
 */
export function secondsFromStateReadToLastSend(): number {
  const texts = Math.ceil(SMS_MAX_ENTRIES / SENDER_CONCURRENCY.texts) * SMS_CALL.timeoutSeconds;
  return busyCallWorstSeconds(STATE_READ_RETRY) + Math.max(sesCallWorstSeconds(), texts);
}
