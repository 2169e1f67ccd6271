/**
 * sendtime: one stack per environment. Reads the validated config, builds the components, exports what the
 * operator scripts need (docs/deploying.md, "Stack outputs").
 */
import * as fs from "fs";
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { Alarms } from "./alarms";
import { DEFAULT_TEMPLATES_DIR, parseStackConfig, StackConfig } from "./config";
import { FanOut } from "./fanout";
import { Journeys } from "./journeys";
import { Journey, parseJourneyConfig } from "./core/journeys/journeys-definition";
import { ArnScope, CAMPAIGN_PREFIX, senderName, stackNameProblem } from "./core/plan/naming";
import { UnsubscribeEndpoint } from "./unsubscribe-endpoint";
import { SesOptOuts } from "./ses-opt-outs";
import { RecipientBucket } from "./recipient-bucket";
import { SchedulerTarget } from "./scheduler-target";
import { Sender } from "./sender";
import { SesIdentity } from "./ses-identity";
import { isIanaZone } from "./core/journeys/subscriber-zone";
import { quietWindowProblem } from "./core/journeys/step-times";
import { ConfigError, JourneyDefinitionError, TemplateError } from "./core/errors";
import { EmailTemplates } from "./templates";
import { journeyTemplateProblems } from "./core/plan/templates";

const config = readConfig();
const journeyConfig = readJourneyConfig();
const templates = deployTemplates();

const scope: pulumi.Output<ArnScope> = pulumi
  .all([aws.getPartitionOutput(), aws.getRegionOutput(), aws.getCallerIdentityOutput()])
  .apply(([p, r, id]) => ({ partition: p.partition, region: r.region, accountId: id.accountId }));

const recipients = new RecipientBucket("recipients", {
  retentionDays: config.recipientRetentionDays,
  kmsKeyArn: config.kmsKeyArn,
});

const sesIdentity = new SesIdentity("sender", {
  identity: config.senderIdentity,
  unsubscribe: config.unsubscribe,
  trackingDomain: config.trackingDomain,
});

// Every schedule's role: it may only start the one sender, and dead-letter.
const target = new SchedulerTarget("scheduler-target", {
  scope,
  kmsKeyArn: config.kmsKeyArn,
  senderName: senderName(pulumi.getStack()),
});

// With unsubscribe configured: bulk sends' one-click unsubscribe (SendBulkEmail has no list management).
const unsubscribe =
  config.unsubscribe && sesIdentity.contactListName && sesIdentity.contactListArn
    ? new UnsubscribeEndpoint("unsubscribe", {
        scope,
        contactListName: sesIdentity.contactListName,
        contactListArn: sesIdentity.contactListArn,
        topicName: config.unsubscribe.topic,
        kmsKeyArn: config.kmsKeyArn,
        logRetentionDays: config.logRetentionDays,
      })
    : undefined;

// Opt-outs made through SES itself (its link in a plain send) into the same table: SES's SUBSCRIPTION events.
const sesOptOuts =
  unsubscribe && sesIdentity.contactListName && config.unsubscribe
    ? new SesOptOuts("ses-opt-outs", {
        scope,
        configurationSetName: sesIdentity.configurationSetName,
        contactListName: sesIdentity.contactListName,
        topicName: config.unsubscribe.topic,
        optOutTable: { arn: unsubscribe.optOutTable.arn, name: unsubscribe.optOutTable.name },
        kmsKeyArn: config.kmsKeyArn,
        logRetentionDays: config.logRetentionDays,
      })
    : undefined;

// The one door: every schedule starts it, and it alone calls SES (with a cap, it admits each entry itself).
const sender = new Sender("bulk-sender", {
  scope,
  stateMachineName: senderName(pulumi.getStack()),
  identityArn: sesIdentity.identityArn,
  configurationSetArn: sesIdentity.configurationSetArn,
  contactListArn: sesIdentity.contactListArn,
  templateNames: templates?.names,
  deadLetterQueueArn: target.deadLetterQueue.arn,
  deadLetterQueueUrl: target.deadLetterQueue.url,
  cap: config.frequencyCap,
  // Opt-outs recorded by the endpoint: SendBulkEmail has no ListManagementOptions, so SES would not filter them.
  optOuts: unsubscribe ? { tableArn: unsubscribe.optOutTable.arn, tableName: unsubscribe.optOutTable.name } : undefined,
  kmsKeyArn: config.kmsKeyArn,
});

// Only the stack's roles that write dead letters may put a message in the queue redrive reads: no one can plant one.
target.allowOnlyStackToDeadLetter([sender.role.arn]);

// What every schedule carries, the fan-out's and the journeys' alike: the one sender, the role, retries, DLQ, SES.
const scheduleTarget = target.parameters({
  scope,
  senderArn: sender.arn,
  fromAddress: config.fromAddress,
  configurationSetName: sesIdentity.configurationSetName,
  contactListName: sesIdentity.contactListName,
  unsubscribeTopic: config.unsubscribe?.topic,
  retry: { maxEventAgeSeconds: config.maxEventAgeSeconds, maxRetryAttempts: config.maxRetryAttempts },
});

const fanOut = new FanOut("fanout", {
  scope,
  bucketName: recipients.name,
  bucketArn: recipients.arn,
  target: scheduleTarget,
  housekeepingRoleArn: target.housekeepingRoleArn,
  createScheduleTps: config.createScheduleTps,
  maxConcurrency: config.maxConcurrency,
  batchSize: config.batchSize,
  innerConcurrency: config.innerConcurrency,
  toleratedFailurePercentage: config.toleratedFailurePercentage,
  logRetentionDays: config.logRetentionDays,
  kmsKeyArn: config.kmsKeyArn,
});

