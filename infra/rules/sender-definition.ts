/**
 * The bulk sender (Amazon States Language, JSONata): a bulk schedule starts this small EXPRESS state machine, which
 * sends its entries with SES v2 SendBulkEmail. Pure: parameters in, ASL object out; no Lambda.
 *
 * Why not let Scheduler call SendBulkEmail itself: SendBulkEmail answers 200 with a status per entry
 * (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_BulkEmailEntryResult.html), which Scheduler cannot see,
 * so failed entries would be lost silently. The sender reads every entry's status:
 * - SUCCESS: sent; never sent again (a retry carries the other entries only).
 * - ACCOUNT_THROTTLED, TRANSIENT_FAILURE (TRANSIENT_ENTRY_STATUSES): retried alone, with backoff, ENTRY_RETRY.maxRetries
 *   times; an entry still failing then is dead-lettered with its last status.
 * - any other status (MESSAGE_REJECTED, ACCOUNT_DAILY_QUOTA_EXCEEDED, …), or no result for the entry: dead-lettered
 *   at once, with the status and SES's error text (a daily quota or a paused account does not clear in 5 minutes).
 * A failed call as a whole: SES has no idempotency token, so a call whose outcome is unknown (a timeout, a 5xx) may
 * have sent some entries. The whole call is retried only on errors that mean SES refused the request
 * (CALL_NOT_SENT_RETRYABLE: throttling); any other failure dead-letters every pending entry, marked `delivery:
 * "unknown"` when the error does not say that nothing was sent (CALL_NOT_SENT), so a duplicate needs a human (or the
 * redrive's choice), never a blind retry.
 *
 * Input (the schedule's Target.Input, built by the fan-out; infra/rules/bulk-request.ts builds the same in TypeScript):
 *   {"bulk": <SendBulkEmail request>, "recipients": [<recipient id per entry>], "campaign": "<campaign tag>",
 *    "schedule": "<aws.scheduler.schedule-arn>", "scheduled_time": "<aws.scheduler.scheduled-time>"}
 *
 * With a frequency cap (`gate`) the sender is the gate for bulk schedules: each entry is admitted on its own with the
 * gate's conditional update (gate-definition.ts: same table, key and occurrence), a repeat of an admitted entry is
 * skipped, a capped entry is dropped and counted (CappedSends, per campaign), the rest are sent; an entry that fails
 * after its admission gives the admission back before it is dead-lettered.
 *
 * With an opt-out table (`optOuts`: the unsubscribe endpoint records every one-click opt-out there), the sender looks
 * its pending entries up before anything else (SendBulkEmail has no ListManagementOptions, so SES would not filter
 * them): one BatchGetItem of at most dynamodb.maxBatchGetKeys keys, its UnprocessedKeys asked again with backoff; an
 * opted-out entry is dropped and counted (OptedOutSends, per campaign), never sent and never dead-lettered. An entry
 * whose look-up fails (the call, or keys still unprocessed after OPT_OUT_LOOKUP.maxRetries) is not sent: it is
 * dead-lettered "not-sent" with the error, never sent unchecked.
 *
 * Dead letters: one SQS message per entry, `{"input": <this input holding that entry alone>, "error": {"Error",
 * "Cause"}, "delivery": "not-sent" | "unknown"}` (`release_error` too when giving back its admission failed): the
 * gate's `{input, error}` shape, so a redrive re-sends `input` as it is. The execution then fails
 * (SendBulk.EntriesFailed); with nothing dead-lettered it succeeds with counts only (no address).
 */
import {
  Admissions,
  admissionArguments,
  CAPPED_METRIC,
  DYNAMODB_BUSY,
  isRepeat,
  lookUpArguments,
  releaseArguments,
} from "./frequency-cap";
import { sdkIntegrationArn } from "./naming";
import { dynamodb, ses } from "./quotas";
import { OPT_OUT_KEY } from "./unsubscribe-endpoint";

