/**
 * `Sendtime`: the whole sendtime stack as one component — the recipient bucket, the SES identity, the schedules'
 * target, the one sender, the fan-out, journeys, one-click unsubscribe and the alarms — for a Pulumi program of your
 * own (`import { Sendtime } from "sendtime/infra"`). This repository's program (infra/index.ts) reads the stack
 * config and builds one.
 */
import * as fs from "fs";
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { Alarms } from "./alarms";
import { DEFAULT_TEMPLATES_DIR, StackConfig } from "./config";
import { FanOut } from "./fanout";
import { Journeys } from "./journeys";
import { Journey } from "./core/journeys/journeys-definition";
import { ArnScope, CAMPAIGN_PREFIX, senderName, stackNameProblem } from "./core/plan/naming";
import { UnsubscribeEndpoint } from "./unsubscribe-endpoint";
import { SesOptOuts } from "./ses-opt-outs";
import { RecipientBucket } from "./recipient-bucket";
import { SchedulerTarget } from "./scheduler-target";
import { SchedulerTargetParameters } from "./core/plan/schedule-request";
import { Sender } from "./sender";
import { Sms } from "./sms";
import { SesIdentity } from "./ses-identity";
import { ConfigError } from "./config";
import { JourneyDefinitionError } from "./core/journeys/journeys-definition";
import { TemplateError } from "./core/plan/templates";
import { Guardrails } from "./guardrails";
import { guardrailAlarmPrefix } from "./core/send/guardrails";
import { EmailTemplates } from "./templates";
import { journeyTemplateProblems } from "./core/plan/templates";
import { resolveSendtimeArgs, SendtimeArgs, SendtimeSettings } from "./sendtime-args";

export type { SendtimeArgs } from "./sendtime-args";
export { sendtimeArgsFromConfig } from "./sendtime-args";

/** What the operator CLIs read from the stack (`pulumi stack output --json`): export each from your program. */
export interface SendtimeOutputs {
  bucketName: pulumi.Output<string>;
  stateMachineArn: pulumi.Output<string>;
  schedulerRoleArn: pulumi.Output<string>;
  /** The role only housekeeping schedules run as: it may delete campaign groups, and nothing else. */
  housekeepingRoleArn: pulumi.Output<string>;
  deadLetterQueueUrl: pulumi.Output<string>;
  configurationSetName: pulumi.Output<string>;
  fromAddress: string;
  scheduleGroupPrefix: string;
  region: pulumi.Output<string>;
  defaultWindowMinutes: number;
  createScheduleTps: number;
  maxSchedules: number;
  dkimTokens: pulumi.Output<string[]>;
  alarmTopicArn: pulumi.Output<string>;
  /** The validated journeys and the settings their handler runs with: scripts/enrol.ts makes the same requests. */
  journeyDefinitions: Journey[];
  journeyEnrolment: Journeys["enrolment"] | undefined;
  journeyFunctionName: pulumi.Output<string> | undefined;
  journeyDeadLetterQueueUrl: pulumi.Output<string> | undefined;
  eventBusName: string;
  /** The one sender, which every schedule starts, and its occurrence ledger (campaign states, outcomes). */
  senderStateMachineArn: pulumi.Output<string>;
  ledgerTableName: pulumi.Output<string>;
  /** One-click unsubscribe for bulk sends (with `unsubscribe`): the endpoint and the SSM parameter of its key. */
  unsubscribeUrl: pulumi.Output<string> | undefined;
  unsubscribeKeyParameter: pulumi.Output<string> | undefined;
  /** The table of addresses opted out through the endpoint (the sender reads it before every send). */
  optOutTableName: pulumi.Output<string> | undefined;
  /** The SES contact list and topic of one-click unsubscribe: a bulk launch rejects the addresses opted out there. */
  contactListName: pulumi.Output<string> | undefined;
  unsubscribeTopic: string | undefined;
  /** SES opt-out events that could not be recorded in the opt-out table (each an address bulk sends would still mail). */
  optOutEventsDeadLetterQueueUrl: pulumi.Output<string> | undefined;
  /** The SES templates the stack deploys (the roles may send only these); absent when templates are kept in SES. */
  templateNames: string[] | undefined;
  /** The guardrails' thresholds (absent: sendtime:guardrails none); campaign-report shows each campaign's rates against them. */
  guardrailSettings: SendtimeSettings["config"]["guardrails"];
  /** Every guardrail alarm's name starts so (`sendtime-<stack>-guardrail-`; absent without guardrails): cancel-campaign deletes the campaign's two. */
  guardrailAlarmPrefix: string | undefined;
  /** Texts (with `sms`): the pool, the SMS configuration set, opt-out list and event log group, the pool's parts per second and default message type. */
  smsPoolArn: string | undefined;
  smsConfigurationSetName: pulumi.Output<string> | undefined;
  smsOptOutListName: pulumi.Output<string> | undefined;
  smsEventLogGroupName: pulumi.Output<string> | undefined;
  smsMps: number | undefined;
  smsMessageType: string | undefined;
}

