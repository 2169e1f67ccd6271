/**
 * The one sender (Amazon States Language, JSONata): every schedule of the stack — one-time, recurring, bulk, journey
 * step, redriven — starts this small EXPRESS state machine, and it is the only thing in the stack that calls SES.
 * Pure: parameters in, ASL object out; no Lambda.
 *
 * Input (the schedule's Target.Input: infra/core/send/sender-input.ts SenderInput, which the fan-out builds the same):
 *   {"bulk": <SendBulkEmail request of 1 to 50 entries>, "recipients": [<recipient id per entry>], "campaign": "<tag>",
 *    "step": N, "schedule": "<aws.scheduler.schedule-arn>", "scheduled_time": "<aws.scheduler.scheduled-time>",
 *    "list_management"?: {ContactListName, TopicName}}
 *   or, for texts (infra/core/send/sms-input.ts SmsSenderInput), `"channel": "sms"` and `"sms": {MessageType, Entries}`
 *   in place of `bulk`: the same phases, without the opt-out table (it holds addresses), with each number's
 *   same-subject limit after the cap, and SendTextMessage per entry in the round (sender-sms.ts).
 *
 * Whether and how often, in this order (infra/core/send/ledger.ts has the keys; sender-claim.ts, sender-admission.ts,
 * sender-round.ts and sender-settle.ts build the phases, infra/core/send/sender-contract.ts holds their numbers):
 * 1. Claim: a conditional PutItem of `occ#<schedule ARN>#<scheduled time>` in the ledger. Scheduler fills in the same
 *    two values on every invocation of one occurrence, so a repeated invocation finds it claimed and sends nothing.
 *    A claim that fails for another reason sends nothing either (its entries are not sent, and dead-lettered).
 * 2. Opt-outs (with the unsubscribe endpoint's table): an opted-out entry is skipped; one whose look-up fails is not
 *    sent. SendBulkEmail has no ListManagementOptions, so SES would not filter them.
 * 3. The cap (with `gate`): each entry admitted on its own (frequency-cap.ts); a capped one is skipped.
 * 4. The campaign's state (`campaign#<tag>`), read right before every SES call, the first and each retry round: a
 *    campaign that is not live skips every pending entry (`paused` or `cancelled`); a state that cannot be read sends
 *    nothing. So `cancel-campaign` waits secondsFromStateReadToLastSend() after setting it, and then nothing sends.
 * 5. Send: SendEmail for a per-recipient schedule with SES list management (one entry and `list_management`: SES's
 *    own one-click unsubscribe), SendBulkEmail otherwise. SendBulkEmail answers 200 with a status per entry
 *    (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_BulkEmailEntryResult.html): SUCCESS is sent;
 *    ACCOUNT_THROTTLED and TRANSIENT_FAILURE are retried alone with backoff; any other status is not sent; when the
 *    results do not match the entries one for one, every entry is unknown. A call that fails as a whole is retried only when SES refused its rate
 *    (CALL_NOT_SENT_RETRYABLE); otherwise its entries are not sent when the error proves SES sent nothing
 *    (CALL_NOT_SENT) and unknown when it does not (a timeout, a 5xx: SES has no idempotency token).
 * 6. Record: every entry's one outcome (sent | not-sent | unknown | skipped, with the reason) in the occurrence item.
 *    An unknown entry keeps its cap admission (it may have been delivered); a not-sent one, or one skipped by the
 *    campaign's state after its admission, gives it back. A dead letter is a pointer (ledger.ts DeadLetterPointer),
 *    never a request, for each entry not sent, unknown or held by a pause; redrive rebuilds the request from the plan.
 * Bookkeeping (the metrics, the record, a release) never changes an outcome: each is tried, and a failure of it is
 * kept in the output. The execution fails (Sender.EntriesFailed) when an entry is not sent or unknown.
 */
import { BUSY_CALL_SECONDS } from "../core/send/sender-contract";
import { finished, oneLine, SENDER_STATES, SenderParameters } from "./sender-states";
import { claimStates } from "./sender-claim";
import { admissionStates, optOutStates } from "./sender-admission";
import { retryStates, sendStates, stateStates } from "./sender-round";
import { endStates } from "./sender-settle";
import { numberLimitStates, textRoundStates, textsNotConfiguredStates } from "./sender-sms";
import { SMS_MAX_ENTRIES } from "../core/send/sender-contract";