const journeys = journeyConfig.journeys.length
  ? new Journeys("journeys", {
      journeys: journeyConfig.journeys,
      eventBusName: journeyConfig.eventBusName,
      scope,
      target: scheduleTarget,
      windowMinutes: config.defaultWindowMinutes,
      logRetentionDays: config.logRetentionDays,
      ledgerTable: { arn: sender.ledger.arn, name: sender.ledger.name },
      kmsKeyArn: config.kmsKeyArn,
    })
  : undefined;

const alarms = new Alarms("alarms", {
  deadLetterQueueName: target.deadLetterQueue.name,
  stateMachineArn: fanOut.arn,
  journeyDeadLetterQueueName: journeys?.deadLetterQueue.name,
  journeyNames: journeyConfig.journeys.map((j) => j.name),
  optOutEventsDeadLetterQueueName: sesOptOuts?.deadLetterQueue.name,
  email: config.alarmEmail,
});

export const bucketName = recipients.name;
export const stateMachineArn = fanOut.arn;
export const schedulerRoleArn = target.roleArn;
/** The role only housekeeping schedules run as: it may delete campaign groups, and nothing else. */
export const housekeepingRoleArn = target.housekeepingRoleArn;
export const deadLetterQueueUrl = target.deadLetterQueue.url;
export const configurationSetName = sesIdentity.configurationSetName;
export const fromAddress = config.fromAddress;
export const scheduleGroupPrefix = CAMPAIGN_PREFIX;
export const region = scope.region;
export const defaultWindowMinutes = config.defaultWindowMinutes;
export const createScheduleTps = config.createScheduleTps;
export const maxSchedules = config.maxSchedules;
export const dkimTokens = sesIdentity.dkimTokens;
export const alarmTopicArn = alarms.topic.arn;
/** The validated journeys and the settings their handler runs with: scripts/enrol.ts makes the same requests. */
export const journeyDefinitions: Journey[] = journeyConfig.journeys;
export const journeyEnrolment = journeys?.enrolment;
export const journeyFunctionName = journeys?.function.name;
export const journeyDeadLetterQueueUrl = journeys?.deadLetterQueue.url;
export const eventBusName = journeyConfig.eventBusName;
/** The one sender, which every schedule starts, and its occurrence ledger (campaign states, outcomes). */
export const senderStateMachineArn = sender.arn;
export const ledgerTableName = sender.ledger.name;
/** One-click unsubscribe for bulk sends (with sendtime:unsubscribe*): the endpoint and the SSM parameter of its key. */
export const unsubscribeUrl = unsubscribe?.url;
export const unsubscribeKeyParameter = unsubscribe?.keyParameterName;
/** The table of addresses opted out through the endpoint (the sender reads it before every send). */
export const optOutTableName = unsubscribe?.optOutTable.name;
/** The SES contact list and topic of one-click unsubscribe: a bulk launch rejects the addresses opted out there. */
export const contactListName = unsubscribe ? sesIdentity.contactListName : undefined;
export const unsubscribeTopic = unsubscribe ? config.unsubscribe?.topic : undefined;
/** SES opt-out events that could not be recorded in the opt-out table (each is an address bulk sends would still mail). */
export const optOutEventsDeadLetterQueueUrl = sesOptOuts?.deadLetterQueue.url;

/** The SES templates the stack deploys (the roles may send only these); absent when templates are kept in SES. */
export const templateNames = templates?.names;

/**
 * The templates folder (`sendtime:templatesDir`) as SES templates, or none: `none`, or the default folder absent
 * (templates kept in SES). A journey step whose template the folder lacks stops the preview: its sends would fail.
 */
function deployTemplates(): EmailTemplates | undefined {
  const dir = config.templatesDir;
  if (dir === undefined || (dir === DEFAULT_TEMPLATES_DIR && !fs.existsSync(dir))) return undefined;
  try {
    const deployed = new EmailTemplates("templates", { dir });
    const problems = journeyTemplateProblems(journeyConfig.journeys, new Set(deployed.names), dir);
    if (problems.length) throw new TemplateError(`${problems.join("; ")} (sendtime:templatesDir)`);
    return deployed;
  } catch (e) {
    if (e instanceof TemplateError) throw new pulumi.RunError(e.message);
    throw e;
  }
}

function readJourneyConfig() {
  const raw = new pulumi.Config("sendtime");
  try {
    const parsed = parseJourneyConfig((key) => raw.get(key), isIanaZone);
    const problem = quietWindowProblem(parsed.journeys, config.defaultWindowMinutes, "sendtime:defaultWindowMinutes");
    if (problem) throw new JourneyDefinitionError(problem);
    return parsed;
  } catch (e) {
    if (e instanceof JourneyDefinitionError) throw new pulumi.RunError(e.message);
    throw e;
  }
}

function readConfig(): StackConfig {
  const raw = new pulumi.Config("sendtime");
  try {
    const stackProblem = stackNameProblem(pulumi.getStack());
    if (stackProblem) throw new ConfigError(stackProblem);
    return parseStackConfig((key) => raw.get(key), Object.keys(pulumi.runtime.allConfig())).config;
  } catch (e) {
    // RunError: Pulumi prints the message alone, without a stack trace.
    if (e instanceof ConfigError) throw new pulumi.RunError(e.message);
    throw e;
  }
}
