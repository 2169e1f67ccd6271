/**
 * The sender's end (sender-definition.ts): every entry's outcome recorded in the occurrence item, admissions given
 * back and pointers dead-lettered where needed, then the execution's counts (or Sender.EntriesFailed).
 */
import { DYNAMODB_BUSY, releaseArguments } from "../core/send/frequency-cap";
import { LEDGER_KEY, OCCURRENCE_ATTRIBUTES } from "../core/send/ledger";
import { SENDER_CONCURRENCY } from "../core/send/sender-contract";
import { CAMPAIGN_PREFIX } from "../core/plan/naming";
import { releaseSlotArguments } from "../core/send/number-limit";
import {
  gateView,
  NEEDS_POINTER,
  NEEDS_RELEASE,
  NEEDS_SLOT_RELEASE,
  oneLine,
  OCCURRENCE_KEY,
  retryBusy,
  SENDER_STATES,
  SenderParameters,
} from "./sender-states";

/** JSONata: the entries of `done` the settle Map takes: a pointer to send, or a cap admission or slot to give back. */
const toSettle = (p: SenderParameters) =>
  [NEEDS_POINTER, ...(p.gate ? [NEEDS_RELEASE] : []), ...(p.sms ? [NEEDS_SLOT_RELEASE] : [])].join(" or ");

/** The end: outcomes recorded, admissions given back and pointers dead-lettered, then the counts. */
export function endStates(p: SenderParameters) {
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
      Choices: [{ Condition: `{% ${count(toSettle(p))} > 0 %}`, Next: S.settle }],
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
  if (p.sms) {
    const next = start;
    start = `${S.releaseSlot}?`;
    states[start] = {
      Type: "Choice",
      Choices: [{ Condition: `{% $states.input.failure.(${NEEDS_SLOT_RELEASE}) %}`, Next: S.releaseSlot }],
      Default: next,
    };
    states[S.releaseSlot] = {
      Type: "Task",
      Comment: "Gives the text's same-subject slot back: it was not sent, so it does not count against the number.",
      Resource: `arn:${p.partition}:states:::dynamodb:updateItem`,
      Arguments: releaseSlotArguments(p.ledger.tableName, "$states.input.failure.item", "$states.input.input"),
      Retry: [retryBusy(DYNAMODB_BUSY)],
      Output: "{% $states.input %}",
      Catch: [{ ErrorEquals: ["States.ALL"], Next: next, Output: "{% $states.input %}" }],
      Next: next,
    };
  }
  if (p.gate) {
    const next = start;
    start = `${S.releaseEntry}?`;
    const view = gateView("$states.input.failure.item", "$states.input.input");
    states[start] = {
      Type: "Choice",
      Choices: [{ Condition: `{% $states.input.failure.(${NEEDS_RELEASE}) %}`, Next: S.releaseEntry }],
      Default: next,
    };
    states[S.releaseEntry] = {
      Type: "Task",
      Comment: "Gives the entry's admission back: it was not sent, so a redrive of it is admitted again.",
      Resource: `arn:${p.partition}:states:::dynamodb:updateItem`,
      Arguments: releaseArguments(p.gate, `(${view})`),
      Retry: [retryBusy(DYNAMODB_BUSY)],
      Output: "{% $states.input %}",
      Catch: [{ ErrorEquals: ["States.ALL"], Next: next, Output: "{% $states.input %}" }],
      Next: next,
    };
  }
  return {
    Type: "Map",
    Comment: "Each entry that needs it: its admission given back, its pointer dead-lettered.",
    Items: `{% [$states.input.done[${toSettle(p)}]] %}`,
    ItemSelector: "{% { 'failure': $states.context.Map.Item.Value, 'input': $states.input.input } %}",
    MaxConcurrency: SENDER_CONCURRENCY.deadLetters,
    ItemProcessor: { ProcessorConfig: { Mode: "INLINE" }, StartAt: start, States: states },
    Output: "{% $merge([$states.input, { 'lost_pointers': [$states.result[$type($) = 'object']] }]) %}",
    Next: S.anyFailed,
  };
}
