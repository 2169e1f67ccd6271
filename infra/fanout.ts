import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { fanOutDefinition, FanOutShape } from "./rules/fanout-definition";
import { fanOutStatements, fanOutTrustPolicy, policyDocument } from "./iam";
import { ArnScope, STACK_QUOTA_TAG } from "./rules/naming";

/** `FanOutShape`: MaxConcurrency, batch size, inner concurrency, tolerated failures, retry policy (infra/config.ts). */
export interface FanOutArgs extends FanOutShape {
  /** The account and Region the state machine acts in. */
  scope: pulumi.Input<ArnScope>;
  /** The recipient bucket: plans are read from `plans/`, results written to `results/`. */
  bucketName: pulumi.Input<string>;
  bucketArn: pulumi.Input<string>;
  /** The role every recipient's schedule runs as (passed to Scheduler, and to nothing else). */
  targetRoleArn: pulumi.Input<string>;
  /** The role the housekeeping schedule runs as: it deletes the campaign's group when its sends are done. */
  housekeepingRoleArn: pulumi.Input<string>;
  /** Where Scheduler sends what it could not deliver. */
  deadLetterQueueArn: pulumi.Input<string>;
  /** SendEmail fields every schedule carries. */
  fromAddress: string;
  configurationSetName: pulumi.Input<string>;
  contactListName?: pulumi.Input<string>;
  unsubscribeTopic?: string;
  /** The account's CreateSchedule quota the fan-out was sized for; tagged on the state machine for the policy pack. */
  createScheduleTps: number;
  /** Days the execution logs are kept. */
  logRetentionDays: number;
  /** KMS key of the bucket, when it has a customer-managed one. */
  kmsKeyArn?: string;
  /**
   * With a frequency cap: schedules start this send gate instead of calling SES.
   * @default none
   */
  sendGateArn?: pulumi.Input<string>;
  /**
   * The bulk sender that bulk lines' schedules start.
   * @default none: a bulk line fails its batch
   */
  senderArn?: pulumi.Input<string>;
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
    const stateMachineName = `sendtime-${name}-${pulumi.getStack()}`;

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
        .all([scope, args.targetRoleArn, args.housekeepingRoleArn, args.bucketArn])
        .apply(([s, targetRoleArn, housekeepingRoleArn, bucketArn]) =>
          JSON.stringify(
            policyDocument(
              fanOutStatements({ scope: s, stateMachineName, targetRoleArn, housekeepingRoleArn, bucketArn, kmsKeyArn: args.kmsKeyArn }),
            ),
          ),
        );
      return new aws.iam.RolePolicy(`${name}-permissions`, { role: role.id, policy }, { parent });
    }

    function createStateMachine() {
      const definition = pulumi
        .all([
          scope,
          args.targetRoleArn,
          args.housekeepingRoleArn,
          args.deadLetterQueueArn,
          args.bucketName,
          args.configurationSetName,
          args.contactListName,
          pulumi.all([args.sendGateArn, args.senderArn]),
        ])
        .apply(
          ([
            s,
            targetRoleArn,
            housekeepingRoleArn,
            deadLetterQueueArn,
            resultsBucket,
            configurationSetName,
            contactListName,
            [sendGateArn, senderArn],
          ]) =>
            JSON.stringify(
              fanOutDefinition({
                partition: s.partition,
                targetRoleArn,
                housekeepingRoleArn,
                deadLetterQueueArn,
                resultsBucket,
                fromAddress: args.fromAddress,
                configurationSetName,
                listManagement:
                  contactListName && args.unsubscribeTopic ? { contactListName, topicName: args.unsubscribeTopic } : undefined,
                maxConcurrency: args.maxConcurrency,
                batchSize: args.batchSize,
                innerConcurrency: args.innerConcurrency,
                toleratedFailurePercentage: args.toleratedFailurePercentage,
                maxEventAgeSeconds: args.maxEventAgeSeconds,
                maxRetryAttempts: args.maxRetryAttempts,
                sendGateArn,
                senderArn,
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
