/**
 * The parts every Lambda function of the stack has, made one way: its log group (named as Lambda writes to it, kept
 * `retentionInDays`), its role (assumed by Lambda under a trust policy that pins the account), and, for a function
 * EventBridge invokes, the dead-letter queue of events that could not be delivered or handled, with the one policy
 * every queue of the stack has (only its writers may put messages in it). Used by the journeys' enrolment function,
 * the unsubscribe endpoint and the recorder of SES's opt-outs (the queue policy by the scheduler target's queue too);
 * resource names stay `<component>-logs`, `<component>-role`, `<component>-dlq` and `<component>-dlq-policy`.
 */
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { HANDLER_FILE } from "./handler-bundle";
import { QueueWriters, stackOnlyQueuePolicy } from "./iam";
import { sqs } from "./core/plan/quotas";

/** The log group Lambda writes the function `functionName`'s logs to. */
export function functionLogGroup(
  name: string,
  functionName: string,
  retentionInDays: number,
  parent: pulumi.Resource,
): aws.cloudwatch.LogGroup {
  return new aws.cloudwatch.LogGroup(
    `${name}-logs`,
    { name: `/aws/lambda/${functionName}`, retentionInDays },
    { parent },
  );
}

/** The function's role: `description` says what it may do; `trustPolicy` is its assume-role document as JSON. */
export function functionRole(
  name: string,
  description: string,
  trustPolicy: pulumi.Input<string>,
  parent: pulumi.Resource,
): aws.iam.Role {
  return new aws.iam.Role(`${name}-role`, { description, assumeRolePolicy: trustPolicy }, { parent });
}

/** The dead-letter queue of an EventBridge-invoked function, kept as long as SQS allows. */
export function eventDeadLetterQueue(name: string, parent: pulumi.Resource): aws.sqs.Queue {
  // SQS-managed encryption: EventBridge can write to it without a key policy of yours.
  return new aws.sqs.Queue(
    `${name}-dlq`,
    { messageRetentionSeconds: sqs.maxRetentionSeconds, sqsManagedSseEnabled: true },
    { parent },
  );
}

/** The runtime every bundled function runs on. */
export const HANDLER_RUNTIME = aws.lambda.Runtime.NodeJS24dX;

/** What differs between the stack's functions; the rest (runtime, arm64, the bundle as one file, JSON logs) is shared. */
export interface BundledFunction {
  functionName: string;
  description: string;
  /** The bundle's entry, `index.<export>`. */
  handler: string;
  /** The bundled JavaScript (handler-bundle.ts). */
  code: string;
  role: aws.iam.Role;
  logGroup: aws.cloudwatch.LogGroup;
  timeout: number;
  memorySize: number;
  reservedConcurrentExecutions?: number;
  variables: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** The role's permissions: the function is created after them. */
  permissions: pulumi.Resource;
}

/** A function from a bundle (handler-bundle.ts), named `<component>-function`. */
export function bundledFunction(name: string, f: BundledFunction, parent: pulumi.Resource): aws.lambda.Function {
  return new aws.lambda.Function(
    `${name}-function`,
    {
      name: f.functionName,
      description: f.description,
      runtime: HANDLER_RUNTIME,
      architectures: ["arm64"],
      handler: f.handler,
      code: new pulumi.asset.AssetArchive({ [HANDLER_FILE]: new pulumi.asset.StringAsset(f.code) }),
      role: f.role.arn,
      timeout: f.timeout,
      memorySize: f.memorySize,
      ...(f.reservedConcurrentExecutions !== undefined
        ? { reservedConcurrentExecutions: f.reservedConcurrentExecutions }
        : {}),
      environment: { variables: f.variables },
      loggingConfig: { logFormat: "JSON", logGroup: f.logGroup.name },
    },
    { parent, dependsOn: [f.permissions] },
  );
}

/** Where an asynchronous invocation that still fails after `retry` goes: the function's dead-letter queue. */
export function keepFailedInvocations(
  name: string,
  fn: aws.lambda.Function,
  retry: { maximumEventAgeInSeconds: number; maximumRetryAttempts: number },
  deadLetterQueue: aws.sqs.Queue,
  parent: pulumi.Resource,
): aws.lambda.FunctionEventInvokeConfig {
  return new aws.lambda.FunctionEventInvokeConfig(
    `${name}-failures`,
    {
      functionName: fn.name,
      ...retry,
      destinationConfig: { onFailure: { destination: deadLetterQueue.arn } },
    },
    { parent },
  );
}

/**
 * The one policy of `queue` (named `<name>-dlq-policy`): only its writers may put messages in it — the stack's roles
 * that send to it and, through EventBridge, the rules that dead-letter into it (iam.ts stackOnlyQueuePolicy).
 */
export function acceptOnlyFrom(
  name: string,
  queue: aws.sqs.Queue,
  writers: { roleArns: pulumi.Input<string>[]; rules?: aws.cloudwatch.EventRule[] },
  parent: pulumi.Resource,
): aws.sqs.QueuePolicy {
  const policy = pulumi
    .all([queue.arn, pulumi.all(writers.roleArns), pulumi.all((writers.rules ?? []).map((r) => r.arn))])
    .apply(([queueArn, roleArns, ruleArns]) =>
      JSON.stringify(stackOnlyQueuePolicy(queueArn, { roleArns, ruleArns } satisfies QueueWriters)),
    );
  return new aws.sqs.QueuePolicy(`${name}-dlq-policy`, { queueUrl: queue.url, policy }, { parent });
}
