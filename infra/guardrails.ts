import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import {
  accountAlarmName,
  Guardrails as GuardrailSettings,
  GUARDRAIL_DIMENSION,
  GUARDRAIL_EVENTS,
  GUARDRAIL_KINDS,
  guardrailAlarmPrefix,
  guardrailCleanupGroupUnder,
  percent,
} from "./core/send/guardrails";
import { SES_METRICS_NAMESPACE } from "./core/send/email-events";
import { ArnScope, groupSchedulesArn, NAME_MAX_LENGTH, physicalName } from "./core/plan/naming";
import { acceptOnlyFrom, eventDeadLetterQueue } from "./function-parts";

/** EventBridge's retries of a start that failed: a day, as the other rules of the stack. */
const RULE_RETRY = { maximumEventAgeInSeconds: 86_400, maximumRetryAttempts: 185 };
import { fanOutTrustPolicy, policyDocument, PolicyStatement, schedulerTrustPolicy, serviceTrustPolicy } from "./iam";
import {
  guardrailAlarmsArn,
  guardrailArmStatements,
  guardrailCampaignAlarmsArn,
  guardrailCleanupStatements,
  guardrailEventsStatements,
  guardrailPauseStatements,
} from "./guardrail-iam";
import { guardrailArmDefinition, guardrailPauseDefinition } from "./state-machines/guardrail-definition";

export interface GuardrailsArgs {
  /** The account, region and partition the stack runs in. Required. */
  scope: pulumi.Input<ArnScope>;
  /**
   * The thresholds and window (`sendtime:guardrails`).
   * @example
   * ```ts
   * { guardrails: { bounceRate: 0.02, complaintRate: 0.0008, minSends: 200, window: "1h", windowSeconds: 3600 } }
   * ```
   */
  guardrails: GuardrailSettings;
  /** The configuration set every send uses: the guardrails publish its SEND, BOUNCE and COMPLAINT events per campaign. Required. */
  configurationSetName: pulumi.Input<string>;
  /** The occurrence ledger, which holds each campaign's state (`campaign#<tag>`). Required. */
  ledgerTable: { name: pulumi.Input<string>; arn: pulumi.Input<string> };
  /** The alarm topic: every guardrail alarm notifies it. Required. */
  topicArn: pulumi.Input<string>;
  /** The fan-out state machine: each of its executions is a launch, whose campaign gets its alarms. Required. */
  fanOutArn: pulumi.Input<string>;
}

/**
 * Stops a campaign on bad signals: per campaign, alarms on its bounce and complaint rates over a sliding window
 * (put by the arm state machine at each launch), the account's SES reputation alarms, and one EventBridge rule on
 * their state changes that starts the pause state machine, which sets the campaign (or every armed campaign)
 * `paused` through the one door. No Lambda, no polling.
 */
export class Guardrails extends pulumi.ComponentResource {
  public readonly accountAlarms: aws.cloudwatch.MetricAlarm[];
  public readonly alarmRule: aws.cloudwatch.EventRule;
  public readonly launchRule: aws.cloudwatch.EventRule;
  public readonly pauseStateMachine: aws.sfn.StateMachine;
  public readonly armStateMachine: aws.sfn.StateMachine;
  /** The one-time schedules that delete each finished campaign's alarms. */
  public readonly cleanupGroup: aws.scheduler.ScheduleGroup;

