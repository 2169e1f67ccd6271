/**
 * Texts (stack config `sendtime:sms`): the SMS configuration set and opt-out list (each created when the config names
 * none), and the configuration set's event destination, a CloudWatch Logs log group written through a role only
 * End User Messaging SMS may assume, for this account and configuration set. The pool and its numbers are given by
 * ARN: registrations take weeks and are made outside the stack (docs/sms.md, "The stack").
 */
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { policyDocument } from "./iam";
import { ArnScope } from "./core/plan/naming";
import {
  SMS_EVENT_LOG_ACTIONS,
  SMS_FUNNEL_EVENT_TYPES,
  SMS_VOICE_SERVICE,
  smsConfigurationSetArn,
  smsEventLogGroupName,
  SmsConfig,
  smsResourceName,
} from "./core/sms/sms-config";

export interface SmsArgs {
  scope: pulumi.Input<ArnScope>;
  /** The stack's name: the created resources are named `sendtime-<stack>-sms`. */
  stack: string;
  sms: SmsConfig;
  logRetentionDays: number;
}

export class Sms extends pulumi.ComponentResource {
  /** The pool every text is sent from. */
  public readonly poolArn: string;
  public readonly configurationSetName: pulumi.Output<string>;
  public readonly configurationSetArn: pulumi.Output<string>;
  public readonly optOutListName: pulumi.Output<string>;
  public readonly eventLogGroupName: pulumi.Output<string>;
  /** Created here (absent when the config names them). */
  public readonly configurationSet?: aws.pinpoint.Smsvoicev2ConfigurationSet;
  public readonly optOutList?: aws.pinpoint.Smsvoicev2OptOutList;
  public readonly eventDestination: aws.pinpoint.Smsvoicev2EventDestination;

  constructor(name: string, args: SmsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:Sms", name, {}, opts);
    const parent = this;
    const scope = pulumi.output(args.scope);
    const { sms } = args;
    const ownName = smsResourceName(args.stack);

    this.configurationSet = sms.configurationSetName
      ? undefined
      : new aws.pinpoint.Smsvoicev2ConfigurationSet(
          `${name}-configuration-set`,
          { name: ownName, defaultMessageType: sms.messageType },
          { parent },
        );
    this.optOutList = sms.optOutListName
      ? undefined
      : new aws.pinpoint.Smsvoicev2OptOutList(`${name}-opt-outs`, { name: ownName }, { parent });
    const configurationSetName = this.configurationSet?.name ?? pulumi.output(sms.configurationSetName!);
    const configurationSetArn =
      this.configurationSet?.arn ?? scope.apply((s) => smsConfigurationSetArn(s, sms.configurationSetName!));

    const logGroup = new aws.cloudwatch.LogGroup(
      `${name}-events`,
      { name: smsEventLogGroupName(args.stack), retentionInDays: args.logRetentionDays },
      { parent },
    );
    // AWS's role for a CloudWatch Logs destination: trusted by sms-voice for this account and configuration set only.
    const role = new aws.iam.Role(
      `${name}-events-role`,
      {
        description: "End User Messaging SMS writes the SMS configuration set's events to their log group",
        assumeRolePolicy: pulumi
          .all([scope, configurationSetArn])
          .apply(([s, arn]) => JSON.stringify(eventRoleTrust(s.accountId, arn))),
      },
      { parent },
    );
    const permissions = new aws.iam.RolePolicy(
      `${name}-events-permissions`,
      {
        role: role.id,
        policy: logGroup.arn.apply((arn) =>
          JSON.stringify(
            policyDocument([
              { Sid: "WriteSmsEvents", Effect: "Allow", Action: [...SMS_EVENT_LOG_ACTIONS], Resource: `${arn}:*` },
            ]),
          ),
        ),
      },
      { parent },
    );
    this.eventDestination = new aws.pinpoint.Smsvoicev2EventDestination(
      `${name}-event-destination`,
      {
        configurationSetName,
        eventDestinationName: "sendtime-funnel",
        matchingEventTypes: [...SMS_FUNNEL_EVENT_TYPES],
        cloudwatchLogsDestination: { iamRoleArn: role.arn, logGroupArn: logGroup.arn },
      },
      { parent, dependsOn: [permissions] },
    );

    this.poolArn = sms.poolArn;
    this.configurationSetName = configurationSetName;
    this.configurationSetArn = configurationSetArn;
    this.optOutListName = this.optOutList?.name ?? pulumi.output(sms.optOutListName!);
    this.eventLogGroupName = logGroup.name;
    this.registerOutputs({ configurationSetName, optOutListName: this.optOutListName });
  }
}

/** The trust AWS documents for an SMS event destination's role, with its SourceAccount and SourceArn conditions. */
export function eventRoleTrust(accountId: string, configurationSetArn: string) {
  return policyDocument([
    {
      Effect: "Allow",
      Principal: { Service: SMS_VOICE_SERVICE },
      Action: "sts:AssumeRole",
      Condition: {
        StringEquals: { "aws:SourceAccount": accountId },
        ArnLike: { "aws:SourceArn": configurationSetArn },
      },
    },
  ]);
}
