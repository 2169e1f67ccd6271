/**
 * The sender's texts (sender-definition.ts): the same claim, cap, campaign-state read, record and settle as email,
 * and for an input of channel `sms` (infra/core/send/sms-input.ts) the same-subject limit of each number
 * (infra/core/send/number-limit.ts) and the round of SendTextMessage calls, one per pending entry in an inline Map.
 * Without SenderParameters.sms, an SMS input's entries are not sent.
 */
import { heldSlot, limitOf, lookUpSlotsArguments, takeSlotArguments } from "../core/send/number-limit";
import {
  SENDER_CONCURRENCY,
  SMS_CALL,
  SMS_NOT_SENT,
  SMS_OPTED_OUT,
  SMS_RETRYABLE,
  SMS_SERVICE,
} from "../core/send/sender-contract";
import { SMS_MAX_TTL_SECONDS, SMS_MIN_TTL_SECONDS } from "../core/send/sms-input";
import { DYNAMODB_BUSY } from "../core/send/frequency-cap";
import { sdkIntegrationArn } from "../core/plan/naming";
import { finished, list, oneLine, reasonOf, retryBusy, SENDER_STATES, SenderParameters, SLIM } from "./sender-states";

/** JSONata: the instant a state is entered, in epoch seconds and in milliseconds. */
const NOW_SECONDS = "$floor($toMillis($states.context.State.EnteredTime) / 1000)";
const NOW_MS = "$toMillis($states.context.State.EnteredTime)";

/** Without sendtime:sms: every entry of an SMS input is not sent (the claim and the record still happen). */
export function textsNotConfiguredStates() {
  const S = SENDER_STATES;
  const reason =
    "'Sms.NotConfigured: this stack has no sendtime:sms (no origination identity or SMS configuration set), so the sender sends no text'";
  return {
    [S.textsNotConfigured]: {
      Type: "Pass",
      Comment: "An SMS input reached a sender without SenderParameters.sms: nothing is sent; each entry is not sent.",
      Output: `{% $merge([$states.input, { 'done': [$states.input.done, ${finished("$states.input.pending", "'not-sent'", reason)}], 'pending': [] }]) %}`,
      Next: S.record,
    },
  };
}

/**
 * The same-subject limit, once per execution, after the cap: each entry with SameSubjectLimit takes a slot of its
 * number (tried in order), is a repeat of this occurrence's own slot, or is capped. A failed admission is not sent.
 */
export function numberLimitStates(p: SenderParameters) {
  const S = SENDER_STATES;
  return {
    [S.admitNumbers]: {
      Type: "Map",
      Comment: "Each number's same-subject limit (at most N texts in any rolling 24 h), in the ledger's num#<E.164>.",
      Items: "{% $states.input.pending %}",
      ItemSelector: "{% { 'item': $states.context.Map.Item.Value, 'input': $states.input.input, 'slot': 0 } %}",
      MaxConcurrency: SENDER_CONCURRENCY.numbers,
      ItemProcessor: numberProcessor(p),
      Output: oneLine(`{% $merge([$states.input, {
  'pending': [$states.result[admission in ['admitted', 'repeat', 'unlimited']].item],
  'done': [$states.input.done,
$states.result[admission = 'error'].{ 'item': item.${SLIM}, 'outcome': 'not-sent', 'reason': 'NumberLimit.AdmissionFailed: ' & ${reasonOf("error")} },
$states.result[admission = 'capped'].{ 'item': item.${SLIM}, 'outcome': 'skipped', 'reason': 'capped' }]
}]) %}`),
      Next: S.anyTextPending,
    },
    [S.anyTextPending]: {
      Type: "Choice",
      Choices: [{ Condition: "{% $count($states.input.pending) > 0 %}", Next: S.readState }],
      Default: S.record,
    },
  };
}

function numberProcessor(p: SenderParameters) {
  const table = p.ledger.tableName;
  const item = "$states.input.item";
  const failed = {
    ErrorEquals: ["States.ALL"],
    Next: "SlotFailed",
    Output: "{% { 'item': $states.input.item, 'admission': 'error', 'error': $states.errorOutput } %}",
  };
  return {
    ProcessorConfig: { Mode: "INLINE" },
    StartAt: "HasLimit",
    States: {
      HasLimit: {
        Type: "Choice",
        Choices: [{ Condition: `{% $exists(${item}.entry.SameSubjectLimit) %}`, Next: "TakeSlot" }],
        Default: "NoLimit",
      },
      NoLimit: { Type: "Pass", Output: "{% { 'item': $states.input.item, 'admission': 'unlimited' } %}", End: true },
      TakeSlot: {
        Type: "Task",
        Comment: "Takes slot `slot` of the number when it is free (older than the hold) and the others allow it.",
        Resource: `arn:${p.partition}:states:::dynamodb:updateItem`,
        Arguments: takeSlotArguments(table, {
          item,
          slot: "$states.input.slot",
          now: NOW_SECONDS,
          input: "$states.input.input",
        }),
        Retry: [retryBusy(DYNAMODB_BUSY)],
        Output:
          "{% { 'item': $merge([$states.input.item, { 'slot': $states.input.slot }]), 'admission': 'admitted' } %}",
        Catch: [
          {
            ErrorEquals: ["DynamoDB.ConditionalCheckFailedException"],
            Next: "NextSlot",
            Output: "{% $states.input %}",
          },
          failed,
        ],
        End: true,
      },
      NextSlot: {
        Type: "Choice",
        Choices: [{ Condition: `{% $states.input.slot + 1 < ${limitOf(item)} %}`, Next: "OneSlotOn" }],
        Default: "LookUpSlots",
      },
      OneSlotOn: {
        Type: "Pass",
        Output: "{% $merge([$states.input, { 'slot': $states.input.slot + 1 }]) %}",
        Next: "TakeSlot",
      },
      LookUpSlots: {
        Type: "Task",
        Comment: "Every slot refused: this occurrence's own slot (a retried write that landed) or the limit.",
        Resource: `arn:${p.partition}:states:::dynamodb:getItem`,
        Arguments: lookUpSlotsArguments(table, item),
        Retry: [retryBusy(DYNAMODB_BUSY)],
        Output: oneLine(`{% (
  $k := ${heldSlot("$states.result", "$states.input.input")};
  $exists($k) ? { 'item': $merge([$states.input.item, { 'slot': $k }]), 'admission': 'repeat' } : { 'item': $states.input.item, 'admission': 'capped' }
) %}`),
        Catch: [failed],
        End: true,
      },
      SlotFailed: { Type: "Pass", End: true },
    },
  };
}

