/**
 * Every IAM document the stack writes, as typed pure builders: plain values in, a policy document out. The
 * components call them (inside `apply`), and the policy tests call them with the same values to check the stack's
 * real statements against the guard policies. https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements.html
 */
import {
  ArnScope,
  campaignGroupName,
  campaignGroupsArn,
  groupSchedulesArn,
  housekeepingSchedulesArn,
  EVENTS_SERVICE,
  FUNCTION_LOG_ACTIONS,
  KMS_KEY_USE_ACTIONS,
  LAMBDA_SERVICE,
  campaignSchedulesArn,
  PLANS_PREFIX,
  sesTemplateArn,
  RESULTS_PREFIX,
  SCHEDULER_SERVICE,
  STATES_SERVICE,
  stateMachineArn,
} from "./core/plan/naming";
import {
  OPT_OUT_READ_ACTIONS,
  OPT_OUT_WRITE_ACTIONS,
  UNSUBSCRIBE_KEY_READ_ACTION,
  UNSUBSCRIBE_SES_ACTIONS,
} from "./core/consent/unsubscribe-endpoint";
import { campaignStateKey, enrolmentKey, occurrenceKey } from "./core/send/ledger";

export interface PolicyStatement {
  Sid?: string;
  Effect: "Allow" | "Deny";
  Principal?: "*" | { Service: string };
  Action: string | string[];
  /** Absent in a trust policy. */
  Resource?: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

export interface PolicyDocument {
  Version: "2012-10-17";
  Statement: PolicyStatement[];
}

export function policyDocument(statements: PolicyStatement[]): PolicyDocument {
  return { Version: "2012-10-17", Statement: statements };
}

/** A role only `service` may assume, and only on behalf of this account (no confused deputy). */
export function serviceTrustPolicy(service: string, accountId: string): PolicyDocument {
  return policyDocument([
    {
      Effect: "Allow",
      Principal: { Service: service },
      Action: "sts:AssumeRole",
      Condition: { StringEquals: { "aws:SourceAccount": accountId } },
    },
  ]);
}

/** The role EventBridge Scheduler assumes for every campaign schedule. */
export const schedulerTrustPolicy = (accountId: string) => serviceTrustPolicy(SCHEDULER_SERVICE, accountId);

/** The role the fan-out state machine runs as. */
export const fanOutTrustPolicy = (accountId: string) => serviceTrustPolicy(STATES_SERVICE, accountId);

export interface SchedulerTargetGrants {
  scope: ArnScope;
  deadLetterQueueArn: string;
  kmsKeyArn?: string;
  /** The one sender's state machine name: every schedule (campaigns, journeys, redrives) starts it. */
  senderName: string;
}

/** The SES resources every templated send needs; `templateNames`: the templates the stack deploys. */
interface SesSendGrants {
  scope: ArnScope;
  identityArn: string;
  configurationSetArn: string;
  contactListArn?: string;
  /** The stack's templates (`sendtime:templatesDir`): sends may use only these; none deployed: any template of the account. */
  templateNames?: string[];
}

/** SES resources a templated send uses: the identity, the configuration set, the templates, the contact list. */
function sesSendResources(g: SesSendGrants): string[] {
  const { partition, region, accountId } = g.scope;
  const templates = g.templateNames?.length
    ? g.templateNames.map((n) => sesTemplateArn(g.scope, n))
    : [`arn:${partition}:ses:${region}:${accountId}:template/*`];
  const resources = [g.identityArn, g.configurationSetArn, ...templates];
  if (g.contactListArn) resources.push(g.contactListArn);
  return resources;
}

/**
 * What a recipient's schedule (campaign, journey or redrive) may do when it fires: start the one sender, which alone
 * sends, and dead-letter what it could not start. It cannot call SES, nor delete a group: that is the housekeeping
 * role's, which the journeys cannot pass.
 */
export function schedulerTargetStatements(g: SchedulerTargetGrants): PolicyStatement[] {
  return [
    {
      Sid: "StartSender",
      Effect: "Allow",
      Action: "states:StartExecution",
      Resource: stateMachineArn(g.scope, g.senderName),
    },
    { Sid: "DeadLetter", Effect: "Allow", Action: "sqs:SendMessage", Resource: g.deadLetterQueueArn },
    ...keyUse("DeadLetterEncryption", g.kmsKeyArn),
  ];
}

export interface HousekeepingGrants {
  scope: ArnScope;
  deadLetterQueueArn: string;
  kmsKeyArn?: string;
}

/**
 * What a campaign's housekeeping schedule may do when it fires: delete a campaign's group (campaign groups only, as
 * every Scheduler grant), and dead-letter a deletion that failed. Only the fan-out passes this role.
 */
export function housekeepingStatements(g: HousekeepingGrants): PolicyStatement[] {
  return [
    {
      Sid: "DeleteFinishedCampaignGroups",
      Effect: "Allow",
      Action: "scheduler:DeleteScheduleGroup",
      Resource: campaignGroupsArn(g.scope),
    },
    { Sid: "DeadLetter", Effect: "Allow", Action: "sqs:SendMessage", Resource: g.deadLetterQueueArn },
    ...keyUse("DeadLetterEncryption", g.kmsKeyArn),
  ];
}

/** A function's logs: its own log group's streams, nothing else. */
function functionLogs(logGroupArn: string): PolicyStatement {
  return { Sid: "Logs", Effect: "Allow", Action: [...FUNCTION_LOG_ACTIONS], Resource: `${logGroupArn}:*` };
}

/** With a customer-managed key: encrypting and decrypting with that key only (SQS, DynamoDB and S3 need both). */
function keyUse(Sid: string, kmsKeyArn: string | undefined): PolicyStatement[] {
  return kmsKeyArn ? [{ Sid, Effect: "Allow", Action: [...KMS_KEY_USE_ACTIONS], Resource: kmsKeyArn }] : [];
}

export interface SenderGrants extends SesSendGrants {
  deadLetterQueueArn: string;
  /** The occurrence ledger: claims (PutItem), the campaign's state (GetItem) and the outcomes (UpdateItem). */
  ledgerTableArn: string;
  /** With a frequency cap: the cap's table, which the sender admits entries against, and the capped-send metric. */
  gate?: { tableArn: string; metricNamespace: string };
  /** With the unsubscribe endpoint: its opt-out table, which the sender reads (only), and the opted-out metric. */
  optOuts?: { tableArn: string; metricNamespace: string };
  kmsKeyArn?: string;
}

/**
 * What the sender may do in the ledger, by the key of the item (dynamodb:LeadingKeys): put (the claim) and update (the
 * outcomes) occurrences, read campaigns' states. It can write no campaign's state and no journey's enrolment.
 */
function senderLedgerStatements(ledgerTableArn: string): PolicyStatement[] {
  const keyed = (prefix: string) => ({
    "ForAllValues:StringLike": { "dynamodb:LeadingKeys": [`${prefix.slice(0, prefix.indexOf("#") + 1)}*`] },
  });
  return [
    {
      Sid: "ClaimAndRecordOccurrences",
      Effect: "Allow",
      Action: ["dynamodb:PutItem", "dynamodb:UpdateItem"],
      Resource: ledgerTableArn,
      Condition: keyed(occurrenceKey("", "")),
    },
    {
      Sid: "ReadCampaignStates",
      Effect: "Allow",
      Action: "dynamodb:GetItem",
      Resource: ledgerTableArn,
      Condition: keyed(campaignStateKey("")),
    },
  ];
}

/**
 * The one sender, the only role of the stack that may send: SendEmail and SendBulkEmail as the stack's identity,
 * configuration set, templates and contact list; the ledger; one dead-letter pointer per failed entry; with a cap the
 * cap's table and metric; with the endpoint its opt-out table.
 */
export function senderStatements(g: SenderGrants): PolicyStatement[] {
  const statements: PolicyStatement[] = [
    {
      Sid: "SendEmail",
      Effect: "Allow",
      Action: ["ses:SendEmail", "ses:SendBulkEmail"],
      Resource: sesSendResources(g),
    },
    ...senderLedgerStatements(g.ledgerTableArn),
    { Sid: "DeadLetterEntries", Effect: "Allow", Action: "sqs:SendMessage", Resource: g.deadLetterQueueArn },
  ];
  const namespaces = new Set<string>();
  if (g.optOuts) {
    statements.push({
      Sid: "LookUpOptOuts",
      Effect: "Allow",
      Action: [...OPT_OUT_READ_ACTIONS],
      Resource: g.optOuts.tableArn,
    });
    namespaces.add(g.optOuts.metricNamespace);
  }
  if (g.gate) {
    statements.push({
      Sid: "AdmitEntries",
      Effect: "Allow",
      Action: ["dynamodb:UpdateItem", "dynamodb:GetItem"],
      Resource: g.gate.tableArn,
    });
    namespaces.add(g.gate.metricNamespace);
  }
  for (const namespace of namespaces)
    statements.push({
      Sid: "CountSkippedEntries",
      Effect: "Allow",
      Action: "cloudwatch:PutMetricData",
      // PutMetricData has no resource; the namespace condition keeps it to the sender's own metrics.
      Resource: "*",
      Condition: { StringEquals: { "cloudwatch:namespace": namespace } },
    });
  return [...statements, ...keyUse("TableAndQueueEncryption", g.kmsKeyArn)];
}

export const unsubscribeTrustPolicy = (accountId: string) => serviceTrustPolicy(LAMBDA_SERVICE, accountId);

export interface UnsubscribeGrants {
  /** The SSM parameter that holds the signing key: read, decrypted, and nothing else. */
  keyParameterArn: string;
  /** The contact list whose topic it opts addresses out of. */
  contactListArn: string;
  logGroupArn: string;
  /** The opt-out table it records each opt-out in (UpdateItem only: no read, no delete). */
  optOutTableArn: string;
  /** The customer-managed key of the parameter and the table, when there is one (AWS managed keys need no grant). */
  kmsKeyArn?: string;
}

/**
 * The public unsubscribe function: read its key, read and write contacts of its one contact list, record an opt-out in
 * its one table, log. No send, no
 * wildcard: anyone on the internet can invoke it, so its role holds only what opting out takes.
 */
export function unsubscribeStatements(g: UnsubscribeGrants): PolicyStatement[] {
  return [
    { Sid: "ReadSigningKey", Effect: "Allow", Action: UNSUBSCRIBE_KEY_READ_ACTION, Resource: g.keyParameterArn },
    { Sid: "OptOut", Effect: "Allow", Action: [...UNSUBSCRIBE_SES_ACTIONS], Resource: g.contactListArn },
    { Sid: "RecordOptOut", Effect: "Allow", Action: [...OPT_OUT_WRITE_ACTIONS], Resource: g.optOutTableArn },
    // The customer-managed key decrypts the signing key and encrypts the table's items.
    ...keyUse("SigningKeyAndTableEncryption", g.kmsKeyArn),
    functionLogs(g.logGroupArn),
  ];
}

export interface SesOptOutGrants {
  /** The opt-out table it records SES's opt-outs in (UpdateItem only: no read, no delete). */
  optOutTableArn: string;
  logGroupArn: string;
  /** Its dead-letter queue: the on-failure destination of its asynchronous invocations. */
  deadLetterQueueArn: string;
  /** The table's customer-managed key, when there is one. */
  kmsKeyArn?: string;
}

/**
 * The function that records SES's SUBSCRIPTION events (infra/handlers/ses-opt-outs.ts): record an opt-out in its one
 * table, keep a failed event in its queue (Lambda sends it there as the function's role), log. No SES action at all.
 */
export function sesOptOutStatements(g: SesOptOutGrants): PolicyStatement[] {
  return [
    { Sid: "RecordOptOut", Effect: "Allow", Action: [...OPT_OUT_WRITE_ACTIONS], Resource: g.optOutTableArn },
    { Sid: "KeepFailedEvents", Effect: "Allow", Action: "sqs:SendMessage", Resource: g.deadLetterQueueArn },
    ...keyUse("TableEncryption", g.kmsKeyArn),
    functionLogs(g.logGroupArn),
  ];
}

export interface FanOutGrants {
  scope: ArnScope;
  /** The state machine's own name: it starts and manages its child executions. */
  stateMachineName: string;
  /** The role passed to Scheduler with every recipient's schedule (and to nothing else). */
  targetRoleArn: string;
  /** The role passed to Scheduler with the housekeeping schedule, which deletes the campaign's group. */
  housekeepingRoleArn: string;
  /** The recipient bucket: plans read from `plans/`, results written to `results/`. */
  bucketArn: string;
  kmsKeyArn?: string;
}

export function fanOutStatements(g: FanOutGrants): PolicyStatement[] {
  const self = stateMachineArn(g.scope, g.stateMachineName);
  const executions = self.replace(":stateMachine:", ":execution:");
  const statements: PolicyStatement[] = [
    {
      Sid: "CreateCampaignSchedules",
      Effect: "Allow",
      Action: "scheduler:CreateSchedule",
      Resource: campaignSchedulesArn(g.scope),
    },
    {
      // A re-run reads the housekeeping schedule and moves it later (fanout-definition.ts); no recipient's schedule.
      Sid: "MoveHousekeepingSchedule",
      Effect: "Allow",
      Action: ["scheduler:GetSchedule", "scheduler:UpdateSchedule"],
      Resource: housekeepingSchedulesArn(g.scope),
    },
    {
      Sid: "CreateCampaignGroups",
      Effect: "Allow",
      Action: ["scheduler:CreateScheduleGroup", "scheduler:TagResource"],
      Resource: campaignGroupsArn(g.scope),
    },
    {
      Sid: "PassTargetRolesToScheduler",
      Effect: "Allow",
      Action: "iam:PassRole",
      Resource: [g.targetRoleArn, g.housekeepingRoleArn],
      Condition: { StringEquals: { "iam:PassedToService": SCHEDULER_SERVICE } },
    },
    { Sid: "ReadPlans", Effect: "Allow", Action: "s3:GetObject", Resource: `${g.bucketArn}/${PLANS_PREFIX}*` },
    {
      Sid: "WriteResults",
      Effect: "Allow",
      Action: ["s3:PutObject", "s3:GetObject", "s3:ListMultipartUploadParts", "s3:AbortMultipartUpload"],
      Resource: `${g.bucketArn}/${RESULTS_PREFIX}*`,
    },
    { Sid: "StartChildren", Effect: "Allow", Action: "states:StartExecution", Resource: self },
    {
      Sid: "ManageChildren",
      Effect: "Allow",
      Action: ["states:DescribeExecution", "states:StopExecution", "states:RedriveExecution"],
      Resource: [`${executions}:*`, `${executions}/*`],
    },
    // Step Functions' log delivery cannot be scoped to a log group: AWS requires these on "*".
    { Sid: "DeliverLogs", Effect: "Allow", Action: LOG_DELIVERY_ACTIONS, Resource: "*" },
  ];
  return [...statements, ...keyUse("PlanEncryption", g.kmsKeyArn)];
}

/** The role the journey enrolment function runs as. */
export const journeyTrustPolicy = (accountId: string) => serviceTrustPolicy(LAMBDA_SERVICE, accountId);

export interface JourneyGrants {
  scope: ArnScope;
  /** The journeys (their names): the function creates and deletes schedules in their groups only. */
  journeyNames: string[];
  /** The role passed to Scheduler with every schedule (and to nothing else); it cannot delete groups. */
  targetRoleArn: string;
  /** The function's log group. */
  logGroupArn: string;
  /** Where failed events are kept (the function's on-failure destination). */
  deadLetterQueueArn: string;
  /** The occurrence ledger, where each trigger's enrolment is claimed (and released after a failed one). */
  ledgerTableArn: string;
  /** The ledger's customer-managed key, when there is one. */
  kmsKeyArn?: string;
}

/**
 * What the enrolment function may do: claim and release its journeys' enrolments in the ledger (PutItem and
 * DeleteItem of `enr#<journey>#…` items only: never an occurrence or a campaign's state), create and delete schedules
 * in its journeys' groups (`campaign-<journey>`, known at deploy time), pass the send role, log, keep failures.
 */
export function journeyStatements(g: JourneyGrants): PolicyStatement[] {
  if (!g.journeyNames.length) throw new Error("journeyStatements: no journey");
  return [
    {
      Sid: "EnrolAndExit",
      Effect: "Allow",
      Action: ["scheduler:CreateSchedule", "scheduler:DeleteSchedule"],
      Resource: g.journeyNames.map((name) => groupSchedulesArn(g.scope, campaignGroupName(name))),
    },
    {
      Sid: "PassTargetRoleToScheduler",
      Effect: "Allow",
      Action: "iam:PassRole",
      Resource: g.targetRoleArn,
      Condition: { StringEquals: { "iam:PassedToService": SCHEDULER_SERVICE } },
    },
    functionLogs(g.logGroupArn),
    { Sid: "KeepFailedEvents", Effect: "Allow", Action: "sqs:SendMessage", Resource: g.deadLetterQueueArn },
    {
      Sid: "ClaimEnrolments",
      Effect: "Allow",
      Action: ["dynamodb:PutItem", "dynamodb:DeleteItem"],
      Resource: g.ledgerTableArn,
      // Every item it writes has a key `enr#<one of its journeys>#<subscriber>#<trigger id>` (StringLike: * spans #).
      Condition: {
        "ForAllValues:StringLike": { "dynamodb:LeadingKeys": g.journeyNames.map((j) => enrolmentKey(j, "*", "*")) },
      },
    },
    ...keyUse("LedgerEncryption", g.kmsKeyArn),
  ];
}

/** Who writes a queue: roles of the stack (their own policies grant sqs:SendMessage on it) and EventBridge rules. */
export interface QueueWriters {
  /** At least one: the roles that send to the queue. */
  roleArns: string[];
  /** Rules whose targets dead-letter into the queue: EventBridge writes for them, as the service. */
  ruleArns?: string[];
}

/**
 * A queue's one policy: it accepts messages from its writers only. EventBridge may write for the rules given (aws:
 * SourceArn); every other caller — any user or role of the account, whatever its own policies allow — is denied
 * sqs:SendMessage unless it is one of the roles (aws:PrincipalArn) or writes for one of the rules. The negated
 * operator holds when a key is absent, so a caller with neither is denied. Scheduler writes a schedule's dead letters
 * as the schedule's role (https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html), and
 * Lambda an on-failure destination as the function's role: those writers are roles.
 */
export function stackOnlyQueuePolicy(queueArn: string, w: QueueWriters): PolicyDocument {
  const rules = w.ruleArns ?? [];
  if (!w.roleArns.length && !rules.length) throw new Error("stackOnlyQueuePolicy: nothing writes the queue");
  const statements: PolicyStatement[] = rules.length
    ? [
        {
          Sid: "RulesDeadLetter",
          Effect: "Allow",
          Principal: { Service: EVENTS_SERVICE },
          Action: "sqs:SendMessage",
          Resource: queueArn,
          Condition: { ArnEquals: { "aws:SourceArn": rules } },
        },
      ]
    : [];
  statements.push({
    Sid: "OnlyTheStackWrites",
    Effect: "Deny",
    Principal: "*",
    Action: "sqs:SendMessage",
    Resource: queueArn,
    Condition: {
      ArnNotEquals: {
        ...(w.roleArns.length ? { "aws:PrincipalArn": w.roleArns } : {}),
        ...(rules.length ? { "aws:SourceArn": rules } : {}),
      },
    },
  });
  return policyDocument(statements);
}

/** https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html#cloudwatch-iam-policy */
const LOG_DELIVERY_ACTIONS = [
  "logs:CreateLogDelivery",
  "logs:GetLogDelivery",
  "logs:UpdateLogDelivery",
  "logs:DeleteLogDelivery",
  "logs:ListLogDeliveries",
  "logs:PutResourcePolicy",
  "logs:DescribeResourcePolicies",
  "logs:DescribeLogGroups",
];

/** The bucket policy: any request not over TLS is denied. */
export function tlsOnlyBucketPolicy(bucketArn: string): PolicyDocument {
  return policyDocument([
    {
      Sid: "DenyInsecureTransport",
      Effect: "Deny",
      Principal: "*",
      Action: "s3:*",
      Resource: [bucketArn, `${bucketArn}/*`],
      Condition: { Bool: { "aws:SecureTransport": "false" } },
    },
  ]);
}
