/**
 * The parts every Lambda function of the stack has, made one way: its log group (named as Lambda writes to it, kept
 * `retentionInDays`), its role (assumed by Lambda under a trust policy that pins the account), and, for a function
 * EventBridge invokes, the dead-letter queue of events that could not be delivered or handled, with the one policy
 * every queue of the stack has (only its writers may put messages in it). Used by the journeys' enrolment function,
 * the unsubscribe endpoint and the recorder of SES's opt-outs (the queue policy by the scheduler target's queue too);
 * resource names stay `<component>-logs`, `<component>-role`, `<component>-permissions`, `<component>-function`,
 * `<component>-dlq`, `<component>-failures` and `<component>-dlq-policy`. `roledFunction` makes a function with its
 * log group, role and policy; `eventDrivenFunction` adds what a function EventBridge invokes has (its queue, its
 * failed runs kept there, its rules' permissions and targets).
 */
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { HANDLER_FILE } from "./handler-bundle";
import { QueueWriters, stackOnlyQueuePolicy } from "./iam";
import { sqs } from "./core/plan/quotas";
import { EVENTS_SERVICE, NAME_MAX_LENGTH, physicalName } from "./core/plan/naming";

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

/** A function of the stack, with what makes its role and the role's one policy. */
export interface RoledFunctionArgs {
  /** Days its logs are kept (`sendtime:logRetentionDays`). */
  logRetentionDays: number;
  /** What the role is for (its IAM description). */
  roleDescription: string;
  /** The role's trust policy, as JSON. */
  trustPolicy: pulumi.Input<string>;
  /** The role's policy (`<component>-permissions`), as JSON, given the log group the function writes to. */
  policy: (logGroupArn: pulumi.Output<string>) => pulumi.Input<string>;
  /** The function itself, less what this makes (its name is physicalName's for the component's). */
  function: Omit<BundledFunction, "functionName" | "role" | "logGroup" | "permissions">;
}

/** The parts `roledFunction` and `eventDrivenFunction` make, for the component to keep. */
export interface RoledFunction {
  function: aws.lambda.Function;
  role: aws.iam.Role;
  logGroup: aws.cloudwatch.LogGroup;
}

/** A bundled function with its log group, its role and the role's policy (the function created after it). */
export function roledFunction(name: string, f: RoledFunctionArgs, parent: pulumi.Resource): RoledFunction {
  const functionName = physicalName(pulumi.getStack(), name, NAME_MAX_LENGTH.lambdaFunction);
  const logGroup = functionLogGroup(name, functionName, f.logRetentionDays, parent);
  const role = functionRole(name, f.roleDescription, f.trustPolicy, parent);
  const policy = f.policy(logGroup.arn);
  const permissions = new aws.iam.RolePolicy(`${name}-permissions`, { role: role.id, policy }, { parent });
  const fn = bundledFunction(name, { ...f.function, functionName, role, logGroup, permissions }, parent);
  return { function: fn, role, logGroup };
}

/** One EventBridge rule that invokes the function, and what that takes: Lambda's permission and the rule's target. */
export interface EventRoute {
  /** The rule's resource name. */
  ruleName: string;
  /** The resource names of its permission and target: `<partsName>-invoke`, `<partsName>-target`. */
  partsName: string;
  eventBusName: string;
  description: string;
  eventPattern: pulumi.Input<string>;
  /** The target's id (one target a rule: a short fixed id; at most 64 characters). */
  targetId: string;
  /** What the function receives, when not the event itself. */
  inputTransformer?: aws.types.input.cloudwatch.EventTargetInputTransformer;
}

/** How a function EventBridge invokes retries: delivering to it (the rule's target), and its own failed runs. */
export interface EventRetry {
  ruleTarget: { maximumEventAgeInSeconds: number; maximumRetryAttempts: number };
  invocation: { maximumEventAgeInSeconds: number; maximumRetryAttempts: number };
}

/** What `eventDrivenFunction` takes: a function's, its rules and retries, and a policy that may name its queue. */
export interface EventDrivenFunctionArgs extends Omit<RoledFunctionArgs, "policy"> {
  /** The role's policy, as JSON, given the log group and the dead-letter queue the function writes to. */
  policy: (writes: {
    logGroupArn: pulumi.Output<string>;
    deadLetterQueueArn: pulumi.Output<string>;
  }) => pulumi.Input<string>;
  routes: EventRoute[];
  retry: EventRetry;
}

/** A function EventBridge invokes: what `roledFunction` makes, its queue and its rules. */
export interface EventDrivenFunction extends RoledFunction {
  /** Events neither delivered nor handled, after `retry`. */
  deadLetterQueue: aws.sqs.Queue;
  rules: aws.cloudwatch.EventRule[];
}

/**
 * A function EventBridge invokes on `routes`: the function with its log group, role and policy; its dead-letter
 * queue, where the rules put what they could not deliver and the function what still failed after `retry`; and the
 * queue's one policy (only the function's role and the rules may write it).
 */
export function eventDrivenFunction(
  name: string,
  f: EventDrivenFunctionArgs,
  parent: pulumi.Resource,
): EventDrivenFunction {
  const deadLetterQueue = eventDeadLetterQueue(name, parent);
  const policy = (logGroupArn: pulumi.Output<string>) =>
    f.policy({ logGroupArn, deadLetterQueueArn: deadLetterQueue.arn });
  const parts = roledFunction(name, { ...f, policy }, parent);
  keepFailedInvocations(name, parts.function, f.retry.invocation, deadLetterQueue, parent);
  const rules = f.routes.map((route) => invokeOnEvents(route, parts.function, f.retry, deadLetterQueue, parent));
  acceptOnlyFrom(name, deadLetterQueue, { roleArns: [parts.role.arn], rules }, parent);
  return { ...parts, deadLetterQueue, rules };
}

function invokeOnEvents(
  route: EventRoute,
  fn: aws.lambda.Function,
  retry: EventRetry,
  deadLetterQueue: aws.sqs.Queue,
  parent: pulumi.Resource,
): aws.cloudwatch.EventRule {
  const { eventBusName } = route;
  const rule = new aws.cloudwatch.EventRule(
    route.ruleName,
    { eventBusName, description: route.description, eventPattern: route.eventPattern },
    { parent },
  );
  new aws.lambda.Permission(
    `${route.partsName}-invoke`,
    { action: "lambda:InvokeFunction", function: fn.name, principal: EVENTS_SERVICE, sourceArn: rule.arn },
    { parent },
  );
  new aws.cloudwatch.EventTarget(
    `${route.partsName}-target`,
    {
      targetId: route.targetId,
      rule: rule.name,
      eventBusName,
      arn: fn.arn,
      ...(route.inputTransformer ? { inputTransformer: route.inputTransformer } : {}),
      retryPolicy: retry.ruleTarget,
      deadLetterConfig: { arn: deadLetterQueue.arn },
    },
    { parent },
  );
  return rule;
}
