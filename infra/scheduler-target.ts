import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { acceptOnlyFrom } from "./function-parts";
import { housekeepingStatements, policyDocument, schedulerTargetStatements, schedulerTrustPolicy } from "./iam";
import { ArnScope } from "./core/plan/naming";
import { sqs } from "./core/plan/quotas";
import { ScheduleRetryPolicy, SchedulerTargetParameters } from "./core/plan/schedule-request";

/** What every schedule carries besides this component's role and queue: the sender, the SES settings, retries. */
export interface SchedulerTargetSends {
  scope: pulumi.Input<ArnScope>;
  /** The one sender's state machine ARN. */
  senderArn: pulumi.Input<string>;
  /** The sends' FromEmailAddress (`sendtime:fromAddress`). */
  fromAddress: string;
  /** The sends' ConfigurationSetName (the SesIdentity's). */
  configurationSetName: pulumi.Input<string>;
  /**
   * One-click unsubscribe: the SES contact list and its topic; used only when both are set.
   * @default none: sends carry no ListManagementOptions
   */
  contactListName?: pulumi.Input<string | undefined>;
  unsubscribeTopic?: string;
  /** Every schedule's RetryPolicy (`sendtime:maxEventAgeSeconds`, `sendtime:maxRetryAttempts`). */
  retry: ScheduleRetryPolicy;
}

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
  private readonly componentName: string;
  private readonly housekeepingRole: aws.iam.Role;
  private deadLetterPolicy?: aws.sqs.QueuePolicy;

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
    this.housekeepingRole = housekeepingRole;
    this.componentName = name;
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

  /**
   * What every schedule's target carries (SchedulerTargetParameters), built once for the fan-out's schedules and the
   * journeys' alike: this component's send role and dead-letter queue, and `sends`.
   */
  parameters(sends: SchedulerTargetSends): pulumi.Output<SchedulerTargetParameters> {
    return pulumi
      .all([
        sends.scope,
        this.roleArn,
        this.deadLetterQueue.arn,
        sends.configurationSetName,
        sends.contactListName,
        sends.senderArn,
      ])
      .apply(([s, targetRoleArn, deadLetterQueueArn, configurationSetName, contactListName, senderArn]) => ({
        partition: s.partition,
        targetRoleArn,
        deadLetterQueueArn,
        fromAddress: sends.fromAddress,
        configurationSetName,
        listManagement:
          contactListName && sends.unsubscribeTopic
            ? { contactListName, topicName: sends.unsubscribeTopic }
            : undefined,
        maxEventAgeSeconds: sends.retry.maxEventAgeSeconds,
        maxRetryAttempts: sends.retry.maxRetryAttempts,
        senderArn,
      }));
  }

  /**
   * The dead-letter queue's one policy: only the stack's roles that write dead letters may put messages in it — the
   * send and housekeeping roles (Scheduler writes a schedule's dead letters as the schedule's role) and `writers`, the
   * roles of the state machines that dead-letter what they could not send. Any other principal of the account is
   * denied, so nothing can plant a dead letter for redrive. Called once, when every writer exists (each needs the
   * queue's ARN first).
   */
  allowOnlyStackToDeadLetter(writers: pulumi.Input<string>[]): aws.sqs.QueuePolicy {
    if (this.deadLetterPolicy) throw new Error("SchedulerTarget: the dead-letter queue has its policy already");
    this.deadLetterPolicy = acceptOnlyFrom(
      this.componentName,
      this.deadLetterQueue,
      { roleArns: [this.role.arn, this.housekeepingRole.arn, ...writers] },
      this,
    );
    return this.deadLetterPolicy;
  }
}
