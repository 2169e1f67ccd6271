/**
 * The guardrails' IAM statements (beside infra/iam.ts, which builds the rest of the stack's): each role holds what its
 * state machine or rule calls, on the stack's own guardrail alarms and the ledger's campaign states only.
 */
import { ArnScope } from "./core/plan/naming";
import { guardrailAlarmPrefix } from "./core/send/guardrails";
import { campaignStateKey } from "./core/send/ledger";
import { PolicyStatement } from "./iam";

/** Every guardrail alarm of the stack: `alarm:sendtime-<stack>-guardrail-*`. */
export const guardrailAlarmsArn = (s: ArnScope, stack: string) =>
  `arn:${s.partition}:cloudwatch:${s.region}:${s.accountId}:alarm:${guardrailAlarmPrefix(stack)}*`;

/** The arm machine: it puts each launched campaign's alarms, and nothing else. */
export function guardrailArmStatements(g: { alarmsArn: string }): PolicyStatement[] {
  return [
    { Sid: "PutCampaignAlarms", Effect: "Allow", Action: ["cloudwatch:PutMetricAlarm"], Resource: [g.alarmsArn] },
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
