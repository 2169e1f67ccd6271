/**
 * Which entries may be sent (sender-definition.ts), after the claim and before the SES round: the opt-out look-up
 * (with the unsubscribe endpoint's table) and the frequency cap's admission of each entry (with `gate`).
 */
import {
  Admissions,
  admissionArguments,
  CAPPED_METRIC,
  DYNAMODB_BUSY,
  isRepeat,
  lookUpArguments,
} from "../core/send/frequency-cap";
import { OPT_OUT_LOOKUP, OPT_OUT_METRIC, SENDER_CONCURRENCY } from "../core/send/sender-contract";
import { sdkIntegrationArn } from "../core/plan/naming";
import { dynamodb, ses } from "../core/plan/quotas";
import { OPT_OUT_KEY } from "../core/consent/unsubscribe-endpoint";
import { gateView, oneLine, reasonOf, retryBusy, SENDER_STATES, SenderParameters, SLIM } from "./sender-states";

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
export function optOutStates(p: SenderParameters, optOuts: { tableName: string }, next: string) {
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
export function admissionStates(p: SenderParameters, gate: Admissions) {
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
