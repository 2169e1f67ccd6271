/**
 * Names and ARN patterns every part of sendtime agrees on: the stack's IAM scoping, the fan-out definition,
 * the policy pack and the operator scripts. https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
 */
import { createHash } from "crypto";
import { scheduler } from "./quotas";
import { InternalError } from "../errors";

/** Every campaign's schedule group is `campaign-<id>`; IAM is scoped to this prefix. */
export const CAMPAIGN_PREFIX = "campaign-";

/** The service principal that assumes the target role and must be the only one PassRole allows. */
export const SCHEDULER_SERVICE = "scheduler.amazonaws.com";

/**
 * Tag on the fan-out state machine: the CreateSchedule quota (createScheduleTps) the stack was sized for. The policy
 * pack sees resources, not stack config; this tag lets it compare the stack's quota with its own config.
 */
export const STACK_QUOTA_TAG = "sendtime:createScheduleTps";

/** The service principal of Step Functions, which runs the fan-out. */
export const STATES_SERVICE = "states.amazonaws.com";

/** The service principals of journeys: EventBridge invokes the enrolment function and dead-letters to its queue. */
export const LAMBDA_SERVICE = "lambda.amazonaws.com";
export const EVENTS_SERVICE = "events.amazonaws.com";

/** What a Lambda function's role needs to write its logs, on its log group's streams (`<log group ARN>:*`). */
export const FUNCTION_LOG_ACTIONS = ["logs:CreateLogStream", "logs:PutLogEvents"] as const;
/** What using a customer-managed key takes: SQS, DynamoDB and SSM encrypt with a data key and decrypt with it. */
export const KMS_KEY_USE_ACTIONS = ["kms:GenerateDataKey", "kms:Decrypt"] as const;

/** Scheduler Name and GroupName: 1–64 characters of [0-9a-zA-Z-_.]. */
const NAME_PATTERN = /^[0-9A-Za-z_.-]{1,64}$/;
/** The shape of a hashed schedule name's stem; an id of this shape is hashed too, so the two kinds never meet. */
const HASHED_STEM = /^h\.[0-9a-f]{32}$/;

export function isValidSchedulerName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

/** The schedule group of a campaign. */
export function campaignGroupName(campaignId: string): string {
  return CAMPAIGN_PREFIX + campaignId;
}

/** Why a campaign id cannot be used, or undefined when `campaign-<id>` is a valid group name. */
export function campaignIdProblem(campaignId: string): string | undefined {
  const max = scheduler.nameMaxLength - CAMPAIGN_PREFIX.length;
  if (!/^[0-9A-Za-z_.-]+$/.test(campaignId) || campaignId.length > max) {
    return `campaign id "${campaignId}" must be 1–${max} characters of 0-9 a-z A-Z - _ . (the group name is "${CAMPAIGN_PREFIX}<id>", at most ${scheduler.nameMaxLength})`;
  }
  return undefined;
}

/**
 * The schedule name of one recipient's step: `<id>-<step>` when that is a valid name, otherwise `h.<hash of id>-<step>`.
 * Stable (same id, same name on every run, so re-runs hit ConflictException instead of duplicating) and unique in
 * the campaign: the step is always the part after the last `-`, and ids that look like a hash stem are hashed too.
 */
export function scheduleName(recipientId: string, step: number): string {
  const plain = `${recipientId}-${step}`;
  if (isValidSchedulerName(plain) && !HASHED_STEM.test(recipientId)) return plain;
  return `${hashedStem(recipientId)}-${step}`;
}

function hashedStem(recipientId: string): string {
  return "h." + createHash("sha256").update(recipientId, "utf8").digest("hex").slice(0, 32);
}

/**
 * The name of a bulk schedule (launch-campaign --bulk): `bulk.<step>.<YYYYMMDDTHHMM>Z[.<variant>].<chunk>`, the group
 * (step, UTC minute, variant: the template follows from step and variant) and the chunk's position in it. Stable: the
 * same list and flags give the same groups and chunks, so a re-run hits ConflictException. Never a recipient's name:
 * those end in `-<step>` and `-r<N>` (redrive), this in `.<chunk>`; nor the housekeeping schedule's.
 */
