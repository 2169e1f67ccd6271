/**
 * The guardrails' IAM statements (beside infra/iam.ts, which builds the rest of the stack's): each role holds what its
 * state machine or rule calls, on the stack's own guardrail alarms and the ledger's campaign states only.
 */
import { ArnScope, SCHEDULER_SERVICE } from "./core/plan/naming";
import { guardrailAlarmPrefix } from "./core/send/guardrails";
import { campaignStateKey } from "./core/send/ledger";
import { PolicyStatement } from "./iam";

/** Every guardrail alarm of the stack: `alarm:sendtime-<stack>-guardrail-*`. */
export const guardrailAlarmsArn = (s: ArnScope, stack: string) =>
  `arn:${s.partition}:cloudwatch:${s.region}:${s.accountId}:alarm:${guardrailAlarmPrefix(stack)}*`;

/** The campaigns' alarms alone (not the account's): `alarm:sendtime-<stack>-guardrail-campaign-*`. */
export const guardrailCampaignAlarmsArn = (s: ArnScope, stack: string) =>
  `arn:${s.partition}:cloudwatch:${s.region}:${s.accountId}:alarm:${guardrailAlarmPrefix(stack)}campaign-*`;

/**
 * The arm machine: it puts each launched campaign's alarms and, in the stack's clean-up group only, the one-time
 * schedule that deletes them, passing the clean-up role to Scheduler alone.
 */
export function guardrailArmStatements(g: {
  alarmsArn: string;
  cleanupSchedulesArn: string;
  cleanupRoleArn: string;
}): PolicyStatement[] {
  return [
    { Sid: "PutCampaignAlarms", Effect: "Allow", Action: ["cloudwatch:PutMetricAlarm"], Resource: [g.alarmsArn] },
    {
      Sid: "ScheduleAlarmDeletion",
      Effect: "Allow",
      Action: ["scheduler:CreateSchedule", "scheduler:UpdateSchedule"],
      Resource: [g.cleanupSchedulesArn],
    },
    {
      Sid: "PassCleanupRole",
      Effect: "Allow",
      Action: ["iam:PassRole"],
      Resource: [g.cleanupRoleArn],
      Condition: { StringEquals: { "iam:PassedToService": SCHEDULER_SERVICE } },
    },
  ];
}

/**
 * What an alarm-deletion schedule may do when it fires: delete the stack's campaign alarms, and dead-letter a deletion
 * that failed into the guardrails' queue (SQS-managed encryption: no key).
 */
export function guardrailCleanupStatements(g: {
  campaignAlarmsArn: string;
  deadLetterQueueArn: string;
}): PolicyStatement[] {
  return [
    {
      Sid: "DeleteFinishedCampaignAlarms",
      Effect: "Allow",
      Action: ["cloudwatch:DeleteAlarms"],
      Resource: [g.campaignAlarmsArn],
    },
    { Sid: "DeadLetter", Effect: "Allow", Action: ["sqs:SendMessage"], Resource: [g.deadLetterQueueArn] },
  ];
}

/** The pause machine: it sets campaign states (never an occurrence or an enrolment) and lists the armed campaigns. */
export function guardrailPauseStatements(g: { ledgerTableArn: string; alarmsArn: string }): PolicyStatement[] {
  return [
    {
      Sid: "PauseCampaigns",
      Effect: "Allow",
      Action: ["dynamodb:UpdateItem"],
      Resource: [g.ledgerTableArn],
      Condition: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": [`${campaignStateKey("")}*`] } },
    },
    { Sid: "ListArmedCampaigns", Effect: "Allow", Action: ["cloudwatch:DescribeAlarms"], Resource: [g.alarmsArn] },
  ];
}

/** EventBridge's role for the guardrails' two rules: it starts those two state machines only. */
export function guardrailEventsStatements(g: { stateMachineArns: string[] }): PolicyStatement[] {
  return [{ Sid: "StartGuardrails", Effect: "Allow", Action: ["states:StartExecution"], Resource: g.stateMachineArns }];
}
