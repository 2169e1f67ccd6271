/**
 * The SES round (sender-definition.ts), as often as transient entries need it: the campaign's state read right before
 * the call, SendEmail or SendBulkEmail, the sorting of the results, and another round with backoff.
 */
import { CAMPAIGN_STATE_ATTRIBUTES, LEDGER_KEY } from "../core/send/ledger";
import {
  CALL_NOT_SENT,
  CALL_NOT_SENT_RETRYABLE,
  CALL_RETRY,
  ENTRY_RETRY,
  SENT_STATUS,
  STATE_READ_RETRY,
  TRANSIENT_ENTRY_STATUSES,
} from "../core/send/sender-contract";
import { DYNAMODB_BUSY } from "../core/send/frequency-cap";
import { sdkIntegrationArn } from "../core/plan/naming";
import {
  CAMPAIGN_STATE_KEY,
  finished,
  list,
  oneLine,
  reasonOf,
  retryBusy,
  SENDER_STATES,
  SenderParameters,
  SLIM,
} from "./sender-states";

/** The campaign's state, right before every SES call: live sends; paused or cancelled skips; unreadable sends nothing. */
export function stateStates(p: SenderParameters) {
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
export function sendStates(p: SenderParameters) {
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
      Comment:
        "Texts go to SendTextMessage; a per-recipient schedule with SES list management is sent with SendEmail (ListManagementOptions).",
      Choices: [
        ...(p.sms ? [{ Condition: "{% $states.input.input.channel = 'sms' %}", Next: S.sendTexts }] : []),
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
export function retryStates() {
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