export function bulkScheduleName(step: number, utcMs: number, variant: string | null, chunk: number): string {
  const minute = new Date(utcMs).toISOString().slice(0, 16).replace(/[-:]/g, "");
  const name = `bulk.${step}.${minute}Z${variant === null ? "" : `.${variant}`}.${chunk}`;
  if (!isValidSchedulerName(name)) throw new InternalError(`bulk schedule name ${name} breaks Scheduler's name rules`);
  return name;
}

/** Where an account's ARNs live. */
export interface ArnScope {
  partition: string;
  region: string;
  accountId: string;
}

/** Schedules of every campaign group: `schedule/campaign-*\/*`. */
export function campaignSchedulesArn(s: ArnScope): string {
  return `arn:${s.partition}:scheduler:${s.region}:${s.accountId}:schedule/${CAMPAIGN_PREFIX}*/*`;
}

/** The schedules of one group (a journey's `campaign-<journey>`): `schedule/<group>/*`. */
export function groupSchedulesArn(s: ArnScope, groupName: string): string {
  return `arn:${s.partition}:scheduler:${s.region}:${s.accountId}:schedule/${groupName}/*`;
}

/** The housekeeping schedule of every campaign group: `schedule/campaign-*\/sendtime.cleanup`. */
export function housekeepingSchedulesArn(s: ArnScope): string {
  return `arn:${s.partition}:scheduler:${s.region}:${s.accountId}:schedule/${CAMPAIGN_PREFIX}*/${CLEANUP_SCHEDULE_NAME}`;
}

/** Every campaign schedule group: `schedule-group/campaign-*`. */
export function campaignGroupsArn(s: ArnScope): string {
  return `arn:${s.partition}:scheduler:${s.region}:${s.accountId}:schedule-group/${CAMPAIGN_PREFIX}*`;
}

/**
 * The longest name AWS takes for each kind of resource sendtime names (the rest Pulumi names: logical name + 7 hex).
 * Lambda function: https://docs.aws.amazon.com/lambda/latest/api/API_CreateFunction.html (FunctionName, a name alone);
 * IAM role: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html; SQS queue:
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html; state machine:
 * https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html; schedule group:
 * https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateScheduleGroup.html; DynamoDB table:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html; S3 bucket (lower
 * case only): https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html; CloudWatch alarm:
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html; SNS topic:
 * https://docs.aws.amazon.com/sns/latest/api/API_CreateTopic.html; EventBridge rule:
 * https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_Rule.html; SES configuration set:
 * https://docs.aws.amazon.com/ses/latest/APIReference/API_ConfigurationSet.html.
 */
export const NAME_MAX_LENGTH = {
  lambdaFunction: 64,
  iamRole: 64,
  sqsQueue: 80,
  stateMachine: 80,
  scheduleGroup: scheduler.nameMaxLength,
  dynamoDbTable: 255,
  s3Bucket: 63,
  cloudWatchAlarm: 255,
  snsTopic: 256,
  eventBridgeRule: 64,
  sesConfigurationSet: 64,
} as const;

/**
 * The characters a stack name may have here: Pulumi's own rule ([A-Za-z0-9_.-], at most 100) less `.`, which Lambda
 * function names, SES configuration set names and a logged state machine's name refuse.
 */
const STACK_NAME = /^[A-Za-z0-9_-]{1,100}$/;
/** Characters of a name's hash when the stack name is cut (SST's way: a cut name stays unique and stable). */
const HASH_LENGTH = 8;

/** Why `stack` cannot name sendtime's resources, or undefined when it can. */
export function stackNameProblem(stack: string): string | undefined {
  if (STACK_NAME.test(stack)) return undefined;
  return `stack name "${stack}" must be 1–100 characters of A-Z a-z 0-9 - _ (it is part of the names of the stack's Lambda functions, state machines and SES configuration set, which refuse any other)`;
}