/** The components a Sendtime is made of (`sendtime.nodes`); the optional ones only where the arguments ask for them. */
export interface SendtimeNodes {
  recipients: RecipientBucket;
  identity: SesIdentity;
  target: SchedulerTarget;
  sender: Sender;
  fanOut: FanOut;
  alarms: Alarms;
  templates?: EmailTemplates;
  unsubscribe?: UnsubscribeEndpoint;
  sesOptOuts?: SesOptOuts;
  journeys?: Journeys;
  guardrails?: Guardrails;
  sms?: Sms;
}

type Core = Pick<SendtimeNodes, "recipients" | "identity" | "target" | "templates">;
type Optional = Pick<SendtimeNodes, "unsubscribe" | "sesOptOuts">;

export class Sendtime extends pulumi.ComponentResource {
  /** The stack outputs the CLIs read, under the names they read. */
  public readonly outputs: SendtimeOutputs;
  private readonly components: SendtimeNodes;

  constructor(name: string, args: SendtimeArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:Sendtime", name, {}, opts);
    const settings = checked(name, args);
    // Stacks made before the component had these at the top level: aliases keep their URNs (no replacement).
    const child = { parent: this, aliases: [{ parent: pulumi.rootStackResource }] };
    const scope = accountScope(this);
    const core = createCore();
    const optional = createUnsubscribe(scope, settings.config, core, child);
    const sms = settings.config.sms
      ? new Sms(
          "sms",
          {
            scope,
            stack: pulumi.getStack(),
            sms: settings.config.sms,
            logRetentionDays: settings.config.logRetentionDays,
          },
          child,
        )
      : undefined;
    const sender = createSender(scope, settings.config, core, optional, sms, child);
    const scheduleTarget = scheduleTargetOf(scope, settings.config, core, sender);
    const fanOut = createFanOut(scope, settings.config, core, scheduleTarget, child);
    const journeys = createJourneys(scope, settings, scheduleTarget, sender, child);
    const alarms = createAlarms(settings, core, fanOut, optional, journeys, child);
    const guardrails = createGuardrails(scope, settings, core, sender, fanOut, alarms, child);
    this.components = { ...core, ...optional, sender, fanOut, journeys, alarms, guardrails, sms };
    this.outputs = outputsOf(scope, settings, this.components);
    this.registerOutputs({});

    function createCore(): Core {
      const { config } = settings;
      const templates = deployTemplates(config, settings.journeys, child);
      const recipients = new RecipientBucket(
        "recipients",
        { retentionDays: config.recipientRetentionDays, kmsKeyArn: config.kmsKeyArn },
        child,
      );
      const identity = new SesIdentity(
        "sender",
        { identity: config.senderIdentity, unsubscribe: config.unsubscribe, trackingDomain: config.trackingDomain },
        child,
      );
      // Every schedule's role: it may only start the one sender, and dead-letter.
      const target = new SchedulerTarget(
        "scheduler-target",
        { scope, kmsKeyArn: config.kmsKeyArn, senderName: senderName(pulumi.getStack()) },
        child,
      );
      return { recipients, identity, target, templates };
    }
  }

  /** The components inside: the bucket, the identity, the sender, the fan-out and the rest. */
  public get nodes(): SendtimeNodes {
    return this.components;
  }
}

/** The arguments checked (a bad one stops the program with one line naming it, as a bad config key does). */
function checked(name: string, args: SendtimeArgs): SendtimeSettings {
  try {
    const stackProblem = stackNameProblem(pulumi.getStack());
    if (stackProblem) throw new ConfigError(stackProblem);
    return resolveSendtimeArgs(args);
  } catch (e) {
    if (e instanceof ConfigError || e instanceof JourneyDefinitionError)
      throw new pulumi.RunError(`Sendtime "${name}": ${e.message}`);
    throw e;
  }
}

function accountScope(parent: pulumi.Resource): pulumi.Output<ArnScope> {
  const opts = { parent };
  return pulumi
    .all([aws.getPartitionOutput({}, opts), aws.getRegionOutput({}, opts), aws.getCallerIdentityOutput({}, opts)])
    .apply(([p, r, id]) => ({ partition: p.partition, region: r.region, accountId: id.accountId }));
}

/**
 * The templates folder as SES templates, or none: `none`, or the default folder absent (templates kept in SES). A
 * journey step whose template the folder lacks stops the program: its sends would fail.
 */
