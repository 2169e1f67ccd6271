/**
 * guardrail-alarms-wired-to-pause: the guardrail alarms' ALARM state changes reach a state machine that sets the
 * campaign paused, and launches put the campaigns' alarms; on hand-built resources and on the rendered stack.
 */
import { guardrailAlarmsWiredToPause } from "../../policy/guardrails";
import { DEFAULT_GUARDRAILS } from "../../infra/core/send/guardrails";
import { guardrailArmDefinition, guardrailPauseDefinition } from "../../infra/state-machines/guardrail-definition";
import { renderWith } from "../helpers/stack";
import { schedulerActionsScopedToCampaigns } from "../../policy/iam";
import {
  assertHasResourceViolation,
  assertHasStackViolation,
  assertNoResourceViolations,
  assertNoStackViolations,
  packResources,
  resourceArgs,
  stackResource,
} from "./util";

const P = { stack: "dev", guardrails: DEFAULT_GUARDRAILS, ledgerTableName: "ledger", topicArn: "arn:topic" };
const SM = (n: string) => `arn:aws:states:us-east-1:123456789012:stateMachine:${n}`;
const FANOUT = SM("sendtime-fanout-dev");

const alarm = () =>
  stackResource("aws:cloudwatch/metricAlarm:MetricAlarm", "guardrails-account-bounce", {
    name: "sendtime-dev-guardrail-account-bounce",
    alarmActions: ["arn:topic"],
  });
const machine = (name: string, definition: object) =>
  stackResource("aws:sfn/stateMachine:StateMachine", name, { arn: SM(name), definition: JSON.stringify(definition) });
const rule = (name: string, pattern: object) =>
  stackResource("aws:cloudwatch/eventRule:EventRule", name, { name, eventPattern: JSON.stringify(pattern) });
const target = (ruleName: string, arn: string) =>
  stackResource("aws:cloudwatch/eventTarget:EventTarget", `${ruleName}-target`, { rule: ruleName, arn });
const alarmPattern = (
  detail: object = { alarmName: [{ prefix: "sendtime-dev-guardrail-" }], state: { value: ["ALARM"] } },
) => ({
  source: ["aws.cloudwatch"],
  "detail-type": ["CloudWatch Alarm State Change"],
  detail,
});
const launchPattern = {
  source: ["aws.states"],
  "detail-type": ["Step Functions Execution Status Change"],
  detail: { status: ["RUNNING"], stateMachineArn: [FANOUT] },
};

function wired(o: { pause?: object; alarmRule?: object; arm?: object } = {}) {
  return [
    alarm(),
    machine("pause", o.pause ?? guardrailPauseDefinition(P)),
    machine("arm", o.arm ?? guardrailArmDefinition(P)),
    rule("alarms", o.alarmRule ?? alarmPattern()),
    target("alarms", SM("pause")),
    rule("launches", launchPattern),
    target("launches", SM("arm")),
  ];
}

describe("policy: guardrail-alarms-wired-to-pause", () => {
  const p = guardrailAlarmsWiredToPause;

  it("passes the guardrails' own wiring: alarms → pause machine, launches → arm machine", () =>
    assertNoStackViolations(p, wired()));

  it("passes a stack without guardrail alarms (sendtime:guardrails none)", () =>
    assertNoStackViolations(p, [rule("other", launchPattern)]));

  it("fails a guardrail alarm no rule listens to, on the alarm", () =>
    assertHasStackViolation(
      p,
      wired().filter((r) => r.name !== "alarms-target"),
      {
        message:
          'MetricAlarm "guardrails-account-bounce" (sendtime-dev-guardrail-account-bounce) is a guardrail alarm, but no EventBridge rule routes its ALARM state changes to a state machine that sets the campaign paused',
        urn: alarm().urn,
      },
    ));

  it("fails a rule whose prefix misses the alarm, or that takes only OK states", async () => {
    await assertHasStackViolation(
      p,
      wired({ alarmRule: alarmPattern({ alarmName: [{ prefix: "sendtime-prod-" }] }) }),
      {
        message: "no EventBridge rule routes its ALARM state changes",
      },
    );
    await assertHasStackViolation(p, wired({ alarmRule: alarmPattern({ state: { value: ["OK"] } }) }), {
      message: "no EventBridge rule routes its ALARM state changes",
    });
  });

  it("fails a target that does not set the campaign paused (it only notifies)", () =>
    assertHasStackViolation(
      p,
      wired({
        pause: { StartAt: "A", States: { A: { Type: "Task", Resource: "arn:aws:states:::sns:publish", End: true } } },
      }),
      { message: "no EventBridge rule routes its ALARM state changes" },
    ));

  it("fails a stack whose launches put no alarms", () =>
    assertHasStackViolation(
      p,
      wired().filter((r) => r.name !== "launches"),
      {
        message: "no rule on the fan-out's starts",
      },
    ));

  it("the rendered stack has no violation, and would have one without its alarm rule's target", async function () {
    this.timeout(30_000);
    const resources = packResources(await renderWith());
    await assertNoStackViolations(p, resources);
    await assertHasStackViolation(
      p,
      resources.filter((r) => r.name !== "guardrails-alarms-target"),
      {
        message:
          'MetricAlarm "guardrails-account-complaint" (sendtime-dev-guardrail-account-complaint) is a guardrail alarm',
      },
    );
  });
});

describe("scheduler-actions-scoped-to-campaigns: the guardrails' alarm-deletion schedules", () => {
  const grant = (Action: string[], Resource: string[]) =>
    resourceArgs("aws:iam/rolePolicy:RolePolicy", {
      role: "arm",
      policy: JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action, Resource }] }),
    });
  const CLEANUP = "arn:aws:scheduler:us-east-1:123456789012:schedule/sendtime-dev-guardrail-cleanup/*";

  it("CreateSchedule and UpdateSchedule in a stack's guardrail clean-up group: allowed", () =>
    assertNoResourceViolations(
      schedulerActionsScopedToCampaigns,
      grant(["scheduler:CreateSchedule", "scheduler:UpdateSchedule"], [CLEANUP]),
    ));

  for (const [what, action, resource] of [
    ["another action there (DeleteScheduleGroup)", "scheduler:DeleteScheduleGroup", CLEANUP],
    ["another group", "scheduler:CreateSchedule", "arn:aws:scheduler:us-east-1:123456789012:schedule/default/*"],
    [
      "a wildcard in the group's name",
      "scheduler:CreateSchedule",
      "arn:aws:scheduler:us-east-1:123456789012:schedule/sendtime-*-guardrail-cleanup/*",
    ],
  ])
    it(`${what}: refused`, () =>
      assertHasResourceViolation(schedulerActionsScopedToCampaigns, grant([action], [resource]), {
        message: "outside campaign schedules",
      }));
});
