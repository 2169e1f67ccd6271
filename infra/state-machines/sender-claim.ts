/**
 * The sender's first step (sender-definition.ts): the claim of the occurrence in the ledger, so that a repeated
 * invocation sends nothing, and what a claim found already, or failed, means for the entries.
 */
import { DYNAMODB_BUSY } from "../core/send/frequency-cap";
import { LEDGER_KEY, LEDGER_TTL_ATTRIBUTE, LEDGER_TTL_DAYS, OCCURRENCE_ATTRIBUTES } from "../core/send/ledger";
import { finished, OCCURRENCE_KEY, reasonOf, retryBusy, SENDER_STATES, SenderParameters } from "./sender-states";

/** The claim of the occurrence: a conditional PutItem; already there means a repeated invocation, which ends here. */
export function claimStates(p: SenderParameters, next: string) {
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