function deployTemplates(
  config: StackConfig,
  journeys: Journey[],
  opts: pulumi.ComponentResourceOptions,
): EmailTemplates | undefined {
  const dir = config.templatesDir;
  if (dir === undefined || (dir === DEFAULT_TEMPLATES_DIR && !fs.existsSync(dir))) return undefined;
  try {
    const deployed = new EmailTemplates("templates", { dir }, opts);
    const problems = journeyTemplateProblems(journeys, new Set(deployed.names), dir);
    if (problems.length) throw new TemplateError(`${problems.join("; ")} (sendtime:templatesDir)`);
    return deployed;
  } catch (e) {
    if (e instanceof TemplateError) throw new pulumi.RunError(e.message);
    throw e;
  }
}

/** With unsubscribe configured: bulk sends' one-click endpoint, and SES's own opt-outs recorded in the same table. */
function createUnsubscribe(
  scope: pulumi.Output<ArnScope>,
  config: StackConfig,
  { identity }: Core,
  opts: pulumi.ComponentResourceOptions,
): Optional {
  if (!config.unsubscribe || !identity.contactListName || !identity.contactListArn) return {};
  const common = { scope, kmsKeyArn: config.kmsKeyArn, logRetentionDays: config.logRetentionDays };
  const unsubscribe = new UnsubscribeEndpoint(
    "unsubscribe",
    {
      ...common,
      contactListName: identity.contactListName,
      contactListArn: identity.contactListArn,
      topicName: config.unsubscribe.topic,
    },
    opts,
  );
  // Opt-outs made through SES itself (its link in a plain send): SES's SUBSCRIPTION events.
  const sesOptOuts = new SesOptOuts(
    "ses-opt-outs",
    {
      ...common,
      configurationSetName: identity.configurationSetName,
      contactListName: identity.contactListName,
      topicName: config.unsubscribe.topic,
      optOutTable: { arn: unsubscribe.optOutTable.arn, name: unsubscribe.optOutTable.name },
    },
    opts,
  );
  return { unsubscribe, sesOptOuts };
}

/** The one door: every schedule starts it, and it alone calls SES (with a cap, it admits each entry itself). */
function createSender(
  scope: pulumi.Output<ArnScope>,
  config: StackConfig,
  { identity, target, templates }: Core,
  { unsubscribe }: Optional,
  sms: Sms | undefined,
  opts: pulumi.ComponentResourceOptions,
): Sender {
  const sender = new Sender(
    "bulk-sender",
    {
      scope,
      stateMachineName: senderName(pulumi.getStack()),
      identityArn: identity.identityArn,
      configurationSetArn: identity.configurationSetArn,
      contactListArn: identity.contactListArn,
      templateNames: templates?.names,
      deadLetterQueueArn: target.deadLetterQueue.arn,
      deadLetterQueueUrl: target.deadLetterQueue.url,
      cap: config.frequencyCap,
      // Opt-outs recorded by the endpoint: SendBulkEmail has no ListManagementOptions, so SES would not filter them.
      optOuts: unsubscribe
        ? { tableArn: unsubscribe.optOutTable.arn, tableName: unsubscribe.optOutTable.name }
        : undefined,
      kmsKeyArn: config.kmsKeyArn,
      sms: sms && {
        poolArn: sms.poolArn,
        configurationSetName: sms.configurationSetName,
        configurationSetArn: sms.configurationSetArn,
      },
    },
    opts,
  );
  // Only the stack's roles that write dead letters may put a message in the queue redrive reads: no one can plant one.
  target.allowOnlyStackToDeadLetter([sender.role.arn]);
  return sender;
}

/** What every schedule carries, the fan-out's and the journeys' alike: the one sender, the role, retries, DLQ, SES. */
function scheduleTargetOf(
  scope: pulumi.Output<ArnScope>,
  config: StackConfig,
  { identity, target }: Core,
  sender: Sender,
): pulumi.Output<SchedulerTargetParameters> {
  return target.parameters({
    scope,
    senderArn: sender.arn,
    fromAddress: config.fromAddress,
    configurationSetName: identity.configurationSetName,
    contactListName: identity.contactListName,
    unsubscribeTopic: config.unsubscribe?.topic,
    retry: { maxEventAgeSeconds: config.maxEventAgeSeconds, maxRetryAttempts: config.maxRetryAttempts },
  });
}

function createFanOut(
  scope: pulumi.Output<ArnScope>,
  config: StackConfig,
  { recipients, target }: Core,
  scheduleTarget: pulumi.Output<SchedulerTargetParameters>,
  opts: pulumi.ComponentResourceOptions,
): FanOut {
  return new FanOut(
    "fanout",
    {
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
      smsMessageType: config.sms?.messageType,
    },
    opts,
  );
}

