import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";

export interface SenderArgs {
  /**
   * The SES identity: a domain (publish its DKIM tokens as CNAMEs) or a single address (SES emails a link).
   * @example "example.com"
   */
  identity: string;
  /**
   * One-click unsubscribe (RFC 8058): the SES contact list and topic to create and to name in every send.
   * @default none
   */
  unsubscribe?: { contactList: string; topic: string };
}

/** SES sending: the identity, a configuration set with reputation metrics and suppression, event metrics, unsubscribe. */
export class Sender extends pulumi.ComponentResource {
  public readonly identityArn: pulumi.Output<string>;
  public readonly configurationSetName: pulumi.Output<string>;
  public readonly configurationSetArn: pulumi.Output<string>;
  /** DKIM CNAME tokens for a domain identity: `<token>._domainkey.<domain>` → `<token>.dkim.amazonses.com`. */
  public readonly dkimTokens: pulumi.Output<string[]>;
  public readonly contactListName?: pulumi.Output<string>;
  public readonly contactListArn?: pulumi.Output<string>;

  constructor(name: string, args: SenderArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:Sender", name, {}, opts);
    const parent = this;

    const configurationSet = createConfigurationSet();
    const identity = createIdentity();
    publishEventMetrics();
    const contactList = args.unsubscribe ? createContactList(args.unsubscribe) : undefined;

    this.identityArn = identity.arn;
    this.configurationSetName = configurationSet.configurationSetName;
    this.configurationSetArn = configurationSet.arn;
    this.dkimTokens = identity.dkimSigningAttributes.apply((d) => d?.tokens ?? []);
    this.contactListName = contactList?.contactListName;
    this.contactListArn = contactList?.arn;
    this.registerOutputs({ identityArn: this.identityArn, configurationSetName: this.configurationSetName });

    function createConfigurationSet() {
      return new aws.sesv2.ConfigurationSet(
        `${name}-config`,
        {
          configurationSetName: `sendtime-${pulumi.getStack()}`,
          reputationOptions: { reputationMetricsEnabled: true },
          suppressionOptions: { suppressedReasons: ["BOUNCE", "COMPLAINT"] },
          sendingOptions: { sendingEnabled: true },
        },
        { parent },
      );
    }

    function createIdentity() {
      return new aws.sesv2.EmailIdentity(
        `${name}-identity`,
        {
          emailIdentity: args.identity,
          configurationSetName: configurationSet.configurationSetName,
        },
        { parent },
      );
    }

    function publishEventMetrics() {
      new aws.sesv2.ConfigurationSetEventDestination(
        `${name}-events`,
        {
          configurationSetName: configurationSet.configurationSetName,
          eventDestinationName: "sendtime-metrics",
          eventDestination: {
            enabled: true,
            matchingEventTypes: ["SEND", "DELIVERY", "BOUNCE", "COMPLAINT", "REJECT", "RENDERING_FAILURE"],
            cloudWatchDestination: {
              dimensionConfigurations: [
                {
                  dimensionName: "ses:configuration-set",
                  dimensionValueSource: "MESSAGE_TAG",
                  defaultDimensionValue: "none",
                },
              ],
            },
          },
        },
        { parent },
      );
    }

    function createContactList(u: { contactList: string; topic: string }) {
      return new aws.sesv2.ContactList(
        `${name}-contacts`,
        {
          contactListName: u.contactList,
          description: "Recipients' subscription preferences (one-click unsubscribe)",
          topics: [{ topicName: u.topic, displayName: u.topic, defaultSubscriptionStatus: "OPT_IN" }],
        },
        { parent },
      );
    }
  }
}
