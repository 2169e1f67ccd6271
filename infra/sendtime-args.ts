/**
 * What a `Sendtime` is made from: the stack config (docs/deploying.md, "Config"), as typed arguments. Each argument
 * has the name, the default and the checks of the `sendtime:` config key of the same name: the arguments are turned
 * into those keys' values and read by the same parsers (infra/config.ts, the journeys' definition), so a program that
 * passes arguments and one that sets config are held to one set of rules.
 */
import * as pulumi from "@pulumi/pulumi";
import { parseStackConfig, StackConfig } from "./config";
import { ConfigError } from "./config";
import { JourneyDefinitionError } from "./core/journeys/journeys-definition";
import { Journey, parseJourneyConfig } from "./core/journeys/journeys-definition";
import { quietWindowProblem } from "./core/journeys/step-times";
import { isIanaZone } from "./core/journeys/subscriber-zone";
import { FrequencyCap } from "./core/send/frequency-cap";
import { Guardrails } from "./core/send/guardrails";
import { SmsConfig } from "./core/sms/sms-config";

export interface SendtimeArgs {
  /** The SES identity mail is sent from: a domain or one address. Verify it in SES before sending. @example "example.com" */
  senderIdentity: string;
  /** FromEmailAddress of every send, an address of `senderIdentity`. @example "news@example.com" */
  fromAddress: string;
  /** Your account's CreateSchedule quota in the Region, per second; the fan-out is paced to it. @default 5000 */
  createScheduleTps?: number;
  /** Fan-out child executions at once (Distributed Map MaxConcurrency). @default paced to `createScheduleTps` */
  maxConcurrency?: number;
  /** Plan rows per child execution. @default 400 */
  batchSize?: number;
  /** CreateSchedule calls at once inside one child (1–40). @default paced to `createScheduleTps` */
  innerConcurrency?: number;
  /** Your account's schedule quota in the Region; the launcher refuses plans above it. @default 10000000 */
  maxSchedules?: number;
  /** Percentage of plan rows whose batch may fail before the fan-out fails. @default 5 */
  toleratedFailurePercentage?: number;
  /** The flexible window of a launch that sizes none, in minutes. @default 15 */
  defaultWindowMinutes?: number;
  /** How long Scheduler keeps retrying a send before dead-lettering it. @default 7200 */
  maxEventAgeSeconds?: number;
  /** How many times Scheduler retries a failed send. @default 5 */
  maxRetryAttempts?: number;
  /** Days plans and fan-out results (they hold addresses) are kept. @default 30 */
  recipientRetentionDays?: number;
  /** Days logs are kept, one of CloudWatch Logs' values. @default 30 */
  logRetentionDays?: number;
  /** Where alarms are emailed. @default none: subscribe to the alarm topic yourself */
  alarmEmail?: string;
  /** One-click unsubscribe (RFC 8058) through an SES contact list and topic. @example { contactList: "news", topic: "campaigns" } */
  unsubscribe?: { contactList: string; topic: string };
  /** A customer-managed KMS key for the bucket, queues and tables. @default AWS-managed encryption */
  kmsKeyArn?: string;
  /** A custom domain for open and click tracking links. @default SES's own */
  trackingDomain?: string;
  /** At most `max` sends per address per UTC `per`, across campaigns. @example { max: 2, per: "day" } */
  frequencyCap?: FrequencyCap;
  /** The folder of templates the stack deploys, relative to the project; `"none"` deploys none. @default "templates" */
  templatesDir?: string;
  /**
   * Pause a campaign whose bounce or complaint rate over the window crosses a threshold (and every campaign on the
   * account's SES reputation); `"none"`: no guardrails. @default { bounceRate: 0.02, complaintRate: 0.0008, minSends: 200, window: "1h" }
   */
  guardrails?: Partial<Pick<Guardrails, "bounceRate" | "complaintRate" | "minSends" | "window">> | "none";
  /**
   * Text messages through End User Messaging SMS: the pool (by ARN; its numbers are registered outside the stack), its
   * message parts per second, and the configuration set and opt-out list (created when not named). @default none: no SMS
   * @example { poolArn: "arn:aws:sms-voice:us-east-1:123456789012:pool/pool-1a2b", mps: 1 }
   */
  sms?: Omit<SmsConfig, "messageType"> & Partial<Pick<SmsConfig, "messageType">>;
  /** Event-triggered sends (docs/journeys.md), as `sendtime:journeys` lists them. @default none */
  journeys?: Journey[];
  /** The EventBridge bus journeys' triggers arrive on. @default "default" */
  eventBusName?: string;
}