  constructor(name: string, args: GuardrailsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:Guardrails", name, {}, opts);
    const parent = this;
    const stack = pulumi.getStack();
    const g = args.guardrails;
    const scope = pulumi.output(args.scope);
    const prefix = guardrailAlarmPrefix(stack);
    const alarmArns = scope.apply((s) => guardrailAlarmsArn(s, stack));

    publishCampaignEvents();
    const accountAlarms = alarmOnReputation();
    // Events EventBridge could not deliver (the state machine would not start), and alarm deletions Scheduler gave up
    // on: kept, and alarmed on.
    const deadLetterQueue = eventDeadLetterQueue(name, parent);
    const { group: cleanupGroup, role: cleanupRole } = createCleanup();
    // Only the stack's guardrail alarms: the arm machine puts them, the pause machine lists them.
    const armStateMachine = machine(
      "arm",
      guardrailArmDefinition,
      (arns) =>
        guardrailArmStatements({
          alarmsArn: arns.alarms,
          cleanupSchedulesArn: arns.cleanupSchedules,
          cleanupRoleArn: arns.cleanupRole,
        }),
      true,
    );
    const pauseStateMachine = machine("pause", guardrailPauseDefinition, (arns) =>
      guardrailPauseStatements({ ledgerTableArn: arns.ledger, alarmsArn: arns.alarms }),
    );
    const eventsRole = createEventsRole();
    const alarmRule = route(
      "alarms",
      "Guardrail alarms in ALARM: pause the campaign (or every campaign, on the account's reputation)",
      { source: ["aws.cloudwatch"], "detail-type": ["CloudWatch Alarm State Change"] },
      pulumi.output({ alarmName: [{ prefix }], state: { value: ["ALARM"] } }),
      pauseStateMachine,
    );
    const launchRule = route(
      "launches",
      "Every launch (a fan-out execution starting): put the campaign's guardrail alarms",
      { source: ["aws.states"], "detail-type": ["Step Functions Execution Status Change"] },
      pulumi.output(args.fanOutArn).apply((arn) => ({ status: ["RUNNING"], stateMachineArn: [arn] })),
      armStateMachine,
    );

    // EventBridge writes it for the two rules, Scheduler as the clean-up role for the alarm deletions.
    acceptOnlyFrom(name, deadLetterQueue, { roleArns: [cleanupRole.arn], rules: [alarmRule, launchRule] }, parent);
    alarmOnDeadLetters();
    this.accountAlarms = accountAlarms;
    this.alarmRule = alarmRule;
    this.launchRule = launchRule;
    this.pauseStateMachine = pauseStateMachine;
    this.armStateMachine = armStateMachine;
    this.cleanupGroup = cleanupGroup;
    this.registerOutputs({ pauseStateMachineArn: pauseStateMachine.arn, armStateMachineArn: armStateMachine.arn });

    function alarmOnDeadLetters() {
      new aws.cloudwatch.MetricAlarm(
        `${name}-dlq-not-empty`,
        {
          alarmDescription:
            "Guardrail events were not delivered: a guardrail alarm may not have paused its campaign, or a launch got no alarms",
          namespace: "AWS/SQS",
          metricName: "ApproximateNumberOfMessagesVisible",
          statistic: "Maximum",
          dimensions: { QueueName: deadLetterQueue.name },
          period: 300,
          evaluationPeriods: 1,
          threshold: 0,
          comparisonOperator: "GreaterThanThreshold",
          treatMissingData: "notBreaching",
          alarmActions: [args.topicArn],
        },
        { parent },
      );
    }

    function publishCampaignEvents() {
      // A second destination with the campaign tag alone: one Send, Bounce and Complaint metric per campaign, which
      // an alarm can name exactly (the report's metrics are per campaign, step and variant).
      new aws.sesv2.ConfigurationSetEventDestination(
        `${name}-events`,
        {
          configurationSetName: args.configurationSetName,
          eventDestinationName: "sendtime-guardrails",
          eventDestination: {
            enabled: true,
            matchingEventTypes: [...GUARDRAIL_EVENTS],
            cloudWatchDestination: {
              dimensionConfigurations: [
                {
                  dimensionName: GUARDRAIL_DIMENSION,
                  dimensionValueSource: "MESSAGE_TAG",
                  defaultDimensionValue: "none",
                },
              ],
            },
          },
        },
        { parent },
      );
    }

    function alarmOnReputation() {
      return GUARDRAIL_KINDS.map(
        (k) =>
          new aws.cloudwatch.MetricAlarm(
            `${name}-account-${k.kind}`,
            {
              name: accountAlarmName(stack, k.kind),
              alarmDescription: `sendtime guardrail: pauses every campaign of the stack when the account's SES ${k.reputation} reaches ${percent(g[k.rate])}`,
              namespace: SES_METRICS_NAMESPACE,
              metricName: k.reputation,
              statistic: "Maximum",
              period: 300,
              evaluationPeriods: 1,
              datapointsToAlarm: 1,
              threshold: g[k.rate],
              comparisonOperator: "GreaterThanOrEqualToThreshold",
              treatMissingData: "notBreaching",
              alarmActions: [args.topicArn],
            },
            { parent },
          ),
      );
    }

    function createCleanup() {
      const group = new aws.scheduler.ScheduleGroup(
        `${name}-cleanup`,
        { name: guardrailCleanupGroupUnder(prefix) },
        { parent },
      );
      const role = new aws.iam.Role(
        `${name}-cleanup-role`,
        {
          description: "Guardrails: a finished campaign's one-time schedule deletes its guardrail alarms",
          assumeRolePolicy: scope.apply((s) => JSON.stringify(schedulerTrustPolicy(s.accountId))),
        },
        { parent },
      );
      new aws.iam.RolePolicy(
        `${name}-cleanup-permissions`,
        {
          role: role.id,
          policy: pulumi.all([scope, deadLetterQueue.arn]).apply(([s, deadLetterQueueArn]) =>
            JSON.stringify(
              policyDocument(
                guardrailCleanupStatements({
                  campaignAlarmsArn: guardrailCampaignAlarmsArn(s, stack),
                  deadLetterQueueArn,
                }),
              ),
            ),
          ),
        },
        { parent },
      );
      return { group, role };
    }

    function machine(
      id: "arm" | "pause",
      build: typeof guardrailArmDefinition,
      statements: (arns: {
        alarms: string;
        ledger: string;
        cleanupSchedules: string;
        cleanupRole: string;
      }) => PolicyStatement[],
      withCleanup = false,
    ): aws.sfn.StateMachine {
      const role = new aws.iam.Role(
        `${name}-${id}-role`,
        {
          description:
            id === "arm"
              ? "Guardrails: puts each launched campaign's bounce and complaint alarms"
              : "Guardrails: sets a campaign paused in the ledger when its guardrail alarm fires",
          assumeRolePolicy: scope.apply((s) => JSON.stringify(fanOutTrustPolicy(s.accountId))),
        },
        { parent },
      );
      const cleanupSchedules = pulumi
        .all([scope, cleanupGroup.name])
        .apply(([s, group]) => groupSchedulesArn(s, group));
      const policy = pulumi
        .all([alarmArns, args.ledgerTable.arn, cleanupSchedules, cleanupRole.arn])
        .apply(([alarms, ledger, schedules, roleArn]) =>
          JSON.stringify(
            policyDocument(statements({ alarms, ledger, cleanupSchedules: schedules, cleanupRole: roleArn })),
          ),
        );
      const permissions = new aws.iam.RolePolicy(`${name}-${id}-permissions`, { role: role.id, policy }, { parent });
      const definition = pulumi
        .all([args.ledgerTable.name, args.topicArn, scope, cleanupGroup.name, cleanupRole.arn, deadLetterQueue.arn])
        .apply(([ledgerTableName, topicArn, s, groupName, roleArn, deadLetterQueueArn]) =>
          JSON.stringify(
            build({
              stack,
              guardrails: g,
              ledgerTableName,
              topicArn,
              ...(withCleanup
                ? { alarmCleanup: { partition: s.partition, groupName, roleArn, deadLetterQueueArn } }
                : {}),
            }),
            null,
            2,
          ),
        );
      return new aws.sfn.StateMachine(
        `${name}-${id}`,
        {
          name: physicalName(stack, `guardrail-${id}`, NAME_MAX_LENGTH.stateMachine),
          type: "EXPRESS",
          roleArn: role.arn,
          definition,
        },
        { parent, dependsOn: [permissions] },
      );
    }

    function createEventsRole() {
      const role = new aws.iam.Role(
        `${name}-events-role`,
        {
          description: "Guardrails: EventBridge starts the guardrail state machines",
          assumeRolePolicy: scope.apply((s) => JSON.stringify(serviceTrustPolicy("events.amazonaws.com", s.accountId))),
        },
        { parent },
      );
      new aws.iam.RolePolicy(
        `${name}-events-permissions`,
        {
          role: role.id,
          policy: pulumi
            .all([armStateMachine.arn, pauseStateMachine.arn])
            .apply(([arm, pause]) =>
              JSON.stringify(policyDocument(guardrailEventsStatements({ stateMachineArns: [arm, pause] }))),
            ),
        },
        { parent },
      );
      return role;
    }

    function route(
      id: string,
      description: string,
      pattern: Record<string, string[]>,
      detail: pulumi.Output<unknown>,
      target: aws.sfn.StateMachine,
    ) {
      const rule = new aws.cloudwatch.EventRule(
        `${name}-${id}`,
        { description, eventPattern: detail.apply((d) => JSON.stringify({ ...pattern, detail: d })) },
        { parent },
      );
      new aws.cloudwatch.EventTarget(
        `${name}-${id}-target`,
        {
          rule: rule.name,
          arn: target.arn,
          roleArn: eventsRole.arn,
          retryPolicy: RULE_RETRY,
          deadLetterConfig: { arn: deadLetterQueue.arn },
        },
        { parent },
      );
      return rule;
    }
  }
}
