import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { EMAIL_EVENTS, EVENT_DIMENSIONS } from "./core/send/email-events";
import { NAME_MAX_LENGTH, physicalName } from "./core/plan/naming";

export interface SesIdentityArgs {
  /**
   * The SES identity mail is sent from: a domain (publish the `dkimTokens` output as CNAMEs) or a single address (SES
   * emails it a link to confirm).
   *
   * Required, no default: the stack passes `sendtime:senderIdentity`.
   * @example
   * ```ts
   * { identity: "mail.example.com" }
   * ```
   */
  identity: string;
  /**
   * One-click unsubscribe (RFC 8058): the SES contact list (created here, with the topic opted in by default) and the
   * topic every send names in its ListManagementOptions.
   * @default none: no contact list, no `List-Unsubscribe` headers
   * @example
   * ```ts
   * { unsubscribe: { contactList: "newsletter", topic: "campaigns" } }
   * ```
   */
  unsubscribe?: { contactList: string; topic: string };
  /**
   * Host name for open and click tracking links instead of SES's own; it must be verified in SES and serve HTTPS
   * (https://docs.aws.amazon.com/ses/latest/dg/configure-custom-open-click-domains.html).
   * @default none: SES's own tracking domain (tracking stays on)
   * @example
   * ```ts
   * { trackingDomain: "track.example.com" }
   * ```
   */
  trackingDomain?: string;
}

/**
 * SES sending: the identity, a configuration set with reputation metrics and suppression, open and click tracking,
 * every event type published to CloudWatch per campaign, step and variant (the sends' EmailTags), unsubscribe.
 */
export class SesIdentity extends pulumi.ComponentResource {
  public readonly identityArn: pulumi.Output<string>;
  public readonly configurationSetName: pulumi.Output<string>;
  public readonly configurationSetArn: pulumi.Output<string>;
  /** DKIM CNAME tokens for a domain identity: `<token>._domainkey.<domain>` → `<token>.dkim.amazonses.com`. */
  public readonly dkimTokens: pulumi.Output<string[]>;
  public readonly contactListName?: pulumi.Output<string>;
  public readonly contactListArn?: pulumi.Output<string>;

  constructor(name: string, args: SesIdentityArgs, opts?: pulumi.ComponentResourceOptions) {
    // The type token keeps the component's former name: it is part of every child's URN, so a new one would replace
    // the stack's resources.
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
          configurationSetName: physicalName(pulumi.getStack(), "", NAME_MAX_LENGTH.sesConfigurationSet),
          reputationOptions: { reputationMetricsEnabled: true },
          suppressionOptions: { suppressedReasons: ["BOUNCE", "COMPLAINT"] },
          sendingOptions: { sendingEnabled: true },
          // Open and click tracking is on whenever an event destination takes OPEN/CLICK; this only moves its links.
          trackingOptions: args.trackingDomain
            ? { customRedirectDomain: args.trackingDomain, httpsPolicy: "REQUIRE" }
            : undefined,
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
            matchingEventTypes: EMAIL_EVENTS.map((e) => e.type),
            cloudWatchDestination: {
              // One metric per event and combination of these values (each a CloudWatch custom metric).
              dimensionConfigurations: EVENT_DIMENSIONS.map((d) => ({
                dimensionName: d.name,
                dimensionValueSource: "MESSAGE_TAG",
                defaultDimensionValue: d.defaultValue,
              })),
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
