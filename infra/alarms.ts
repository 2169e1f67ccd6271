import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { ses } from "./core/plan/quotas";
import { LATE_STEPS_METRIC } from "./core/journeys/journeys-definition";

export interface AlarmsArgs {
  /** Name of the dead-letter queue: any message in it is a send that did not happen. Required. */
  deadLetterQueueName: pulumi.Input<string>;
  /** ARN of the fan-out state machine: a failed execution is a campaign whose schedules were not all created. Required. */
  stateMachineArn: pulumi.Input<string>;
  /**
   * Name of the journeys' dead-letter queue: any message in it is an enrolment or exit that did not happen.
   * @default none: the stack has no journeys
   */
  journeyDeadLetterQueueName?: pulumi.Input<string>;
  /**
   * Names of the stack's journeys: an alarm each on steps handled after their lateGraceMinutes (not sent).
   * @default none: no late-step alarms
   * @example
   * ```ts
   * { journeyNames: ["welcome", "trial-ending"] }
   * ```
   */
  journeyNames?: string[];
  /**
   * Name of the SES opt-out recorder's dead-letter queue: any message in it is an opt-out made through SES that is not
   * in the opt-out table, so bulk sends would still mail the address.
   * @default none: the stack has no unsubscribe (sendtime:unsubscribe*)
   */
  optOutEventsDeadLetterQueueName?: pulumi.Input<string>;
  /**
   * Address subscribed to the alarm topic (confirm the email SNS sends).
   * @default none: subscribe to the `alarmTopicArn` output yourself
   * @example
   * ```ts
   * { email: "ops@example.com" }
   * ```
   */
  email?: string;
}

/** Alarms on what goes wrong after launch, all to one SNS topic. */
export class Alarms extends pulumi.ComponentResource {
  public readonly topic: aws.sns.Topic;
  public readonly alarms: aws.cloudwatch.MetricAlarm[] = [];

  constructor(name: string, args: AlarmsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:Alarms", name, {}, opts);
    const parent = this;
    const alarms = this.alarms;

    const topic = createTopic();
    subscribeEmail();
    alarmOnDeadLetters();
    alarmOnJourneys();
    alarmOnOptOutEvents();
    alarmOnFailedFanOuts();
    alarmOnScheduler();
    alarmOnSesReputation();

    this.topic = topic;
    this.registerOutputs({ topicArn: topic.arn });

    function createTopic() {
      return new aws.sns.Topic(`${name}-topic`, {}, { parent });
    }

    function subscribeEmail() {
      if (!args.email) return;
      new aws.sns.TopicSubscription(
        `${name}-email`,
        { topic: topic.arn, protocol: "email", endpoint: args.email },
        { parent },
      );
    }

    function alarmOnDeadLetters() {
      alarm("dlq-not-empty", "Sends were dead-lettered: Scheduler gave up on them (see the queue's messages)", {
        namespace: "AWS/SQS",
        metricName: "ApproximateNumberOfMessagesVisible",
        statistic: "Maximum",
        dimensions: { QueueName: args.deadLetterQueueName },
        threshold: 0,
      });
    }

    function alarmOnJourneys() {
      if (args.journeyDeadLetterQueueName) {
        alarm(
          "journeys-dlq-not-empty",
          "Journey events were dead-lettered: not enrolled or not exited (replay them with enrol --event)",
          {
            namespace: "AWS/SQS",
            metricName: "ApproximateNumberOfMessagesVisible",
            statistic: "Maximum",
            dimensions: { QueueName: args.journeyDeadLetterQueueName },
            threshold: 0,
          },
        );
      }
      for (const journey of args.journeyNames ?? [])
        alarm(
          `journey-${journey}-late-steps`,
          `Journey ${journey}: steps were handled after their lateGraceMinutes and not sent (the handler's log names them)`,
          {
            namespace: LATE_STEPS_METRIC.namespace,
            metricName: LATE_STEPS_METRIC.name,
            statistic: "Sum",
            dimensions: { [LATE_STEPS_METRIC.dimension]: journey },
            threshold: 0,
          },
        );
    }

    function alarmOnOptOutEvents() {
      if (!args.optOutEventsDeadLetterQueueName) return;
      alarm(
        "opt-out-events-dlq-not-empty",
        "SES opt-outs were not recorded in the opt-out table: bulk sends would still mail those addresses (see the queue's messages)",
        {
          namespace: "AWS/SQS",
          metricName: "ApproximateNumberOfMessagesVisible",
          statistic: "Maximum",
          dimensions: { QueueName: args.optOutEventsDeadLetterQueueName },
          threshold: 0,
        },
      );
    }

    function alarmOnFailedFanOuts() {
      alarm("fanout-failed", "A campaign fan-out execution failed: some schedules were not created (redrive it)", {
        namespace: "AWS/States",
        metricName: "ExecutionsFailed",
        statistic: "Sum",
        dimensions: { StateMachineArn: args.stateMachineArn },
        threshold: 0,
      });
    }

    function alarmOnScheduler() {
      alarm(
        "scheduler-throttled",
        "Scheduler throttled invocations: the flexible window is too small for the invocation quota",
        {
          namespace: "AWS/Scheduler",
          metricName: "InvocationThrottleCount",
          statistic: "Sum",
          threshold: 0,
        },
      );
      alarm(
        "scheduler-target-errors",
        "SES rejected sends from Scheduler (throttling, a missing template, permissions)",
        {
          namespace: "AWS/Scheduler",
          metricName: "TargetErrorCount",
          statistic: "Sum",
          threshold: 0,
        },
      );
    }

    function alarmOnSesReputation() {
      alarm(
        "ses-bounce-rate",
        `SES bounce rate above ${ses.bounceRateWarning * 100}%, where SES starts warning the account`,
        {
          namespace: "AWS/SES",
          metricName: "Reputation.BounceRate",
          statistic: "Maximum",
          threshold: ses.bounceRateWarning,
        },
      );
      alarm(
        "ses-complaint-rate",
        `SES complaint rate above ${ses.complaintRateWarning * 100}%, where SES starts warning the account`,
        {
          namespace: "AWS/SES",
          metricName: "Reputation.ComplaintRate",
          statistic: "Maximum",
          threshold: ses.complaintRateWarning,
        },
      );
    }

    /** One alarm on any datapoint above `threshold` in 5 minutes, to the topic (and back to OK). */
    function alarm(
      id: string,
      description: string,
      m: {
        namespace: string;
        metricName: string;
        statistic: string;
        threshold: number;
        dimensions?: Record<string, pulumi.Input<string>>;
      },
    ) {
      alarms.push(
        new aws.cloudwatch.MetricAlarm(
          `${name}-${id}`,
          {
            alarmDescription: description,
            namespace: m.namespace,
            metricName: m.metricName,
            statistic: m.statistic,
            dimensions: m.dimensions,
            period: 300,
            evaluationPeriods: 1,
            threshold: m.threshold,
            comparisonOperator: "GreaterThanThreshold",
            treatMissingData: "notBreaching",
            alarmActions: [topic.arn],
            okActions: [topic.arn],
          },
          { parent },
        ),
      );
    }
  }
}
