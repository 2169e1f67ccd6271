import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { eventDrivenFunction } from "./function-parts";
import { bundleUnsubscribeHandler, SES_OPT_OUT_HANDLER_NAME } from "./handler-bundle";
import { policyDocument, sesOptOutStatements, unsubscribeTrustPolicy } from "./iam";
import { JOURNEY_RETRY } from "./journeys";
import { ArnScope } from "./core/plan/naming";
import { subscriptionEventPattern } from "./core/consent/ses-subscription";

/** The SUBSCRIPTION event type of an SES event destination (API_EventDestination.html MatchingEventTypes). */
const SUBSCRIPTION_EVENTS = ["SUBSCRIPTION"];

export interface SesOptOutsArgs {
  /** The account and Region: the default event bus's ARN. Required. */
  scope: pulumi.Input<ArnScope>;
  /** The configuration set whose sends' SUBSCRIPTION events are published (the SesIdentity's). Required. */
  configurationSetName: pulumi.Input<string>;
  /** The contact list and topic of one-click unsubscribe (`sendtime:unsubscribe*`). Required. */
  contactListName: pulumi.Input<string>;
  topicName: string;
  /** The opt-out table the sender reads (the UnsubscribeEndpoint's). Required. */
  optOutTable: { arn: pulumi.Input<string>; name: pulumi.Input<string> };
  /**
   * The table's customer-managed KMS key.
   * @default the AWS managed key aws/dynamodb (no grant needed)
   */
  kmsKeyArn?: string;
  /** Days the function's logs are kept. Required: the stack passes `sendtime:logRetentionDays`. */
  logRetentionDays: number;
}

/**
 * SES's own opt-outs into the opt-out table. SES applies a contact-list opt-out only to sends with
 * ListManagementOptions, and SendBulkEmail has none, so the sender checks the opt-out table instead: this records
 * there what a recipient opts out of through SES itself (SES's unsubscribe header or page on a plain send of the
 * stack). The configuration set publishes SUBSCRIPTION events to the default EventBridge bus (the only bus SES
 * publishes to: API_EventBridgeDestination.html); a rule for the stack's contact list invokes a function from the
 * unsubscribe bundle (its second entry point, infra/handlers/ses-opt-outs.ts). EventBridge retries delivering for a
 * day, then dead-letters; the function's failed runs are retried twice, then sent to the same queue (the alarm's).
 */
export class SesOptOuts extends pulumi.ComponentResource {
  public readonly function: aws.lambda.Function;
  public readonly role: aws.iam.Role;
  /** Events neither delivered nor recorded: each is an opt-out the sender does not know. */
  public readonly deadLetterQueue: aws.sqs.Queue;
  public readonly rule: aws.cloudwatch.EventRule;

  constructor(name: string, args: SesOptOutsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:SesOptOuts", name, {}, opts);
    const parent = this;
    const scope = pulumi.output(args.scope);
    const defaultBusArn = scope.apply((s) => `arn:${s.partition}:events:${s.region}:${s.accountId}:event-bus/default`);

    publishSubscriptionEvents();
    const parts = eventDrivenFunction(
      name,
      {
        logRetentionDays: args.logRetentionDays,
        roleDescription: "Assumed by the sendtime function that records SES's opt-outs in the opt-out table",
        trustPolicy: scope.apply((s) => JSON.stringify(unsubscribeTrustPolicy(s.accountId))),
        policy: recordingPolicy,
        function: {
          description: "sendtime: records opt-outs made through SES (SUBSCRIPTION events) in the opt-out table",
          handler: SES_OPT_OUT_HANDLER_NAME,
          code: bundleUnsubscribeHandler().code,
          // One UpdateItem: 3 attempts of at most 2.5 s each (opt-out-table.ts), with room.
          timeout: 15,
          memorySize: 256,
          variables: {
            SENDTIME_SES_OPT_OUTS: pulumi
              .all([args.contactListName, args.optOutTable.name])
              .apply(([contactListName, optOutTable]) =>
                JSON.stringify({ contactListName, topicName: args.topicName, optOutTable }),
              ),
          },
        },
        routes: [
          {
            ruleName: `${name}-rule`,
            partsName: name,
            eventBusName: "default",
            description:
              "sendtime: SES opt-outs (Email Subscribed) of the stack's contact list, into the opt-out table",
            eventPattern: pulumi
              .output(args.contactListName)
              .apply((list) => JSON.stringify(subscriptionEventPattern(list))),
            targetId: "sendtime-opt-outs",
          },
        ],
        retry: JOURNEY_RETRY,
      },
      parent,
    );

    this.function = parts.function;
    this.role = parts.role;
    this.deadLetterQueue = parts.deadLetterQueue;
    this.rule = parts.rules[0];
    this.registerOutputs({ functionName: parts.function.name, deadLetterQueueUrl: parts.deadLetterQueue.url });

    function publishSubscriptionEvents() {
      new aws.sesv2.ConfigurationSetEventDestination(
        `${name}-events`,
        {
          configurationSetName: args.configurationSetName,
          eventDestinationName: "sendtime-opt-outs",
          eventDestination: {
            enabled: true,
            matchingEventTypes: SUBSCRIPTION_EVENTS,
            eventBridgeDestination: { eventBusArn: defaultBusArn },
          },
        },
        { parent },
      );
    }

    function recordingPolicy(w: { logGroupArn: pulumi.Output<string>; deadLetterQueueArn: pulumi.Output<string> }) {
      return pulumi
        .all([args.optOutTable.arn, w.logGroupArn, w.deadLetterQueueArn])
        .apply(([optOutTableArn, logGroupArn, deadLetterQueueArn]) =>
          JSON.stringify(
            policyDocument(
              sesOptOutStatements({ optOutTableArn, logGroupArn, deadLetterQueueArn, kmsKeyArn: args.kmsKeyArn }),
            ),
          ),
        );
    }
  }
}