/**
 * The physical name of the stack's `part` (a component's name; "" for the stack's own, e.g. its configuration set):
 * `sendtime-<part>-<stack>`. Stable: the same stack and part give the same name, which other resources may name before
 * it exists. When that is longer than `maxLength` (a long stack name), the stack name is cut to fit and followed by
 * `-` and the first 8 hex characters of the whole name's SHA-256, so two long stack names never share a name.
 */
export function physicalName(stack: string, part: string, maxLength: number): string {
  const problem = stackNameProblem(stack);
  if (problem) throw new Error(problem);
  const prefix = part === "" ? "sendtime-" : `sendtime-${part}-`;
  const whole = prefix + stack;
  if (whole.length <= maxLength) return whole;
  const room = maxLength - prefix.length - HASH_LENGTH - 1;
  if (room < 1) throw new Error(`internal: "${prefix}" leaves no room for the stack name in ${maxLength} characters`);
  const hash = createHash("sha256").update(whole, "utf8").digest("hex").slice(0, HASH_LENGTH);
  return `${prefix}${stack.slice(0, room)}-${hash}`;
}

/** The one sender's state machine name in a stack (the target role names it before it exists). */
export function senderName(stack: string): string {
  return physicalName(stack, "sender", NAME_MAX_LENGTH.stateMachine);
}

/** A state machine's ARN. */
export function stateMachineArn(s: ArnScope, name: string): string {
  return `arn:${s.partition}:states:${s.region}:${s.accountId}:stateMachine:${name}`;
}

const escaped = CAMPAIGN_PREFIX.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");
const CAMPAIGN_SCHEDULE_ARN = new RegExp(`^arn:aws[a-z-]*:scheduler:[a-z0-9-]+:\\d{12}:schedule/${escaped}[^/]*/.+$`);
const CAMPAIGN_GROUP_ARN = new RegExp(`^arn:aws[a-z-]*:scheduler:[a-z0-9-]+:\\d{12}:schedule-group/${escaped}[^/]*$`);

/**
 * Whether an IAM Resource stays within campaigns: a schedule of a `campaign-*` group, or a `campaign-*` group
 * (wildcards allowed only after the prefix). The matcher for what campaignSchedulesArn/campaignGroupsArn generate.
 */
export function isCampaignScopedArn(resource: string): boolean {
  return CAMPAIGN_SCHEDULE_ARN.test(resource) || CAMPAIGN_GROUP_ARN.test(resource);
}

/** SES resource names (templates, contact lists, topics): 1–64 of A-Z a-z 0-9 _ -. */
export const SES_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** An SES template's ARN (SES v1 and v2 share one store of templates per account and Region). */
export function sesTemplateArn(scope: ArnScope, name: string): string {
  return `arn:${scope.partition}:ses:${scope.region}:${scope.accountId}:template/${name}`;
}

/** The Scheduler universal target that deletes a schedule group (a campaign's housekeeping schedule calls it). */
export function schedulerDeleteGroupTargetArn(partition: string): string {
  return `arn:${partition}:scheduler:::aws-sdk:scheduler:deleteScheduleGroup`;
}

/**
 * The housekeeping schedule in every campaign group. Plan schedule names always end in `-<step>`; this one has no
 * `-`, so it never meets a recipient's schedule.
 */
export const CLEANUP_SCHEDULE_NAME = "sendtime.cleanup";

/** Step Functions' AWS SDK integration for one API action, e.g. ("scheduler", "createSchedule"). */
export function sdkIntegrationArn(partition: string, service: string, action: string): string {
  return `arn:${partition}:states:::aws-sdk:${service}:${action}`;
}

/** Plan objects live under `plans/` (keys: infra/core/plan/plan-row.ts), fan-out results under `results/`; both hold addresses and expire. */
export const PLANS_PREFIX = "plans/";
export const RESULTS_PREFIX = "results/";

/** One launch's record (its plan summary and scheduled counts, no addresses): kept, unlike plans, for reports. */
export const LAUNCHES_PREFIX = "launches/";

/** The S3 key of one launch's record. */
export function launchRecordKey(campaignId: string, launchId: string): string {
  return `${LAUNCHES_PREFIX}${campaignId}/${launchId}.json`;
}
