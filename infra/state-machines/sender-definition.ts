/**
 * The one sender (Amazon States Language, JSONata): every schedule of the stack — one-time, recurring, bulk, journey
 * step, redriven — starts this small EXPRESS state machine, and it is the only thing in the stack that calls SES.
 * Pure: parameters in, ASL object out; no Lambda.
 *
 * Input (the schedule's Target.Input: infra/core/send/sender-input.ts SenderInput, which the fan-out builds the same):
 *   {"bulk": <SendBulkEmail request of 1 to 50 entries>, "recipients": [<recipient id per entry>], "campaign": "<tag>",
 *    "step": N, "schedule": "<aws.scheduler.schedule-arn>", "scheduled_time": "<aws.scheduler.scheduled-time>",
 *    "list_management"?: {ContactListName, TopicName}}
 *
 * Whether and how often, in this order (infra/core/send/ledger.ts has the keys):
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
import {
  Admissions,
  admissionArguments,
  CAPPED_METRIC,
  DYNAMODB_BUSY,
  isRepeat,
  lookUpArguments,
  releaseArguments,
} from "../core/send/frequency-cap";
import {
  CAMPAIGN_STATE_ATTRIBUTES,
  campaignStateKey,
  LEDGER_KEY,
  LEDGER_TTL_ATTRIBUTE,
  LEDGER_TTL_DAYS,
  OCCURRENCE_ATTRIBUTES,
  occurrenceKey,
} from "../core/send/ledger";
import { CAMPAIGN_PREFIX, sdkIntegrationArn } from "../core/plan/naming";
import { dynamodb, ses } from "../core/plan/quotas";
import { OPT_OUT_KEY } from "../core/consent/unsubscribe-endpoint";

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
}

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
/** DynamoDB and SQS calls at once in the sender's Maps (an inline Map runs at most 40). */
export const SENDER_CONCURRENCY = { admissions: 25, deadLetters: 25 } as const;
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
const BUSY_CALL_SECONDS = 1;