/** Journeys' schedules carry the fan-out's target: the same one sender, configuration set, unsubscribe, retries, DLQ. */
function createJourneys(
  scope: pulumi.Output<ArnScope>,
  { config, journeys, eventBusName }: SendtimeSettings,
  scheduleTarget: pulumi.Output<SchedulerTargetParameters>,
  sender: Sender,
  opts: pulumi.ComponentResourceOptions,
): Journeys | undefined {
  if (!journeys.length) return undefined;
  return new Journeys(
    "journeys",
    {
      journeys,
      eventBusName,
      scope,
      target: scheduleTarget,
      windowMinutes: config.defaultWindowMinutes,
      logRetentionDays: config.logRetentionDays,
      ledgerTable: { arn: sender.ledger.arn, name: sender.ledger.name },
      kmsKeyArn: config.kmsKeyArn,
      templatesDir: config.templatesDir,
      smsMessageType: config.sms?.messageType,
    },
    opts,
  );
}

function createAlarms(
  { config, journeys: definitions }: SendtimeSettings,
  { target }: Core,
  fanOut: FanOut,
  { sesOptOuts }: Optional,
  journeys: Journeys | undefined,
  opts: pulumi.ComponentResourceOptions,
): Alarms {
  return new Alarms(
    "alarms",
    {
      deadLetterQueueName: target.deadLetterQueue.name,
      stateMachineArn: fanOut.arn,
      journeyDeadLetterQueueName: journeys?.deadLetterQueue.name,
      journeyNames: definitions.map((j) => j.name),
      optOutEventsDeadLetterQueueName: sesOptOuts?.deadLetterQueue.name,
      email: config.alarmEmail,
    },
    opts,
  );
}

/** Stop on bad signals: a campaign's bounce or complaint rate (or the account's) pauses it through the one door. */
function createGuardrails(
  scope: pulumi.Output<ArnScope>,
  { config }: SendtimeSettings,
  { identity }: Core,
  sender: Sender,
  fanOut: FanOut,
  alarms: Alarms,
  opts: pulumi.ComponentResourceOptions,
): Guardrails | undefined {
  if (!config.guardrails) return undefined;
  return new Guardrails(
    "guardrails",
    {
      scope,
      guardrails: config.guardrails,
      configurationSetName: identity.configurationSetName,
      ledgerTable: { name: sender.ledger.name, arn: sender.ledger.arn },
      topicArn: alarms.topic.arn,
      fanOutArn: fanOut.arn,
    },
    opts,
  );
}

function outputsOf(
  scope: pulumi.Output<ArnScope>,
  { config, journeys: definitions, eventBusName }: SendtimeSettings,
  nodes: SendtimeNodes,
): SendtimeOutputs {
  const { recipients, identity, target, sender, fanOut, alarms, templates, unsubscribe, sesOptOuts, journeys } = nodes;
  return {
    bucketName: recipients.name,
    stateMachineArn: fanOut.arn,
    schedulerRoleArn: target.roleArn,
    housekeepingRoleArn: target.housekeepingRoleArn,
    deadLetterQueueUrl: target.deadLetterQueue.url,
    configurationSetName: identity.configurationSetName,
    fromAddress: config.fromAddress,
    scheduleGroupPrefix: CAMPAIGN_PREFIX,
    region: scope.region,
    defaultWindowMinutes: config.defaultWindowMinutes,
    createScheduleTps: config.createScheduleTps,
    maxSchedules: config.maxSchedules,
    dkimTokens: identity.dkimTokens,
    alarmTopicArn: alarms.topic.arn,
    journeyDefinitions: definitions,
    journeyEnrolment: journeys?.enrolment,
    journeyFunctionName: journeys?.function.name,
    journeyDeadLetterQueueUrl: journeys?.deadLetterQueue.url,
    eventBusName,
    senderStateMachineArn: sender.arn,
    ledgerTableName: sender.ledger.name,
    unsubscribeUrl: unsubscribe?.url,
    unsubscribeKeyParameter: unsubscribe?.keyParameterName,
    optOutTableName: unsubscribe?.optOutTable.name,
    contactListName: unsubscribe ? identity.contactListName : undefined,
    unsubscribeTopic: unsubscribe ? config.unsubscribe?.topic : undefined,
    optOutEventsDeadLetterQueueUrl: sesOptOuts?.deadLetterQueue.url,
    templateNames: templates?.names,
    guardrailSettings: nodes.guardrails ? config.guardrails : undefined,
    guardrailAlarmPrefix: nodes.guardrails ? guardrailAlarmPrefix(pulumi.getStack()) : undefined,
    smsPoolArn: nodes.sms?.poolArn,
    smsConfigurationSetName: nodes.sms?.configurationSetName,
    smsOptOutListName: nodes.sms?.optOutListName,
    smsEventLogGroupName: nodes.sms?.eventLogGroupName,
    smsMps: nodes.sms ? config.sms?.mps : undefined,
    smsMessageType: nodes.sms ? config.sms?.messageType : undefined,
  };
}
