import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { fanOutDefinition, FanOutShape } from "./state-machines/fanout-definition";
import { fanOutStatements, fanOutTrustPolicy, policyDocument } from "./iam";
import { ArnScope, NAME_MAX_LENGTH, physicalName, STACK_QUOTA_TAG } from "./core/plan/naming";
import { SchedulerTargetParameters } from "./core/plan/schedule-request";
import type { SmsMessageType } from "./core/send/sms-input";

/**
 * The fan-out's shape (`FanOutShape`, documented where it is declared) and what its schedules carry.
 * No field has a default in the component: the stack passes its validated config (infra/config.ts), whose defaults
 * each field names.
 */
export interface FanOutArgs extends FanOutShape {
  /**
   * The MessageType of the texts its schedules send (stack config sendtime:sms messageType); a plan row's own
   * `message_type` wins.
   * @default "PROMOTIONAL"
   */
  smsMessageType?: SmsMessageType;
  /** The partition, account and Region the state machine acts in. Required. */
  scope: pulumi.Input<ArnScope>;
  /** The recipient bucket's name: plans are read from `plans/`, results written to `results/`. Required. */
  bucketName: pulumi.Input<string>;
  /** The recipient bucket's ARN (the role may read plans and write results there, nothing else). Required. */
  bucketArn: pulumi.Input<string>;
  /**
   * What every schedule carries (SchedulerTarget.parameters): the role it runs as (passed to Scheduler, and to nothing
   * else), its dead-letter queue, retries, the one sender it starts and the SES settings of its sends. Required.
   */
  target: pulumi.Input<SchedulerTargetParameters>;
  /** The role the housekeeping schedule runs as: it deletes the campaign's group when its sends are done. Required. */
  housekeepingRoleArn: pulumi.Input<string>;
  /**
   * The account's CreateSchedule quota (requests a second) the fan-out is paced to; tagged on the state machine for
   * the policy pack. Required: the stack passes `sendtime:createScheduleTps` (`5000` when unset).
   */
  createScheduleTps: number;
  /**
   * Days the execution logs are kept (a CloudWatch Logs retention value). Required: the stack passes
   * `sendtime:logRetentionDays` (`30` when unset).
   */
  logRetentionDays: number;
  /**
   * The bucket's customer-managed KMS key: the role may then use it to read plans and write results.
   * @default none: the bucket uses SSE-S3 and the role needs no key
   */
  kmsKeyArn?: string;
}

/** The fan-out: a Step Functions state machine that turns a campaign plan into one schedule per row. */
export class FanOut extends pulumi.ComponentResource {
  public readonly stateMachine: aws.sfn.StateMachine;
  public readonly arn: pulumi.Output<string>;
  public readonly role: aws.iam.Role;
  public readonly logGroup: aws.cloudwatch.LogGroup;

  constructor(name: string, args: FanOutArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:FanOut", name, {}, opts);
    const parent = this;
    const scope = pulumi.output(args.scope);
    // Named, so that the role's policy can name the state machine before it exists.
    const stateMachineName = physicalName(pulumi.getStack(), name, NAME_MAX_LENGTH.stateMachine);

    const logGroup = createLogGroup();
    const role = createRole();
    const permissions = allowFanOut();
    const stateMachine = createStateMachine();

    this.stateMachine = stateMachine;
    this.arn = stateMachine.arn;
    this.role = role;
    this.logGroup = logGroup;
    this.registerOutputs({ arn: this.arn });

    function createLogGroup() {
      return new aws.cloudwatch.LogGroup(
        `${name}-logs`,
        {
          name: `/aws/vendedlogs/states/${stateMachineName}`,
          retentionInDays: args.logRetentionDays,
        },
        { parent },
      );
    }

    function createRole() {
      return new aws.iam.Role(
        `${name}-role`,
        {
          description: "Assumed by the sendtime fan-out state machine to create campaign schedules",
          assumeRolePolicy: scope.apply((s) => JSON.stringify(fanOutTrustPolicy(s.accountId))),
        },
        { parent },
      );
    }

    function allowFanOut() {
      const policy = pulumi
        .all([scope, args.target, args.housekeepingRoleArn, args.bucketArn])
        .apply(([s, { targetRoleArn }, housekeepingRoleArn, bucketArn]) =>
          JSON.stringify(
            policyDocument(
              fanOutStatements({
                scope: s,
                stateMachineName,
                targetRoleArn,
                housekeepingRoleArn,
                bucketArn,
                kmsKeyArn: args.kmsKeyArn,
              }),
            ),
          ),
        );
      return new aws.iam.RolePolicy(`${name}-permissions`, { role: role.id, policy }, { parent });
    }

    function createStateMachine() {
      const definition = pulumi
        .all([args.target, args.housekeepingRoleArn, args.bucketName])
        .apply(([target, housekeepingRoleArn, resultsBucket]) =>
          JSON.stringify(
            fanOutDefinition({
              ...target,
              housekeepingRoleArn,
              resultsBucket,
              maxConcurrency: args.maxConcurrency,
              batchSize: args.batchSize,
              innerConcurrency: args.innerConcurrency,
              toleratedFailurePercentage: args.toleratedFailurePercentage,
              smsMessageType: args.smsMessageType,
            }),
            null,
            2,
          ),
        );
      return new aws.sfn.StateMachine(
        `${name}`,
        {
          name: stateMachineName,
          type: "STANDARD",
          roleArn: role.arn,
          definition,
          tags: { [STACK_QUOTA_TAG]: String(args.createScheduleTps) },
          loggingConfiguration: {
            logDestination: pulumi.interpolate`${logGroup.arn}:*`,
            includeExecutionData: false,
            level: "ERROR",
          },
        },
        { parent, dependsOn: [permissions] },
      );
    }
  }
}
