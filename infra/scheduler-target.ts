import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { housekeepingStatements, policyDocument, schedulerTargetStatements, schedulerTrustPolicy } from "./iam";
import { ArnScope } from "./rules/naming";
import { sqs } from "./rules/quotas";

export interface SchedulerTargetArgs {
  /** The partition, account and Region the roles may act in (their trust conditions and resource ARNs). Required. */
  scope: pulumi.Input<ArnScope>;
  /**
   * Customer-managed KMS key for the dead-letter queue; the roles may then use it to write there.
   * @default none: SQS-managed encryption (SSE-SQS)
   */
  kmsKeyArn?: string;
  /** The one sender's state machine name: the send role may start it (and dead-letter), nothing else. Required. */
  senderName: string;
}

/**
 * What EventBridge Scheduler needs: a send role that may only start the one sender (which alone calls SES), a
 * housekeeping role that may only delete campaign groups (for each campaign's housekeeping schedule; the fan-out
 * passes it, the journeys cannot), and a dead-letter queue both write to.
 */
export class SchedulerTarget extends pulumi.ComponentResource {
  public readonly role: aws.iam.Role;
  public readonly roleArn: pulumi.Output<string>;
  public readonly housekeepingRoleArn: pulumi.Output<string>;
  public readonly deadLetterQueue: aws.sqs.Queue;

  constructor(name: string, args: SchedulerTargetArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:SchedulerTarget", name, {}, opts);
    const parent = this;
    const scope = pulumi.output(args.scope);

    const deadLetterQueue = createDeadLetterQueue();
    const role = createRole();
    allowSendingAndDeadLettering();
    const housekeepingRole = createHousekeepingRole();

    this.role = role;
    this.roleArn = role.arn;
    this.housekeepingRoleArn = housekeepingRole.arn;
    this.deadLetterQueue = deadLetterQueue;
    this.registerOutputs({
      roleArn: this.roleArn,
      housekeepingRoleArn: this.housekeepingRoleArn,
      deadLetterQueueUrl: deadLetterQueue.url,
    });

    function createDeadLetterQueue() {
      return new aws.sqs.Queue(
        `${name}-dlq`,
        {
          messageRetentionSeconds: sqs.maxRetentionSeconds,
          ...(args.kmsKeyArn ? { kmsMasterKeyId: args.kmsKeyArn } : { sqsManagedSseEnabled: true }),
        },
        { parent },
      );
    }

    function createRole() {
      return new aws.iam.Role(
        `${name}-role`,
        {
          description: "Assumed by EventBridge Scheduler to start the one sender for each campaign send",
          assumeRolePolicy: scope.apply((s) => JSON.stringify(schedulerTrustPolicy(s.accountId))),
        },
        { parent },
      );
    }

    function allowSendingAndDeadLettering() {
      const policy = pulumi.all([scope, deadLetterQueue.arn]).apply(([s, deadLetterQueueArn]) =>
        JSON.stringify(
          policyDocument(
            schedulerTargetStatements({
              scope: s,
              deadLetterQueueArn,
              kmsKeyArn: args.kmsKeyArn,
              senderName: args.senderName,
            }),
          ),
        ),
      );
      new aws.iam.RolePolicy(`${name}-send`, { role: role.id, policy }, { parent });
    }

    function createHousekeepingRole() {
      const housekeeping = new aws.iam.Role(
        `${name}-housekeeping-role`,
        {
          description: "Assumed by EventBridge Scheduler to delete a finished campaign's schedule group",
          assumeRolePolicy: scope.apply((s) => JSON.stringify(schedulerTrustPolicy(s.accountId))),
        },
        { parent },
      );
      const policy = pulumi
        .all([scope, deadLetterQueue.arn])
        .apply(([s, deadLetterQueueArn]) =>
          JSON.stringify(
            policyDocument(housekeepingStatements({ scope: s, deadLetterQueueArn, kmsKeyArn: args.kmsKeyArn })),
          ),
        );
      new aws.iam.RolePolicy(`${name}-housekeeping`, { role: housekeeping.id, policy }, { parent });
      return housekeeping;
    }
  }
}
