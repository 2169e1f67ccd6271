import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { EventRoute, eventDrivenFunction } from "./function-parts";
import { bundleJourneyHandler, HANDLER_NAME } from "./handler-bundle";
import { Journey, EventMatch } from "./core/journeys/journeys-definition";
import { journeyStatements, journeyTrustPolicy, policyDocument } from "./iam";
import { ArnScope, campaignGroupName } from "./core/plan/naming";
import { SchedulerTargetParameters } from "./core/plan/schedule-request";
import { EnrolmentSettings } from "./core/journeys/journey-types";
import {
  JourneySmsSettings,
  readSmsTemplates,
  smsSettingsSizeProblem,
  smsTemplateNames,
  smsTemplateProblems,
} from "./core/journeys/sms-steps";
import { fileSystem } from "./templates";
import { DEFAULT_SMS_MESSAGE_TYPE, SmsMessageType } from "./core/send/sms-input";

/**
 * How failed events are retried and then kept. EventBridge retries delivering to the function (throttled, not
 * reachable) up to a day, then puts the event in the dead-letter queue; the function's asynchronous invocation
 * retries a failed run (an AWS error) twice, then sends the event to the same queue (on-failure destination).
 */
export const JOURNEY_RETRY = {
  ruleTarget: { maximumEventAgeInSeconds: 86_400, maximumRetryAttempts: 185 },
  invocation: { maximumEventAgeInSeconds: 21_600, maximumRetryAttempts: 2 },
} as const;

export interface JourneysArgs {
  /**
   * The validated journeys (`parseJourneyConfig` in infra/core/journeys/journeys-definition.ts): a schedule group, a trigger
   * rule and (with `exit`) an exit rule each. Required: the stack passes `sendtime:journeys` and creates this component
   * only when the list is not empty.
   * @example
   * ```ts
   * {
   *   journeys: [{
   *     name: "welcome",
   *     trigger: { source: "app.signup", detailType: "SignedUp" },
   *     steps: [{ after: "+1h", template: "welcome-1" }, { after: "+3d", at: "09:00", template: "welcome-2" }],
   *   }],
   * }
   * ```
   */
  journeys: Journey[];
  /**
   * The event bus the app puts its events on. Required, no default here: the stack passes `sendtime:eventBusName`
   * (`"default"` when unset).
   */
  eventBusName: string;
  /** The partition, account and Region the handler acts in. Required. */
  scope: pulumi.Input<ArnScope>;
  /**
   * The SES target every journey schedule carries: the fan-out's (sender, configuration set, unsubscribe, retries,
   * dead-letter queue and, with a frequency cap, the send gate). Required.
   */
  target: pulumi.Input<SchedulerTargetParameters>;
  /**
   * Flexible window of journey schedules, in minutes. Required: the stack passes `sendtime:defaultWindowMinutes`
   * (`15` when unset).
   */
  windowMinutes: number;
  /**
   * Days the handler's logs are kept (a CloudWatch Logs retention value). Required: the stack passes
   * `sendtime:logRetentionDays` (`30` when unset).
   */
  logRetentionDays: number;
  /**
   * The occurrence ledger (infra/core/send/ledger.ts), where the handler claims each trigger's enrolment once, so a
   * duplicate of the trigger creates nothing. Required: the stack passes its one ledger table.
   */
  ledgerTable: { arn: pulumi.Input<string>; name: pulumi.Input<string> };
  /**
   * The ledger's customer-managed KMS key.
   * @default the AWS managed key aws/dynamodb (no grant needed)
   */
  kmsKeyArn?: string;
  /**
   * The folder, relative to the project, whose `<name>/sms.txt` files are SMS steps' texts (Handlebars): the program
   * reads the ones the journeys use and hands them to the function in its settings; a missing, malformed or (without
   * variables) too long one stops the program. Read only when a step has `channel: sms`.
   * @default "templates"
   */
  templatesDir?: string;
  /** SendTextMessage's MessageType for the journeys' texts. @default "PROMOTIONAL" */
  smsMessageType?: SmsMessageType;
}

/**
 * Journeys: per-subscriber sequences started by an app event. Each journey's trigger (and exit) rule invokes one
 * enrolment function, which creates (or deletes) the subscriber's step schedules in `campaign-<journey>`.
 */
export class Journeys extends pulumi.ComponentResource {
  public readonly function: aws.lambda.Function;
  public readonly role: aws.iam.Role;
  public readonly deadLetterQueue: aws.sqs.Queue;
  public readonly rules: aws.cloudwatch.EventRule[] = [];
  /** What the function is configured with: scripts/enrol.ts reads it from the stack outputs. */
  public readonly enrolment: pulumi.Output<EnrolmentSettings>;