/** The arguments checked, with every default filled in: what the components are built from. */
export interface SendtimeSettings {
  config: StackConfig;
  journeys: Journey[];
  eventBusName: string;
}

/** The config key and value of each argument given; unsubscribe is two keys, as in the stack config. */
function configValues(args: SendtimeArgs): Map<string, string> {
  const values = new Map<string, string>();
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined) continue;
    if (key === "unsubscribe") {
      values.set("unsubscribeContactList", String(value.contactList ?? ""));
      values.set("unsubscribeTopic", String(value.topic ?? ""));
    } else values.set(key, typeof value === "object" ? JSON.stringify(value) : String(value));
  }
  return values;
}

/**
 * Checks the arguments and fills in the defaults. A bad one throws a ConfigError or JourneyDefinitionError naming
 * the argument as its config key (`sendtime:<argument>`), with the value and what is allowed; so does an argument
 * that is not one (a misspelt name in JavaScript).
 */
export function resolveSendtimeArgs(args: SendtimeArgs): SendtimeSettings {
  const values = configValues(args);
  const get = (key: string) => values.get(key);
  const { config } = parseStackConfig(
    get,
    [...values.keys()].map((k) => `sendtime:${k}`),
  );
  const { journeys, eventBusName } = parseJourneyConfig(get, isIanaZone);
  const problem = quietWindowProblem(journeys, config.defaultWindowMinutes, "sendtime:defaultWindowMinutes");
  if (problem) throw new JourneyDefinitionError(problem);
  return { config, journeys, eventBusName };
}

/**
 * The stack's `sendtime:` config as Sendtime's arguments: every key checked here (a misspelt one too), so a bad one
 * stops the program with one line naming the key as `pulumi config set` spells it. What this repository's program and
 * the `pulumi new` template (pulumi-template/) pass to Sendtime.
 */
export function sendtimeArgsFromConfig(): SendtimeArgs {
  const raw = new pulumi.Config("sendtime");
  const get = (key: string) => raw.get(key);
  try {
    const { config } = parseStackConfig(get, Object.keys(pulumi.runtime.allConfig()));
    const { journeys, eventBusName } = parseJourneyConfig(get, isIanaZone);
    const problem = quietWindowProblem(journeys, config.defaultWindowMinutes, "sendtime:defaultWindowMinutes");
    if (problem) throw new JourneyDefinitionError(problem);
    return argsOfConfig(config, journeys, eventBusName);
  } catch (e) {
    // RunError: Pulumi prints the message alone, without a stack trace.
    if (e instanceof ConfigError || e instanceof JourneyDefinitionError) throw new pulumi.RunError(e.message);
    throw e;
  }
}

/** The arguments a checked stack config gives. */
export function argsOfConfig(config: StackConfig, journeys: Journey[], eventBusName: string): SendtimeArgs {
  const { templatesDir, guardrails: g, ...rest } = config;
  const guardrails = g
    ? { bounceRate: g.bounceRate, complaintRate: g.complaintRate, minSends: g.minSends, window: g.window }
    : ("none" as const);
  return { ...rest, templatesDir: templatesDir ?? "none", guardrails, journeys, eventBusName };
}