/**
 * Every task but the SES calls (which have CALL_RETRY.timeoutSeconds) times out after BUSY_CALL_SECONDS, in the Maps'
 * processors too: a slow DynamoDB, CloudWatch or SQS answer cannot stretch an execution past its bounds.
 */
function withTaskTimeouts(states: Record<string, any>): Record<string, unknown> {
  for (const state of Object.values(states)) {
    if (state.Type === "Task" && state.TimeoutSeconds === undefined) state.TimeoutSeconds = BUSY_CALL_SECONDS;
    if (state.Type === "Map") withTaskTimeouts(state.ItemProcessor.States);
  }
  return states;
}

/**
 * Pairs each entry (BulkEmailEntries, or an SMS input's sms.Entries) with its recipient id; an SMS input's entries
 * past SMS_MAX_ENTRIES are not sent (the worst case of an execution is counted for that many).
 */
function prepare() {
  const pair = "function($e, $i) { { 'entry': $e, 'recipient': $states.input.recipients[$i], 'admitted': false } }";
  return {
    Type: "Pass",
    Comment:
      "Pairs each entry with its recipient id. The entries are kept once, in pending (Step Functions holds a state's data to 256 KB).",
    Output: oneLine(`{% $states.input.channel = 'sms' ? (
  $all := [$map($states.input.sms.Entries, ${pair})];
  $over := [$filter($all, function($v, $i) { $i >= ${SMS_MAX_ENTRIES} })];
  { 'input': $merge([$states.input, { 'sms': $sift($states.input.sms, function($v, $k) { $k != 'Entries' }) }]),
'pending': [$filter($all, function($v, $i) { $i < ${SMS_MAX_ENTRIES} })],
'done': [${finished("$over", "'not-sent'", `'Sms.TooManyEntries: an SMS input holds at most ${SMS_MAX_ENTRIES} entries'`)}], 'round': 0 }
) : { 'input': $merge([$states.input, { 'bulk': $sift($states.input.bulk, function($v, $k) { $k != 'BulkEmailEntries' }) }]), 'pending': [$map($states.input.bulk.BulkEmailEntries, ${pair})], 'done': [], 'round': 0 } %}`),
    Next: SENDER_STATES.claim,
  };
}

export function senderDefinition(p: SenderParameters): Record<string, unknown> {
  const S = SENDER_STATES;
  const capped = p.gate !== undefined;
  const checked = p.optOuts !== undefined;
  const afterOptOuts = capped ? S.admit : S.anyPending;
  return {
    Comment: `sendtime's one sender: claims the occurrence, reads the campaign's state before every SES call, records each entry's outcome${capped ? `; at most ${p.gate!.cap.max} sends per address per ${p.gate!.cap.per} (UTC)` : ""}`,
    QueryLanguage: "JSONata",
    StartAt: S.prepare,
    States: withTaskTimeouts({
      [S.prepare]: prepare(),
      ...claimStates(p, S.isText),
      [S.isText]: {
        Type: "Choice",
        Comment:
          "Texts skip the unsubscribe endpoint's table (it holds email addresses): a number's opt-out is the pool's opt-out list, which SendTextMessage applies (skipped: opted-out).",
        Choices: [
          {
            Condition: "{% $states.input.input.channel = 'sms' %}",
            Next: p.sms ? afterOptOuts : S.textsNotConfigured,
          },
        ],
        Default: checked ? S.lookUpOptOuts : afterOptOuts,
      },
      ...(p.sms ? {} : textsNotConfiguredStates()),
      ...(p.optOuts ? optOutStates(p, p.optOuts, afterOptOuts) : {}),
      ...(p.gate ? admissionStates(p, p.gate) : {}),
      [S.anyPending]: {
        Type: "Choice",
        Choices: [
          ...(p.sms
            ? [
                {
                  Condition: "{% $count($states.input.pending) > 0 and $states.input.input.channel = 'sms' %}",
                  Next: S.admitNumbers,
                },
              ]
            : []),
          { Condition: "{% $count($states.input.pending) > 0 %}", Next: S.readState },
        ],
        Default: S.record,
      },
      ...(p.sms ? { ...numberLimitStates(p), ...textRoundStates(p, p.sms) } : {}),
      ...stateStates(p),
      ...sendStates(p),
      ...retryStates(),
      ...endStates(p),
    }),
  };
}