  constructor(name: string, args: JourneysArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:Journeys", name, {}, opts);
    const parent = this;
    const scope = pulumi.output(args.scope);
    const sms = journeySms(args);
    const enrolment = pulumi
      .output(args.target)
      .apply((target) => ({ target, windowMinutes: args.windowMinutes, ...(sms ? { sms } : {}) }));

    args.journeys.forEach(createScheduleGroup);
    const parts = eventDrivenFunction(
      name,
      {
        logRetentionDays: args.logRetentionDays,
        roleDescription:
          "Assumed by the sendtime journey enrolment function to claim enrolments and create and delete journey schedules",
        trustPolicy: scope.apply((s) => JSON.stringify(journeyTrustPolicy(s.accountId))),
        policy: enrolmentPolicy,
        function: {
          description: "sendtime: enrols subscribers in journeys (creates and deletes their step schedules)",
          handler: HANDLER_NAME,
          code: bundleJourneyHandler().code,
          timeout: 60,
          memorySize: 256,
          variables: {
            SENDTIME_JOURNEYS: JSON.stringify(args.journeys),
            SENDTIME_ENROLMENT: enrolment.apply((e) => JSON.stringify(e)),
            SENDTIME_LEDGER_TABLE: args.ledgerTable.name,
          },
        },
        routes: args.journeys.flatMap((j) => [
          route(j, "trigger", j.trigger),
          ...(j.exit ? [route(j, "exit", j.exit)] : []),
        ]),
        retry: JOURNEY_RETRY,
      },
      parent,
    );

    this.function = parts.function;
    this.role = parts.role;
    this.deadLetterQueue = parts.deadLetterQueue;
    this.rules = parts.rules;
    this.enrolment = enrolment;
    this.registerOutputs({ functionName: parts.function.name, deadLetterQueueUrl: parts.deadLetterQueue.url });

    function enrolmentPolicy(w: { logGroupArn: pulumi.Output<string>; deadLetterQueueArn: pulumi.Output<string> }) {
      return pulumi
        .all([
          scope,
          pulumi.output(args.target).targetRoleArn,
          w.logGroupArn,
          w.deadLetterQueueArn,
          args.ledgerTable.arn,
        ])
        .apply(([s, targetRoleArn, logGroupArn, deadLetterQueueArn, ledgerTableArn]) =>
          JSON.stringify(
            policyDocument(
              journeyStatements({
                scope: s,
                journeyNames: args.journeys.map((j) => j.name),
                targetRoleArn,
                logGroupArn,
                deadLetterQueueArn,
                ledgerTableArn,
                kmsKeyArn: args.kmsKeyArn,
              }),
            ),
          ),
        );
    }

    function createScheduleGroup(j: Journey) {
      return new aws.scheduler.ScheduleGroup(
        `${name}-group-${j.name}`,
        { name: campaignGroupName(j.name), tags: { "sendtime:campaign": j.name } },
        { parent },
      );
    }

    function route(j: Journey, kind: "trigger" | "exit", match: EventMatch): EventRoute {
      return {
        ruleName: `${name}-${j.name}-${kind}`,
        partsName: `${name}-${j.name}-${kind}`,
        eventBusName: args.eventBusName,
        description: `sendtime journey ${j.name}: ${kind === "trigger" ? "enrol" : "stop"} on ${match.source} ${match.detailType}`,
        eventPattern: JSON.stringify({ source: [match.source], "detail-type": [match.detailType] }),
        targetId: `sendtime-${kind}`,
        // The handler learns the journey and which rule matched from the input; the event travels whole.
        inputTransformer: {
          inputTemplate: `{"journey":${JSON.stringify(j.name)},"kind":"${kind}","event":<aws.events.event.json>}`,
        },
      };
    }
  }
}

/**
 * The SMS steps' settings: their templates' texts, read from `templatesDir` and checked (sms-steps.ts), and the
 * MessageType; undefined without an SMS step. A problem stops the program with one line per template.
 */
export function journeySms(
  args: Pick<JourneysArgs, "journeys" | "templatesDir" | "smsMessageType">,
): JourneySmsSettings | undefined {
  const names = smsTemplateNames(args.journeys);
  if (names.length === 0) return undefined;
  const dir = args.templatesDir ?? "templates";
  const templates = readSmsTemplates(args.journeys, dir, fileSystem);
  const sms = { templates, messageType: args.smsMessageType ?? DEFAULT_SMS_MESSAGE_TYPE };
  const problems = smsTemplateProblems(args.journeys, templates, dir);
  const size = smsSettingsSizeProblem(args.journeys, sms);
  if (size) problems.push(size);
  if (problems.length) throw new pulumi.RunError(`sendtime:journeys: ${problems.join("; ")}`);
  return sms;
}