/**
 * One round of texts: each pending entry still inside its window (before Until) is sent with SendTextMessage, at
 * most SENDER_CONCURRENCY.texts at once; the results sorted as sms.md says. Then the email round's Again.
 */
export function textRoundStates(p: SenderParameters, sms: NonNullable<SenderParameters["sms"]>) {
  const S = SENDER_STATES;
  return {
    [S.sendTexts]: {
      Type: "Map",
      Comment: "SendTextMessage per pending entry, its TimeToLive ending at the entry's Until.",
      Items: "{% $states.input.pending %}",
      ItemSelector: "{% { 'item': $states.context.Map.Item.Value, 'input': $states.input.input } %}",
      MaxConcurrency: SENDER_CONCURRENCY.texts,
      ItemProcessor: textProcessor(p, sms),
      Output: sortTexts(),
      Next: S.again,
    },
  };
}

function textProcessor(p: SenderParameters, sms: NonNullable<SenderParameters["sms"]>) {
  const request = oneLine(`{% (
  $e := $states.input.item.entry;
  $i := $states.input.input;
  $ttl := $floor(($toMillis($e.Until) - ${NOW_MS}) / 1000);
  { 'DestinationPhoneNumber': $e.DestinationPhoneNumber, 'OriginationIdentity': ${JSON.stringify(sms.originationIdentity)},
'ConfigurationSetName': ${JSON.stringify(sms.configurationSetName)}, 'MessageBody': $e.MessageBody, 'MessageType': $i.sms.MessageType,
'Context': $merge([{ 'campaign': $i.campaign, 'step': $string($i.step) }, $exists($i.variant) ? { 'variant': $i.variant } : {}]),
'TimeToLive': $max([${SMS_MIN_TTL_SECONDS}, $min([${SMS_MAX_TTL_SECONDS}, $ttl])]) }
) %}`);
  return {
    ProcessorConfig: { Mode: "INLINE" },
    StartAt: "InWindow",
    States: {
      InWindow: {
        Type: "Choice",
        Comment: "Until passed (the legal window closed, or the longest TimeToLive): not sent, skipped.",
        Choices: [{ Condition: `{% $toMillis($states.input.item.entry.Until) > ${NOW_MS} %}`, Next: "SendText" }],
        Default: "UntilPassed",
      },
      UntilPassed: { Type: "Pass", Output: "{% { 'item': $states.input.item, 'kind': 'legal-hours' } %}", End: true },
      SendText: {
        Type: "Task",
        Resource: sdkIntegrationArn(p.partition, SMS_SERVICE, "sendTextMessage"),
        Arguments: request,
        TimeoutSeconds: SMS_CALL.timeoutSeconds,
        Output: "{% { 'item': $states.input.item, 'kind': 'sent', 'MessageId': $states.result.MessageId } %}",
        Catch: [
          {
            ErrorEquals: ["States.ALL"],
            Next: "SendTextFailed",
            Output: "{% { 'item': $states.input.item, 'kind': 'error', 'error': $states.errorOutput } %}",
          },
        ],
        End: true,
      },
      SendTextFailed: { Type: "Pass", End: true },
    },
  };
}

/**
 * JSONata over the Map's results: sent; Until passed (skipped: legal-hours); throttled (another round); opted out
 * (skipped: opted-out); a client fault of the call (not sent, with the reason); anything else — a timeout, an
 * InternalServerException — unknown (the text may have left; never sent again by itself).
 */
function sortTexts(): string {
  return oneLine(`{% (
  $graded := [$map($states.result, function($r) { (
$err := $r.error.Error;
$cause := $r.error.Cause ? $r.error.Cause : '';
$opted := $err = '${SMS_OPTED_OUT.error}' and ($contains($cause, '${SMS_OPTED_OUT.reason}') or $contains($cause, /opted[ -]?out/i));
$kind := $r.kind = 'sent' ? 'sent' : ($r.kind = 'legal-hours' ? 'legal-hours' : ($err in ${list(SMS_RETRYABLE)} ? 'transient' : ($opted ? 'opted-out' : ($err in ${list(SMS_NOT_SENT)} ? 'not-sent' : 'unknown'))));
{ 'item': $merge([$r.item, { 'last': $r.error }]), 'kind': $kind }
  ) })];
  $skip := ['opted-out', 'legal-hours'];
  $merge([$states.input, {
'done': [$states.input.done, $graded[kind != 'transient'].{ 'item': item.${SLIM}, 'outcome': kind in $skip ? 'skipped' : kind, 'reason': kind in $skip ? kind : (kind = 'sent' ? '' : ${reasonOf("item.last")}) }],
'pending': [$graded[kind = 'transient'].item],
'round': $states.input.round + 1
  }])
) %}`);
}
