/**
 * What the sender's phases share (sender-definition.ts puts them together): its parameters, its states' names, the
 * retry of a busy call, and the JSONata pieces over pending and done entries.
 */
import { Admissions } from "../core/send/frequency-cap";
import { campaignStateKey, occurrenceKey } from "../core/send/ledger";
import { BUSY_RETRY, STATE_READ_RETRY } from "../core/send/sender-contract";

export interface SenderParameters {
  partition: string;
  deadLetterQueueUrl: string;
  /**
   * The occurrence ledger: occurrences claimed and their outcomes, and campaigns' states.
   * @example { tableName: "sender-ledger-1a2b3c4" }
   */
  ledger: { tableName: string };
  /**
   * With a frequency cap: the cap and its table, against which every entry is admitted.
   * @default none: every entry is sent
   */
  gate?: Admissions;
  /**
   * The unsubscribe endpoint's opt-out table: every entry is looked up there and an opted-out one is not sent.
   * @default none: no look-up (a stack without sendtime:unsubscribe* has no endpoint)
   * @example { tableName: "unsubscribe-opt-outs-1a2b3c4" }
   */
  optOuts?: { tableName: string };
  /**
   * With texts (stack config sendtime:sms): the origination identity and SMS configuration set every SendTextMessage
   * uses; an SMS input (infra/core/send/sms-input.ts) carries neither, so a schedule cannot send from another pool.
   * @default none: the sender sends no text (an SMS input's entries are not sent)
   * @example { originationIdentity: "arn:aws:sms-voice:us-east-1:123456789012:pool/pool-1a2b", configurationSetName: "sendtime-dev-sms" }
   */
  sms?: { originationIdentity: string; configurationSetName: string };
}

export function retryBusy(errors: readonly string[], r: typeof BUSY_RETRY | typeof STATE_READ_RETRY = BUSY_RETRY) {
  return {
    // A call that timed out (TASK_TIMEOUT_SECONDS) is tried again too: each of these calls is safe to repeat.
    ErrorEquals: [...new Set([...errors, "States.Timeout"])],
    IntervalSeconds: r.intervalSeconds,
    BackoffRate: r.backoffRate,
    MaxAttempts: r.maxAttempts,
    MaxDelaySeconds: r.maxDelaySeconds,
    JitterStrategy: "FULL",
  };
}

export const SENDER_STATES = {
  prepare: "Prepare",
  claim: "Claim",
  repeat: "AlreadyClaimed",
  whoClaimed: "WhoClaimed",
  isOwnClaim: "IsOwnClaim",
  claimUncertain: "ClaimUncertain",
  claimFailed: "ClaimFailed",
  lookUpOptOuts: "LookUpOptOuts",
  unprocessed: "AnyUnprocessed",
  lookUpBackoff: "LookUpBackoff",
  lookUpFailed: "LookUpFailed",
  dropOptedOut: "DropOptedOut",
  anyOptedOut: "AnyOptedOut",
  countOptedOut: "CountOptedOut",
  admit: "AdmitEntries",
  admitEntry: "AdmitEntry",
  lookUpEntry: "LookUpEntry",
  anyCapped: "AnyCapped",
  countCapped: "CountCapped",
  anyPending: "AnyPending",
  isText: "IsText",
  textsNotConfigured: "TextsNotConfigured",
  admitNumbers: "AdmitNumbers",
  anyTextPending: "AnyTextPending",
  sendTexts: "SendTexts",
  releaseSlot: "ReleaseSlot",
  readState: "ReadCampaignState",
  stateUnreadable: "StateUnreadable",
  isLive: "IsLive",
  hold: "Hold",
  oneOrBulk: "OneOrBulk",
  sendOne: "SendOne",
  send: "Send",
  sort: "Sort",
  again: "Again",
  backoff: "Backoff",
  outOfRetries: "OutOfRetries",
  callFailed: "CallFailed",
  record: "Record",
  anyToSettle: "AnyToSettle",
  settle: "Settle",
  releaseEntry: "ReleaseEntry",
  deadLetterEntry: "DeadLetterEntry",
  anyFailed: "AnyFailed",
  failed: "Failed",
  done: "Done",
} as const;

/** A JSONata expression written over several lines, as one line (the ASL schema wants `{% … %}` on one). */
export const oneLine = (text: string) => text.replace(/\n\s*/g, " ");

export const list = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(", ")}]`;

/** JSONata: the input's occurrence key and campaign-state key, from ledger.ts's own builders (one fact, one place). */
export const OCCURRENCE_KEY = `'${occurrenceKey("' & $states.input.input.schedule & '", "' & $states.input.input.scheduled_time & '")}'`;
export const CAMPAIGN_STATE_KEY = `'${campaignStateKey("' & $states.input.input.campaign & '")}'`;

/** JSONata: entries of `done` (each `{item, outcome, reason}`) whose admission is given back, or that get a pointer. */
export const NEEDS_RELEASE =
  "item.admitted = true and (outcome = 'not-sent' or (outcome = 'skipped' and reason in ['paused', 'cancelled', 'capped', 'opted-out', 'legal-hours']))";
/**
 * JSONata: entries of `done` holding a number's same-subject slot (texts) that give it back: not sent, or skipped
 * after the slot was taken (held by the campaign's state, opted out at SendTextMessage, or past Until).
 */
export const NEEDS_SLOT_RELEASE =
  "$exists(item.slot) and (outcome = 'not-sent' or (outcome = 'skipped' and reason in ['paused', 'cancelled', 'opted-out', 'legal-hours']))";
export const NEEDS_POINTER = "outcome in ['not-sent', 'unknown'] or (outcome = 'skipped' and reason = 'paused')";

/**
 * JSONata: a pending entry as a done one keeps what the end needs (its recipient, its address for a release, whether
 * it was admitted; a text's number and same-subject slot), not its template data or body: the entries stay in the
 * state once, within Step Functions' 256 KB.
 */
export const SLIM =
  "{ 'recipient': recipient, 'entry': { 'Destination': entry.Destination, 'DestinationPhoneNumber': entry.DestinationPhoneNumber }, 'admitted': admitted, 'slot': slot }";
/** JSONata: pending entries (at `items`) as done ones with `outcome` and `reason` (JSONata expressions over each). */
export const finished = (items: string, outcome: string, reason: string) =>
  `${items}.{ 'item': $.${SLIM}, 'outcome': ${outcome}, 'reason': ${reason} }`;

/** JSONata: the cap's view of one pending entry (`{entry, recipient}` at `item`) of the execution input `input`. */
export const gateView = (item: string, input: string) =>
  `{'email': ${item}.entry, 'schedule': ${input}.schedule, 'scheduled_time': ${input}.scheduled_time}`;

/** JSONata: an error output `{Error, Cause}` at `e` as a reason. */
export const reasonOf = (e: string) =>
  `${e}.Error & ($exists(${e}.Cause) and ${e}.Cause != '' ? ': ' & ${e}.Cause : '')`;