export interface SenderParameters {
  partition: string;
  deadLetterQueueUrl: string;
  /**
   * With a frequency cap: the gate's table and cap, against which every entry is admitted.
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
/** Whole-call errors after which SES sent nothing (client faults of SendBulkEmail): not retried, but not unknown. */
export const CALL_NOT_SENT = [
  ...CALL_NOT_SENT_RETRYABLE,
  "SesV2.AccountSuspendedException",
  "SesV2.BadRequestException",
  "SesV2.MailFromDomainNotVerifiedException",
  "SesV2.MessageRejected",
  "SesV2.NotFoundException",
  "SesV2.SendingPausedException",
] as const;

/** How transient entries are retried: rounds of SendBulkEmail after the first, and the backoff between them. */
export const ENTRY_RETRY = { maxRetries: 3, intervalSeconds: 2, backoffRate: 2, maxDelaySeconds: 8 } as const;
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
 * How a busy DynamoDB, CloudWatch or SQS call is retried: shorter than the gate's, so that 50 entries fit EXPRESS's
 * 5 minutes (senderWorstCaseSeconds).
 */
export const BUSY_RETRY = { maxAttempts: 3, intervalSeconds: 1, backoffRate: 2, maxDelaySeconds: 4 } as const;
/** Assumed round trip of one DynamoDB, CloudWatch or SQS call from a task, in seconds (as the fan-out's pacing assumes). */
const BUSY_CALL_SECONDS = 1;

function retryBusy(errors: readonly string[]) {
  const r = BUSY_RETRY;
  return {
    ErrorEquals: [...errors],
    IntervalSeconds: r.intervalSeconds,
    BackoffRate: r.backoffRate,
    MaxAttempts: r.maxAttempts,
    MaxDelaySeconds: r.maxDelaySeconds,
    JitterStrategy: "FULL",
  };
}

/** One busy call's worst case: every attempt slow, every delay at its cap. */
function busyCallWorstSeconds(): number {
  let total = BUSY_CALL_SECONDS;
  for (let a = 0; a < BUSY_RETRY.maxAttempts; a++)
    total +=
      Math.min(BUSY_RETRY.intervalSeconds * BUSY_RETRY.backoffRate ** a, BUSY_RETRY.maxDelaySeconds) +
      BUSY_CALL_SECONDS;
  return total;
}

/**
 * The longest one sender execution can run, at ses.maxBulkEntries entries: every call slow and retried to its limit,
 * every backoff at its cap. It must stay under EXPRESS's 5 minutes, or Step Functions would end it mid-way and
 * entries still pending would be lost.
 */
export function senderWorstCaseSeconds(entries: number = ses.maxBulkEntries, capped = true, checked = true): number {
  const waves = (concurrency: number) => Math.ceil(entries / concurrency);
  let call = CALL_RETRY.timeoutSeconds;
  for (let a = 0; a < CALL_RETRY.maxAttempts; a++)
    call +=
      Math.min(CALL_RETRY.intervalSeconds * CALL_RETRY.backoffRate ** a, CALL_RETRY.maxDelaySeconds) +
      CALL_RETRY.timeoutSeconds;
  let total = call;
  for (let r = 0; r < ENTRY_RETRY.maxRetries; r++)
    total += Math.min(ENTRY_RETRY.intervalSeconds * ENTRY_RETRY.backoffRate ** r, ENTRY_RETRY.maxDelaySeconds) + call;
  // Admission (update, then look-up when refused), the capped metric, release and dead letter of each entry.
  const busy = busyCallWorstSeconds();
  const admit = capped ? waves(SENDER_CONCURRENCY.admissions) * 2 * busy + busy : 0;
  // The opt-out look-up: every round slow and retried, every backoff at its cap, then the opted-out metric (one try).
  let lookUp = checked ? busy * (1 + OPT_OUT_LOOKUP.maxRetries) + BUSY_CALL_SECONDS : 0;
  for (let r = 0; checked && r < OPT_OUT_LOOKUP.maxRetries; r++)
    lookUp += Math.min(
      OPT_OUT_LOOKUP.intervalSeconds * OPT_OUT_LOOKUP.backoffRate ** r,
      OPT_OUT_LOOKUP.maxDelaySeconds,
    );
  const deadLetter = waves(SENDER_CONCURRENCY.deadLetters) * (capped ? 2 : 1) * busy;
  return total + lookUp + admit + deadLetter;
}

export const SENDER_STATES = {
  prepare: "Prepare",
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
  send: "Send",
  sort: "Sort",
  again: "Again",
  backoff: "Backoff",
  outOfRetries: "OutOfRetries",
  callFailed: "CallFailed",
  finish: "Finish",
  deadLetter: "DeadLetterEntries",
  releaseEntry: "ReleaseEntry",
  deadLetterEntry: "DeadLetterEntry",
  failed: "Failed",
  done: "Done",
} as const;

/** A JSONata expression written over several lines, as one line (the ASL schema wants `{% … %}` on one). */
const oneLine = (text: string) => text.replace(/\n\s*/g, " ");

const list = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(", ")}]`;

/** JSONata: the gate-shaped view of one pending entry (`{entry, recipient}` at `item`) of the execution input `input`. */
const gateView = (item: string, input: string) =>
  `{'email': ${item}.entry, 'campaign': ${input}.campaign, 'schedule': ${input}.schedule, 'scheduled_time': ${input}.scheduled_time}`;

export function senderDefinition(p: SenderParameters): Record<string, unknown> {
  const S = SENDER_STATES;
  const capped = p.gate !== undefined;
  const afterOptOuts = capped ? S.admit : S.anyPending;
  const checked = p.optOuts !== undefined;
  return {
    Comment: `sendtime bulk sender: SendBulkEmail, transient entries retried alone, each failed entry dead-lettered${capped ? `; at most ${p.gate!.cap.max} sends per address per ${p.gate!.cap.per} (UTC)` : ""}`,
    QueryLanguage: "JSONata",
    StartAt: S.prepare,
    States: {
      [S.prepare]: {
        Type: "Pass",
        Comment: "Pairs each entry with its recipient id; counts start at zero.",
        Output: `{% { 'input': $states.input, 'pending': [$map($states.input.bulk.BulkEmailEntries, function($e, $i) { { 'entry': $e, 'recipient': $states.input.recipients[$i] } })], 'failed': [], 'sent': 0, 'capped': 0, 'repeats': 0, 'round': 0${checked ? ", 'opted_out': 0" : ""} } %}`,
        Next: checked ? S.lookUpOptOuts : afterOptOuts,
      },
      ...(p.optOuts ? optOutStates(p, p.optOuts, afterOptOuts) : {}),
      ...(p.gate ? admissionStates(p, p.gate) : {}),
      [S.anyPending]: {
        Type: "Choice",
        Choices: [{ Condition: "{% $count($states.input.pending) > 0 %}", Next: S.send }],
        Default: S.finish,
      },
      ...sendStates(p),
      ...retryStates(p),
      ...endStates(p),
    },
  };
}

/** The call and the sorting of its results: sent entries counted, transient ones kept, the rest failed. */
function sendStates(p: SenderParameters) {
  const S = SENDER_STATES;
  const capped = p.gate !== undefined;
  return {
    [S.send]: {
      Type: "Task",
      Resource: sdkIntegrationArn(p.partition, "sesv2", "sendBulkEmail"),
      // The request as the fan-out built it, with the entries still to send.
      Arguments: "{% $merge([$states.input.input.bulk, { 'BulkEmailEntries': [$states.input.pending.entry] }]) %}",
      TimeoutSeconds: CALL_RETRY.timeoutSeconds,
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
      Output:
        "{% $merge([$states.input, { 'results': [$states.result.BulkEmailEntryResults], 'round': $states.input.round + 1 }]) %}",
      Catch: [
        {
          ErrorEquals: ["States.ALL"],
          Next: S.callFailed,
          Output: "{% $merge([$states.input, { 'call_error': $states.errorOutput }]) %}",
        },
      ],
      Next: S.sort,
    },
    [S.sort]: {
      Type: "Pass",
      Comment:
        "Results are in the entries' order. Sent: counted; transient: kept for another round; the rest (no result included): failed.",
      Output: oneLine(`{% (
  $transient := ${list(TRANSIENT_ENTRY_STATUSES)};
  $graded := [$map($states.input.pending, function($p, $i) { (
$r := $states.input.results[$i];
{ 'item': $merge([$p, { 'last': { 'Error': $r.Status ? $r.Status : 'SendBulk.NoResult', 'Cause': $r.Error ? $r.Error : '' } }]),
  'kind': $r.Status = '${SENT_STATUS}' ? 'sent' : ($r.Status in $transient ? 'transient' : 'failed') }
  ) })];
  $merge([$states.input, {
'sent': $states.input.sent + $count($graded[kind = 'sent']),
'pending': [$graded[kind = 'transient'].item],
'failed': [$states.input.failed, $graded[kind = 'failed'].{ 'item': item, 'error': item.last, 'delivery': item.last.Error = 'SendBulk.NoResult' ? 'unknown' : 'not-sent', 'admitted': ${capped} }],
'results': []
  }])
) %}`),
      Next: S.again,
    },
  };
}

/** Another round for the transient entries, with backoff, until the retries run out; a failed call fails them all. */
function retryStates(p: SenderParameters) {
  const S = SENDER_STATES;
  const capped = p.gate !== undefined;
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
      Default: S.finish,
    },
    [S.backoff]: {
      Type: "Wait",
      Comment: "Exponential backoff with equal jitter: half the delay, plus up to the other half at random.",
      Seconds: oneLine(`{% (
  $d := $min([${ENTRY_RETRY.maxDelaySeconds}, ${ENTRY_RETRY.intervalSeconds} * $power(${ENTRY_RETRY.backoffRate}, $states.input.round - 1)]);
  $ceil($d / 2 + $random() * $d / 2)
) %}`),
      Next: S.send,
    },
    [S.outOfRetries]: {
      Type: "Pass",
      Comment: "Still transient after every retry: dead-lettered with its last status.",
      Output: `{% $merge([$states.input, { 'failed': [$states.input.failed, $states.input.pending.{ 'item': $, 'error': last, 'delivery': 'not-sent', 'admitted': ${capped} }], 'pending': [] }]) %}`,
      Next: S.finish,
    },
    [S.callFailed]: {
      Type: "Pass",
      Comment:
        "The call failed as a whole: every pending entry is dead-lettered, marked unknown unless the error says nothing was sent.",
      Output: oneLine(`{% (
  $error := $states.input.call_error;
  $delivery := $error.Error in ${list(CALL_NOT_SENT)} ? 'not-sent' : 'unknown';
  $merge([$states.input, { 'failed': [$states.input.failed, $states.input.pending.{ 'item': $, 'error': $error, 'delivery': $delivery, 'admitted': ${capped} }], 'pending': [] }])
) %}`),
      Next: S.finish,
    },
  };
}

/** The end: failed entries dead-lettered (then the execution fails), or success with the counts. */
function endStates(p: SenderParameters) {
  const S = SENDER_STATES;
  return {
    [S.finish]: {
      Type: "Choice",
      Choices: [{ Condition: "{% $count($states.input.failed) > 0 %}", Next: S.deadLetter }],
      Default: S.done,
    },
    [S.deadLetter]: deadLetterStates(p),
    [S.failed]: {
      Type: "Fail",
      Error: "SendBulk.EntriesFailed",
      Cause: "entries failed and were put in the dead-letter queue, one message each",
    },
    [S.done]: {
      Type: "Succeed",
      Output: `{% { 'sent': $states.input.sent, 'capped': $states.input.capped, 'repeats': $states.input.repeats${p.optOuts ? ", 'opted_out': $states.input.opted_out" : ""} } %}`,
    },
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

/** Entries whose look-up failed are failed unsent; opted-out ones leave `pending`, counted. */
function dropStates(p: SenderParameters, next: string) {
  const S = SENDER_STATES;
  const keyOf = (fn: string) => `function($p) { ${fn.replace("$KEY", OPT_OUT_KEY_OF)} }`;
  const r = OPT_OUT_LOOKUP;
  return {
    [S.lookUpFailed]: {
      Type: "Pass",
      Comment:
        "An entry whose address could not be looked up is not sent: it is dead-lettered as not sent, with the error.",
      Output: oneLine(`{% (
  $unchecked := $states.input.unchecked;
  $error := $states.input.lookup_error ? $states.input.lookup_error : { 'Error': 'OptOut.Unprocessed', 'Cause': 'DynamoDB left the opt-out look-up unprocessed after ${1 + r.maxRetries} tries' };
  $merge([$states.input, {
'failed': [$states.input.failed, $filter($states.input.pending, ${keyOf("$KEY in $unchecked")}).{ 'item': $, 'error': $error, 'delivery': 'not-sent', 'admitted': false }],
'pending': [$filter($states.input.pending, ${keyOf("$not($KEY in $unchecked)")})],
'unchecked': []
  }])
) %}`),
      Next: S.dropOptedOut,
    },
    [S.dropOptedOut]: {
      Type: "Pass",
      Comment: "Opted out since the plan was made: dropped and counted, never sent, never dead-lettered.",
      Output: oneLine(`{% (
  $opted := [$states.input.opted];
  $keep := [$filter($states.input.pending, ${keyOf("$not($KEY in $opted)")})];
  $merge([$states.input, { 'pending': $keep, 'opted_out': $count($states.input.pending) - $count($keep), 'opted': [], 'unchecked': [] }])
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
 * With a cap: every entry admitted on its own (gate-definition.ts's conditional update), then a capped count. An entry
 * whose admission fails for another reason is dead-lettered unsent (it holds no admission to give back).
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
  'pending': [$states.result[admission = 'admitted'].item],
  'failed': [$states.input.failed, $states.result[admission = 'error'].{ 'item': item, 'error': error, 'delivery': 'not-sent', 'admitted': false }],
  'capped': $count($states.result[admission = 'capped']),
  'repeats': $count($states.result[admission = 'repeat'])
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

/**
 * One message per failed entry: its own input (the request holding that entry alone, and its recipient id), the error
 * and whether it may have been sent. With a cap, an admitted entry's admission is given back first (as the gate does),
 * so that a redrive of it is admitted again.
 */
function deadLetterStates(p: SenderParameters) {
  const S = SENDER_STATES;
  const body = (extra: string) =>
    `{% $string($merge([{ 'input': $merge([$states.input.input, { 'bulk': $merge([$states.input.input.bulk, { 'BulkEmailEntries': [$states.input.failure.item.entry] }]), 'recipients': [$states.input.failure.item.recipient] }]), 'error': $states.input.failure.error, 'delivery': $states.input.failure.delivery }${extra}])) %}`;
  const deadLetterEntry = {
    Type: "Task",
    Resource: `arn:${p.partition}:states:::sqs:sendMessage`,
    Arguments: {
      QueueUrl: p.deadLetterQueueUrl,
      MessageBody: body(", ($states.input.release_error ? { 'release_error': $states.input.release_error } : {})"),
    },
    Retry: [retryBusy(["States.ALL"])],
    Output: "{% 'dead-lettered' %}",
    End: true,
  };
  const states: Record<string, unknown> = { [S.deadLetterEntry]: deadLetterEntry };
  let start: string = S.deadLetterEntry;
  if (p.gate) {
    start = `${S.releaseEntry}?`;
    const view = `${gateView("$states.input.failure.item", "$states.input.input")}`;
    states[start] = {
      Type: "Choice",
      Choices: [{ Condition: "{% $states.input.failure.admitted %}", Next: S.releaseEntry }],
      Default: S.deadLetterEntry,
    };
    states[S.releaseEntry] = {
      Type: "Task",
      Comment: "Gives the entry's admission back, so that a redrive of it is admitted again.",
      Resource: `arn:${p.partition}:states:::dynamodb:updateItem`,
      Arguments: releaseArguments(p.gate, `(${view})`),
      Retry: [retryBusy(DYNAMODB_BUSY)],
      Output: "{% $states.input %}",
      Catch: [
        {
          ErrorEquals: ["DynamoDB.ConditionalCheckFailedException"],
          Next: S.deadLetterEntry,
          Output: "{% $states.input %}",
        },
        {
          ErrorEquals: ["States.ALL"],
          Next: S.deadLetterEntry,
          Output: "{% $merge([$states.input, { 'release_error': $states.errorOutput }]) %}",
        },
      ],
      Next: S.deadLetterEntry,
    };
  }
  return {
    Type: "Map",
    Comment: "One dead-letter message per failed entry.",
    Items: "{% $states.input.failed %}",
    ItemSelector: "{% { 'failure': $states.context.Map.Item.Value, 'input': $states.input.input } %}",
    MaxConcurrency: SENDER_CONCURRENCY.deadLetters,
    ItemProcessor: { ProcessorConfig: { Mode: "INLINE" }, StartAt: start, States: states },
    Output: "{% $states.input %}",
    Next: S.failed,
  };
}

/**
 * The longest an SES call can still be under way after the sender read the campaign's state: the state is read
 * right before every Send (the first and every retry round), so this is one state read and one Send with its
 * throttle retries, every attempt at its timeout and every delay at its cap. `cancel-campaign` and `pause-campaign`
 * wait this long after setting the state: then no execution that read the old state can still be sending.
 */
export function secondsFromStateReadToLastSend(): number {
  let call = CALL_RETRY.timeoutSeconds;
  for (let a = 0; a < CALL_RETRY.maxAttempts; a++)
    call +=
      Math.min(CALL_RETRY.intervalSeconds * CALL_RETRY.backoffRate ** a, CALL_RETRY.maxDelaySeconds) +
      CALL_RETRY.timeoutSeconds;
  return busyCallWorstSeconds() + call;
}