function retryBusy(errors: readonly string[], r: typeof BUSY_RETRY | typeof STATE_READ_RETRY = BUSY_RETRY) {
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
 * The longest an SES call can still be under way after the sender read the campaign's state: the state is read
 * right before every SES call, so this is one state read and one call with its throttle retries, every attempt at
 * its timeout and every delay at its cap. `cancel-campaign` and `pause-campaign` wait this long after setting the
 * state: then no execution that read the old state can still be sending.
 */
export function secondsFromStateReadToLastSend(): number {
  return busyCallWorstSeconds(STATE_READ_RETRY) + sesCallWorstSeconds();
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
const oneLine = (text: string) => text.replace(/\n\s*/g, " ");

const list = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(", ")}]`;

/** JSONata: the input's occurrence key and campaign-state key, from ledger.ts's own builders (one fact, one place). */
const OCCURRENCE_KEY = `'${occurrenceKey("' & $states.input.input.schedule & '", "' & $states.input.input.scheduled_time & '")}'`;
const CAMPAIGN_STATE_KEY = `'${campaignStateKey("' & $states.input.input.campaign & '")}'`;

/** JSONata: entries of `done` (each `{item, outcome, reason}`) whose admission is given back, or that get a pointer. */
const NEEDS_RELEASE =
  "item.admitted = true and (outcome = 'not-sent' or (outcome = 'skipped' and reason in ['paused', 'cancelled']))";
const NEEDS_POINTER = "outcome in ['not-sent', 'unknown'] or (outcome = 'skipped' and reason = 'paused')";

/**
 * JSONata: a pending entry as a done one keeps what the end needs (its recipient, its address for a release, whether
 * it was admitted), not its template data: the entries stay in the state once, within Step Functions' 256 KB.
 */
const SLIM = "{ 'recipient': recipient, 'entry': { 'Destination': entry.Destination }, 'admitted': admitted }";
/** JSONata: pending entries (at `items`) as done ones with `outcome` and `reason` (JSONata expressions over each). */
const finished = (items: string, outcome: string, reason: string) =>
  `${items}.{ 'item': $.${SLIM}, 'outcome': ${outcome}, 'reason': ${reason} }`;

/** JSONata: the cap's view of one pending entry (`{entry, recipient}` at `item`) of the execution input `input`. */
const gateView = (item: string, input: string) =>
  `{'email': ${item}.entry, 'schedule': ${input}.schedule, 'scheduled_time': ${input}.scheduled_time}`;

/** JSONata: an error output `{Error, Cause}` at `e` as a reason. */
const reasonOf = (e: string) => `${e}.Error & ($exists(${e}.Cause) and ${e}.Cause != '' ? ': ' & ${e}.Cause : '')`;

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
      [S.prepare]: {
        Type: "Pass",
        Comment:
          "Pairs each entry with its recipient id. The entries are kept once, in pending (Step Functions holds a state's data to 256 KB).",
        Output: `{% { 'input': $merge([$states.input, { 'bulk': $sift($states.input.bulk, function($v, $k) { $k != 'BulkEmailEntries' }) }]), 'pending': [$map($states.input.bulk.BulkEmailEntries, function($e, $i) { { 'entry': $e, 'recipient': $states.input.recipients[$i], 'admitted': false } })], 'done': [], 'round': 0 } %}`,
        Next: S.claim,
      },
      ...claimStates(p, checked ? S.lookUpOptOuts : afterOptOuts),
      ...(p.optOuts ? optOutStates(p, p.optOuts, afterOptOuts) : {}),
      ...(p.gate ? admissionStates(p, p.gate) : {}),
      [S.anyPending]: {
        Type: "Choice",
        Choices: [{ Condition: "{% $count($states.input.pending) > 0 %}", Next: S.readState }],
        Default: S.record,
      },
      ...stateStates(p),
      ...sendStates(p),
      ...retryStates(),
      ...endStates(p),
    }),
  };
}

/** The claim of the occurrence: a conditional PutItem; already there means a repeated invocation, which ends here. */
function claimStates(p: SenderParameters, next: string) {
  const S = SENDER_STATES;
  const ttlSeconds = LEDGER_TTL_DAYS * 86400;
  return {
    [S.claim]: {
      Type: "Task",
      Comment: "Claims this occurrence (schedule ARN and scheduled time, the same on every invocation of it).",
      Resource: `arn:${p.partition}:states:::dynamodb:putItem`,
      Arguments: {
        TableName: p.ledger.tableName,
        Item: {
          [LEDGER_KEY]: { S: `{% ${OCCURRENCE_KEY} %}` },
          [OCCURRENCE_ATTRIBUTES.campaign]: { S: "{% $states.input.input.campaign %}" },
          [OCCURRENCE_ATTRIBUTES.claimedAt]: { S: "{% $states.context.Execution.StartTime %}" },
          [OCCURRENCE_ATTRIBUTES.claimedBy]: { S: "{% $states.context.Execution.Id %}" },
          [LEDGER_TTL_ATTRIBUTE]: {
            N: `{% $string($floor($toMillis($states.input.input.scheduled_time) / 1000) + ${ttlSeconds}) %}`,
          },
        },
        ConditionExpression: `attribute_not_exists(${LEDGER_KEY})`,
      },
      Retry: [retryBusy(DYNAMODB_BUSY)],
      Output: "{% $states.input %}",
      Catch: [
        {
          ErrorEquals: ["DynamoDB.ConditionalCheckFailedException"],
          Next: S.whoClaimed,
          Output: "{% $states.input %}",
        },
        {
          ErrorEquals: ["States.ALL"],
          Next: S.claimFailed,
          Output: "{% $merge([$states.input, { 'claim_error': $states.errorOutput }]) %}",
        },
      ],
      Next: next,
    },
    ...ownClaimStates(p),
    [S.repeat]: {
      Type: "Succeed",
      Comment: "A repeated invocation of a claimed occurrence: nothing is sent again.",
      Output: "{% { 'repeat': true, 'entries': $count($states.input.pending) } %}",
    },
    [S.claimFailed]: {
      Type: "Pass",
      Comment: "The occurrence could not be claimed: nothing is sent; each entry is not sent, and dead-lettered.",
      Output: `{% $merge([$states.input, { 'done': [${finished("$states.input.pending", "'not-sent'", `'Ledger.ClaimFailed: ' & ${reasonOf("$states.input.claim_error")}`)}], 'pending': [] }]) %}`,
      Next: S.record,
    },
  };
}

/**
 * Claimed already: by another execution (a repeated invocation: nothing to do), or by this one — its own claim, retried
 * after it was written, or Step Functions running the execution again — with no outcome recorded yet. Then SES may or
 * may not have been called: every entry is unknown (dead-lettered; sent again only with redrive --resend-unknown),
 * never sent twice and never dropped unseen. A look-up that fails is taken the same way.
 */
function ownClaimStates(p: SenderParameters) {
  const S = SENDER_STATES;
  const by = OCCURRENCE_ATTRIBUTES.claimedBy;
  return {
    [S.whoClaimed]: {
      Type: "Task",
      Resource: `arn:${p.partition}:states:::dynamodb:getItem`,
      Arguments: {
        TableName: p.ledger.tableName,
        Key: { [LEDGER_KEY]: { S: `{% ${OCCURRENCE_KEY} %}` } },
        ConsistentRead: true,
      },
      Retry: [retryBusy(DYNAMODB_BUSY)],
      Output: `{% $merge([$states.input, { 'own_claim': $states.result.Item.${by}.S = $states.context.Execution.Id and $not($exists($states.result.Item.${OCCURRENCE_ATTRIBUTES.outcomes})) }]) %}`,
      Catch: [{ ErrorEquals: ["States.ALL"], Next: S.claimUncertain, Output: "{% $states.input %}" }],
      Next: S.isOwnClaim,
    },
    [S.isOwnClaim]: {
      Type: "Choice",
      Choices: [{ Condition: "{% $states.input.own_claim = true %}", Next: S.claimUncertain }],
      Default: S.repeat,
    },
    [S.claimUncertain]: {
      Type: "Pass",
      Comment: "This execution's own claim, found again: SES may have been called; every entry is unknown.",
      Output: `{% $merge([$states.input, { 'done': [${finished("$states.input.pending", "'unknown'", "'Ledger.ClaimUncertain: this execution claimed the occurrence already (a retried claim, or the execution run again)'")}], 'pending': [] }]) %}`,
      Next: S.record,
    },
  };
}

/** The campaign's state, right before every SES call: live sends; paused or cancelled skips; unreadable sends nothing. */
function stateStates(p: SenderParameters) {
  const S = SENDER_STATES;
  const state = CAMPAIGN_STATE_ATTRIBUTES.state;
  return {
    [S.readState]: {
      Type: "Task",
      Comment: "The campaign's state (absent: live), read again before every round of SES calls.",
      Resource: `arn:${p.partition}:states:::dynamodb:getItem`,
      Arguments: {
        TableName: p.ledger.tableName,
        Key: { [LEDGER_KEY]: { S: `{% ${CAMPAIGN_STATE_KEY} %}` } },
        ConsistentRead: true,
        ProjectionExpression: "#state",
        ExpressionAttributeNames: { "#state": state },
      },
      Retry: [retryBusy(DYNAMODB_BUSY, STATE_READ_RETRY)],
      Output: `{% $merge([$states.input, { 'state': $exists($states.result.Item.${state}.S) ? $states.result.Item.${state}.S : 'live' }]) %}`,
      Catch: [
        {
          ErrorEquals: ["States.ALL"],
          Next: S.stateUnreadable,
          Output: "{% $merge([$states.input, { 'state_error': $states.errorOutput }]) %}",
        },
      ],
      Next: S.isLive,
    },
    [S.stateUnreadable]: {
      Type: "Pass",
      Comment: "Whether the campaign may send is not known: nothing is sent; each pending entry is not sent.",
      Output: `{% $merge([$states.input, { 'done': [$states.input.done, ${finished("$states.input.pending", "'not-sent'", `'CampaignState.Unreadable: ' & ${reasonOf("$states.input.state_error")}`)}], 'pending': [] }]) %}`,
      Next: S.record,
    },
    [S.isLive]: {
      Type: "Choice",
      Choices: [{ Condition: "{% $states.input.state = 'live' %}", Next: S.oneOrBulk }],
      Default: S.hold,
    },
    [S.hold]: {
      Type: "Pass",
      Comment: "Paused or cancelled: every pending entry is skipped (a paused one is dead-lettered, for redrive).",
      Output: `{% $merge([$states.input, { 'done': [$states.input.done, ${finished("$states.input.pending", "'skipped'", "$states.input.state = 'cancelled' ? 'cancelled' : 'paused'")}], 'pending': [] }]) %}`,
      Next: S.record,
    },
  };
}

/** The call (SendEmail for one entry with list management, SendBulkEmail otherwise) and the sorting of its results. */
function sendStates(p: SenderParameters) {
  return { ...sendOneStates(p), ...sendBulkStates(p) };
}

/** Whole-call retries on throttling, and any other failure to CallFailed: the same for both calls. */
function callHandling() {
  return {
    Retry: [
      {
        ErrorEquals: [...CALL_NOT_SENT_RETRYABLE],
        IntervalSeconds: CALL_RETRY.intervalSeconds,
        BackoffRate: CALL_RETRY.backoffRate,
        MaxAttempts: CALL_RETRY.maxAttempts,
        MaxDelaySeconds: CALL_RETRY.maxDelaySeconds,
        JitterStrategy: "FULL",
      },
    ],
    Catch: [
      {
        ErrorEquals: ["States.ALL"],
        Next: SENDER_STATES.callFailed,
        Output: "{% $merge([$states.input, { 'call_error': $states.errorOutput }]) %}",
      },
    ],
  };
}

/** A per-recipient schedule with SES list management: its one entry as SendEmail takes it. */
function sendOneStates(p: SenderParameters) {
  const S = SENDER_STATES;
  const { Retry: retry, Catch: toCallFailed } = callHandling();
  return {
    [S.oneOrBulk]: {
      Type: "Choice",
      Comment: "A per-recipient schedule with SES list management is sent with SendEmail (ListManagementOptions).",
      Choices: [
        {
          Condition: "{% $count($states.input.pending) = 1 and $exists($states.input.input.list_management) %}",
          Next: S.sendOne,
        },
      ],
      Default: S.send,
    },
    [S.sendOne]: {
      Type: "Task",
      Resource: sdkIntegrationArn(p.partition, "sesv2", "sendEmail"),
      // The entry as SendEmail takes it: the same template, data, tags and headers, and SES's list management.
      Arguments: oneLine(`{% (
  $b := $states.input.input.bulk;
  $e := $states.input.pending[0].entry;
  $h := $e.ReplacementHeaders;
  { 'FromEmailAddress': $b.FromEmailAddress, 'Destination': $e.Destination,
'Content': { 'Template': $merge([{ 'TemplateName': $b.DefaultContent.Template.TemplateName, 'TemplateData': $e.ReplacementEmailContent.ReplacementTemplate.ReplacementTemplateData }, $count($h) > 0 ? { 'Headers': $h } : {}]) },
'ConfigurationSetName': $b.ConfigurationSetName, 'EmailTags': $b.DefaultEmailTags, 'ListManagementOptions': $states.input.input.list_management }
) %}`),
      TimeoutSeconds: CALL_RETRY.timeoutSeconds,
      Retry: retry,
      Output: `{% $merge([$states.input, { 'results': [{ 'Status': '${SENT_STATUS}', 'MessageId': $states.result.MessageId }], 'round': $states.input.round + 1 }]) %}`,
      Catch: toCallFailed,
      Next: S.sort,
    },
  };
}

/** SendBulkEmail of the pending entries, and the sorting of every call's results. */
function sendBulkStates(p: SenderParameters) {
  const S = SENDER_STATES;
  const { Retry: retry, Catch: toCallFailed } = callHandling();
  return {
    [S.send]: {
      Type: "Task",
      Resource: sdkIntegrationArn(p.partition, "sesv2", "sendBulkEmail"),
      // The request as the fan-out built it, with the entries still to send.
      Arguments: "{% $merge([$states.input.input.bulk, { 'BulkEmailEntries': [$states.input.pending.entry] }]) %}",
      TimeoutSeconds: CALL_RETRY.timeoutSeconds,
      Retry: retry,
      Output:
        "{% $merge([$states.input, { 'results': [$states.result.BulkEmailEntryResults], 'round': $states.input.round + 1 }]) %}",
      Catch: toCallFailed,
      Next: S.sort,
    },
    [S.sort]: {
      Type: "Pass",
      Comment:
        "Results are in the entries' order. SUCCESS: sent; transient: kept for another round; any other status: not sent. A result list that does not match the entries one for one cannot be read: every entry unknown.",
      Output: oneLine(`{% (
  $transient := ${list(TRANSIENT_ENTRY_STATUSES)};
  $whole := $count($states.input.results) = $count($states.input.pending);
  $graded := [$map($states.input.pending, function($p, $i) { (
$r := $whole ? $states.input.results[$i] : {};
{ 'item': $merge([$p, { 'last': { 'Error': $r.Status ? $r.Status : 'SendBulk.NoResult', 'Cause': $r.Error ? $r.Error : '' } }]),
  'kind': $r.Status = '${SENT_STATUS}' ? 'sent' : ($r.Status in $transient ? 'transient' : ($r.Status ? 'not-sent' : 'unknown')) }
  ) })];
  $merge([$states.input, {
'done': [$states.input.done, $graded[kind != 'transient'].{ 'item': item.${SLIM}, 'outcome': kind, 'reason': kind = 'sent' ? '' : ${reasonOf("item.last")} }],
'pending': [$graded[kind = 'transient'].item],
'results': []
  }])
) %}`),
      Next: S.again,
    },
  };
}

/** Another round for the transient entries, with backoff (and the state read again), until the retries run out. */
function retryStates() {
  const S = SENDER_STATES;
  return {
    [S.again]: {
      Type: "Choice",
      Choices: [
        {
          Condition: `{% $count($states.input.pending) > 0 and $states.input.round <= ${ENTRY_RETRY.maxRetries} %}`,
          Next: S.backoff,
        },
        { Condition: "{% $count($states.input.pending) > 0 %}", Next: S.outOfRetries },
      ],
      Default: S.record,
    },
    [S.backoff]: {
      Type: "Wait",
      Comment: "Exponential backoff with equal jitter: half the delay, plus up to the other half at random.",
      Seconds: oneLine(`{% (
  $d := $min([${ENTRY_RETRY.maxDelaySeconds}, ${ENTRY_RETRY.intervalSeconds} * $power(${ENTRY_RETRY.backoffRate}, $states.input.round - 1)]);
  $ceil($d / 2 + $random() * $d / 2)
) %}`),
      Next: S.readState,
    },
    [S.outOfRetries]: {
      Type: "Pass",
      Comment: "Still transient after every retry: not sent, with its last status.",
      Output: `{% $merge([$states.input, { 'done': [$states.input.done, ${finished("$states.input.pending", "'not-sent'", reasonOf("last"))}], 'pending': [] }]) %}`,
      Next: S.record,
    },
    [S.callFailed]: {
      Type: "Pass",
      Comment:
        "The call failed as a whole: every pending entry is unknown unless the error proves SES sent nothing (not sent).",
      Output: oneLine(`{% (
  $error := $states.input.call_error;
  $outcome := $error.Error in ${list(CALL_NOT_SENT)} ? 'not-sent' : 'unknown';
  $merge([$states.input, { 'done': [$states.input.done, ${finished("$states.input.pending", "$outcome", reasonOf("$error"))}], 'pending': [] }])
) %}`),
      Next: S.record,
    },
  };
}

/** The end: outcomes recorded, admissions given back and pointers dead-lettered, then the counts. */
function endStates(p: SenderParameters) {
  const S = SENDER_STATES;
  const count = (condition: string) => `$count($states.input.done[${condition}])`;
  return {
    [S.record]: {
      Type: "Task",
      Comment:
        "Every entry's one outcome, in the occurrence's item (redrive reads it). A failed record changes no outcome.",
      Resource: `arn:${p.partition}:states:::dynamodb:updateItem`,
      Arguments: {
        TableName: p.ledger.tableName,
        Key: { [LEDGER_KEY]: { S: `{% ${OCCURRENCE_KEY} %}` } },
        UpdateExpression: `SET ${OCCURRENCE_ATTRIBUTES.outcomes} = :outcomes`,
        ExpressionAttributeValues: {
          ":outcomes": {
            M: "{% $merge([$states.input.done.{ item.recipient: { 'M': { 'outcome': { 'S': outcome }, 'reason': { 'S': reason } } } }]) %}",
          },
        },
      },
      Retry: [retryBusy(DYNAMODB_BUSY)],
      Output: "{% $states.input %}",
      Catch: [
        {
          ErrorEquals: ["States.ALL"],
          Next: S.anyToSettle,
          Output: "{% $merge([$states.input, { 'record_error': $states.errorOutput }]) %}",
        },
      ],
      Next: S.anyToSettle,
    },
    [S.anyToSettle]: {
      Type: "Choice",
      Choices: [
        { Condition: `{% ${count(`${NEEDS_POINTER}${p.gate ? ` or ${NEEDS_RELEASE}` : ""}`)} > 0 %}`, Next: S.settle },
      ],
      Default: S.anyFailed,
    },
    [S.settle]: settleStates(p),
    [S.anyFailed]: {
      Type: "Choice",
      Choices: [{ Condition: `{% ${count("outcome in ['not-sent', 'unknown']")} > 0 %}`, Next: S.failed }],
      Default: S.done,
    },
    [S.failed]: {
      Type: "Fail",
      Error: "Sender.EntriesFailed",
      Cause: "entries were not sent or their outcome is unknown; each is in the dead-letter queue as a pointer",
    },
    [S.done]: {
      Type: "Succeed",
      Output: `{% { 'sent': ${count("outcome = 'sent'")}, 'skipped': ${count("outcome = 'skipped'")}, 'opted_out': ${count("reason = 'opted-out'")}, 'capped': ${count("reason = 'capped'")}, 'held': ${count("reason = 'paused'")}, 'cancelled': ${count("reason = 'cancelled'")} } %}`,
    },
  };
}

/**
 * Per entry that needs it: its admission given back (not sent, or held after admission), then its pointer
 * dead-lettered (not sent, unknown, or held by a pause). The pointer names the campaign by its schedule's group.
 */
function settleStates(p: SenderParameters) {
  const S = SENDER_STATES;
  const pointer = oneLine(`{% (
  $i := $states.input.input;
  $parts := $split($i.schedule, '/');
  $string({ 'campaign': $substringAfter($parts[1], '${CAMPAIGN_PREFIX}'), 'schedule_name': $parts[2], 'scheduled_time': $i.scheduled_time,
'recipients': [$states.input.failure.item.recipient], 'outcome': $states.input.failure.outcome, 'reason': $states.input.failure.reason })
) %}`);
  const states: Record<string, unknown> = {
    [`${S.deadLetterEntry}?`]: {
      Type: "Choice",
      Choices: [{ Condition: `{% $states.input.failure.(${NEEDS_POINTER}) %}`, Next: S.deadLetterEntry }],
      Default: `${S.deadLetterEntry}Skipped`,
    },
    [S.deadLetterEntry]: {
      Type: "Task",
      Resource: `arn:${p.partition}:states:::sqs:sendMessage`,
      Arguments: { QueueUrl: p.deadLetterQueueUrl, MessageBody: pointer },
      Retry: [retryBusy(["States.ALL"])],
      Output: "{% 'dead-lettered' %}",
      Catch: [{ ErrorEquals: ["States.ALL"], Next: `${S.deadLetterEntry}Lost`, Output: "{% $states.errorOutput %}" }],
      End: true,
    },
    [`${S.deadLetterEntry}Skipped`]: { Type: "Pass", Output: "{% 'settled' %}", End: true },
    [`${S.deadLetterEntry}Lost`]: { Type: "Pass", Output: "{% { 'lost': $states.input } %}", End: true },
  };
  let start = `${S.deadLetterEntry}?`;
  if (p.gate) {
    start = `${S.releaseEntry}?`;
    const view = gateView("$states.input.failure.item", "$states.input.input");
    states[start] = {
      Type: "Choice",
      Choices: [{ Condition: `{% $states.input.failure.(${NEEDS_RELEASE}) %}`, Next: S.releaseEntry }],
      Default: `${S.deadLetterEntry}?`,
    };
    states[S.releaseEntry] = {
      Type: "Task",
      Comment: "Gives the entry's admission back: it was not sent, so a redrive of it is admitted again.",
      Resource: `arn:${p.partition}:states:::dynamodb:updateItem`,
      Arguments: releaseArguments(p.gate, `(${view})`),
      Retry: [retryBusy(DYNAMODB_BUSY)],
      Output: "{% $states.input %}",
      Catch: [{ ErrorEquals: ["States.ALL"], Next: `${S.deadLetterEntry}?`, Output: "{% $states.input %}" }],
      Next: `${S.deadLetterEntry}?`,
    };
  }
  return {
    Type: "Map",
    Comment: "Each entry that needs it: its admission given back, its pointer dead-lettered.",
    Items: `{% [$states.input.done[${NEEDS_POINTER}${p.gate ? ` or ${NEEDS_RELEASE}` : ""}]] %}`,
    ItemSelector: "{% { 'failure': $states.context.Map.Item.Value, 'input': $states.input.input } %}",
    MaxConcurrency: SENDER_CONCURRENCY.deadLetters,
    ItemProcessor: { ProcessorConfig: { Mode: "INLINE" }, StartAt: start, States: states },
    Output: "{% $merge([$states.input, { 'lost_pointers': [$states.result[$type($) = 'object']] }]) %}",
    Next: S.anyFailed,
  };
}

/**
 * JSONata: the opt-out key of a pending entry `$p`, as the endpoint records it (unsubscribeAddress: trimmed,
 * lower-cased). Addresses in a plan are 7-bit ASCII atoms without white space (email.ts), so lower-casing is enough.
 */
const OPT_OUT_KEY_OF = "$lowercase($p.entry.Destination.ToAddresses[0])";

/**
 * The opt-out look-up: `unchecked` holds the keys still to ask (distinct: BatchGetItem refuses a repeated key),
 * `opted` the keys found. Keys DynamoDB leaves unprocessed are asked again with backoff; a failed call, or keys still
 * unprocessed at the end, fail their entries unsent. Then opted-out entries leave `pending`, counted.
 */
function optOutStates(p: SenderParameters, optOuts: { tableName: string }, next: string) {
  return { ...lookUpStates(p, optOuts), ...dropStates(p, next) };
}

/** The BatchGetItem rounds: unprocessed keys asked again after a backoff, until OPT_OUT_LOOKUP.maxRetries. */
function lookUpStates(p: SenderParameters, optOuts: { tableName: string }) {
  const S = SENDER_STATES;
  const table = JSON.stringify(optOuts.tableName);
  const keyOf = (fn: string) => `function($p) { ${fn.replace("$KEY", OPT_OUT_KEY_OF)} }`;
  const r = OPT_OUT_LOOKUP;
  if (ses.maxBulkEntries > dynamodb.maxBatchGetKeys)
    throw new Error("a bulk schedule's entries must fit one BatchGetItem");
  return {
    [S.lookUpOptOuts]: {
      Type: "Task",
      Comment: "Which of the entries' addresses opted out since the plan was made (one BatchGetItem: at most 50 keys).",
      Resource: sdkIntegrationArn(p.partition, "dynamodb", "batchGetItem"),
      Arguments: oneLine(`{% (
  $keys := $exists($states.input.unchecked) ? $states.input.unchecked : [$distinct($map($states.input.pending, ${keyOf("$KEY")}))];
  { 'RequestItems': { ${table}: { 'Keys': [$map($keys, function($k) { { '${OPT_OUT_KEY}': { 'S': $k } } })], 'ProjectionExpression': '#k', 'ExpressionAttributeNames': { '#k': '${OPT_OUT_KEY}' } } } }
) %}`),
      Retry: [retryBusy([...DYNAMODB_BUSY, "DynamoDB.RequestLimitExceededException"])],
      Output: oneLine(`{% $merge([$states.input, {
  'opted': [$states.input.opted, $lookup($states.result.Responses, ${table}).${OPT_OUT_KEY}.S],
  'unchecked': [$lookup($states.result.UnprocessedKeys, ${table}).Keys.${OPT_OUT_KEY}.S],
  'lookups': ($exists($states.input.lookups) ? $states.input.lookups : 0) + 1
}]) %}`),
      Catch: [
        {
          ErrorEquals: ["States.ALL"],
          Next: S.lookUpFailed,
          Output: oneLine(`{% $merge([$states.input, {
  'unchecked': $exists($states.input.unchecked) ? $states.input.unchecked : [$distinct($map($states.input.pending, ${keyOf("$KEY")}))],
  'lookup_error': $states.errorOutput
}]) %}`),
        },
      ],
      Next: S.unprocessed,
    },
    [S.unprocessed]: {
      Type: "Choice",
      Choices: [
        {
          Condition: `{% $count($states.input.unchecked) > 0 and $states.input.lookups <= ${r.maxRetries} %}`,
          Next: S.lookUpBackoff,
        },
        { Condition: "{% $count($states.input.unchecked) > 0 %}", Next: S.lookUpFailed },
      ],
      Default: S.dropOptedOut,
    },
    [S.lookUpBackoff]: {
      Type: "Wait",
      Comment:
        "DynamoDB left keys unprocessed (its capacity): ask for those alone again, after a backoff with equal jitter.",
      Seconds: oneLine(`{% (
  $d := $min([${r.maxDelaySeconds}, ${r.intervalSeconds} * $power(${r.backoffRate}, $states.input.lookups - 1)]);
  $ceil($d / 2 + $random() * $d / 2)
) %}`),
      Next: S.lookUpOptOuts,
    },
  };
}

/** Entries whose look-up failed are not sent; opted-out ones are skipped and counted. */
function dropStates(p: SenderParameters, next: string) {
  const S = SENDER_STATES;
  const keyOf = (fn: string) => `function($p) { ${fn.replace("$KEY", OPT_OUT_KEY_OF)} }`;
  const r = OPT_OUT_LOOKUP;
  return {
    [S.lookUpFailed]: {
      Type: "Pass",
      Comment: "An entry whose address could not be looked up is not sent: it is dead-lettered, with the error.",
      Output: oneLine(`{% (
  $unchecked := $states.input.unchecked;
  $error := $states.input.lookup_error ? $states.input.lookup_error : { 'Error': 'OptOut.Unprocessed', 'Cause': 'DynamoDB left the opt-out look-up unprocessed after ${1 + r.maxRetries} tries' };
  $merge([$states.input, {
'done': [$states.input.done, $filter($states.input.pending, ${keyOf("$KEY in $unchecked")}).{ 'item': $.${SLIM}, 'outcome': 'not-sent', 'reason': 'OptOut.LookUpFailed: ' & ${reasonOf("$error")} }],
'pending': [$filter($states.input.pending, ${keyOf("$not($KEY in $unchecked)")})],
'unchecked': []
  }])
) %}`),
      Next: S.dropOptedOut,
    },
    [S.dropOptedOut]: {
      Type: "Pass",
      Comment: "Opted out since the plan was made: skipped and counted, never sent, never dead-lettered.",
      Output: oneLine(`{% (
  $opted := [$states.input.opted];
  $keep := [$filter($states.input.pending, ${keyOf("$not($KEY in $opted)")})];
  $merge([$states.input, {
'done': [$states.input.done, $filter($states.input.pending, ${keyOf("$KEY in $opted")}).{ 'item': $.${SLIM}, 'outcome': 'skipped', 'reason': 'opted-out' }],
'pending': $keep, 'opted_out': $count($states.input.pending) - $count($keep), 'opted': [], 'unchecked': [] }])
) %}`),
      Next: S.anyOptedOut,
    },
    [S.anyOptedOut]: {
      Type: "Choice",
      Choices: [{ Condition: "{% $states.input.opted_out > 0 %}", Next: S.countOptedOut }],
      Default: next,
    },
    [S.countOptedOut]: {
      Type: "Task",
      Comment:
        "Opted-out entries are counted per campaign, in one try (the execution's output counts them too): EXPRESS's 5 minutes leave no room for retries, and a lost count does not stop the others' send.",
      Resource: sdkIntegrationArn(p.partition, "cloudwatch", "putMetricData"),
      Arguments: {
        Namespace: OPT_OUT_METRIC.namespace,
        MetricData: [
          {
            MetricName: OPT_OUT_METRIC.name,
            Dimensions: [{ Name: "campaign", Value: "{% $states.input.input.campaign %}" }],
            Value: "{% $states.input.opted_out %}",
            Unit: "Count",
          },
        ],
      },
      Output: "{% $states.input %}",
      Catch: [{ ErrorEquals: ["States.ALL"], Next: next, Output: "{% $states.input %}" }],
      Next: next,
    },
  };
}

/**
 * With a cap: every entry admitted on its own (frequency-cap.ts's conditional update), then a capped count. An entry
 * whose admission fails for another reason is not sent (it holds no admission to give back).
 */
function admissionStates(p: SenderParameters, gate: Admissions) {
  const S = SENDER_STATES;
  const view = "$states.input.gate";
  return {
    [S.admit]: {
      Type: "Map",
      Items: "{% $states.input.pending %}",
      ItemSelector: `{% { 'item': $states.context.Map.Item.Value, 'gate': ${gateView("$states.context.Map.Item.Value", "$states.input.input")} } %}`,
      MaxConcurrency: SENDER_CONCURRENCY.admissions,
      ItemProcessor: admitEntryProcessor(p, gate, view),
      Output: oneLine(`{% $merge([$states.input, {
  'pending': [$states.result[admission in ['admitted', 'repeat']].$merge([item, { 'admitted': true }])],
  'done': [$states.input.done,
$states.result[admission = 'error'].{ 'item': item.${SLIM}, 'outcome': 'not-sent', 'reason': 'Cap.AdmissionFailed: ' & ${reasonOf("error")} },
$states.result[admission = 'capped'].{ 'item': item.${SLIM}, 'outcome': 'skipped', 'reason': 'capped' }],
  'capped': $count($states.result[admission = 'capped'])
}]) %}`),
      Next: S.anyCapped,
    },
    [S.anyCapped]: {
      Type: "Choice",
      Choices: [{ Condition: "{% $states.input.capped > 0 %}", Next: S.countCapped }],
      Default: S.anyPending,
    },
    [S.countCapped]: {
      Type: "Task",
      Comment: "Capped entries are dropped and counted per campaign; a lost count does not stop the others' send.",
      Resource: sdkIntegrationArn(p.partition, "cloudwatch", "putMetricData"),
      Arguments: {
        Namespace: CAPPED_METRIC.namespace,
        MetricData: [
          {
            MetricName: CAPPED_METRIC.name,
            Dimensions: [{ Name: "campaign", Value: "{% $states.input.input.campaign %}" }],
            Value: "{% $states.input.capped %}",
            Unit: "Count",
          },
        ],
      },
      Output: "{% $states.input %}",
      Retry: [retryBusy(["CloudWatch.InternalServiceException", "CloudWatch.ThrottlingException"])],
      Catch: [{ ErrorEquals: ["States.ALL"], Next: S.anyPending, Output: "{% $states.input %}" }],
      Next: S.anyPending,
    },
  };
}

/** One entry's admission: the conditional update, and on refusal a look-up telling a repeat from the cap. */
function admitEntryProcessor(p: SenderParameters, gate: Admissions, view: string) {
  const S = SENDER_STATES;
  return {
    ProcessorConfig: { Mode: "INLINE" },
    StartAt: S.admitEntry,
    States: {
      [S.admitEntry]: {
        Type: "Task",
        Resource: `arn:${p.partition}:states:::dynamodb:updateItem`,
        Arguments: admissionArguments(gate, view),
        Retry: [retryBusy(DYNAMODB_BUSY)],
        Output: "{% { 'item': $states.input.item, 'admission': 'admitted' } %}",
        Catch: [
          {
            ErrorEquals: ["DynamoDB.ConditionalCheckFailedException"],
            Next: S.lookUpEntry,
            Output: "{% $states.input %}",
          },
          {
            ErrorEquals: ["States.ALL"],
            Next: `${S.admitEntry}Failed`,
            Output: "{% { 'item': $states.input.item, 'admission': 'error', 'error': $states.errorOutput } %}",
          },
        ],
        End: true,
      },
      [S.lookUpEntry]: {
        Type: "Task",
        Comment: "Refused: a repeat of an admitted entry (not sent again), or the cap.",
        Resource: `arn:${p.partition}:states:::dynamodb:getItem`,
        Arguments: lookUpArguments(gate, view),
        Retry: [retryBusy(DYNAMODB_BUSY)],
        Output: `{% { 'item': $states.input.item, 'admission': ${isRepeat(view)} ? 'repeat' : 'capped' } %}`,
        Catch: [
          {
            ErrorEquals: ["States.ALL"],
            Next: `${S.admitEntry}Failed`,
            Output: "{% { 'item': $states.input.item, 'admission': 'error', 'error': $states.errorOutput } %}",
          },
        ],
        End: true,
      },
      [`${S.admitEntry}Failed`]: { Type: "Pass", End: true },
    },
  };
}
