/**
 * Guardrails: `sendtime:guardrails` (defaults, overrides, one clear line per bad value), the campaign alarm's metric
 * math checked against CloudWatch's documented expression syntax and evaluated by an independent reading of it, and
 * the stack's guardrail resources under Pulumi's mocks (the alarms, the rules and what they start, the roles).
 */
import * as assert from "assert";
import type { RenderedStack } from "../../scripts/lib/offline/mock-stack";
import {
  campaignAlarmRequest,
  campaignRateExpression,
  DEFAULT_GUARDRAILS,
  parseGuardrails,
} from "../../infra/core/send/guardrails";
import { InputError } from "../../infra/core/errors";
import { expectDecision } from "../helpers/iam-evaluator";
import { all, inlineStatements, only, renderWith } from "../helpers/stack";

describe("sendtime:guardrails", () => {
  it("absent: the defaults (2% bounces, 0.08% complaints, 200 sends, 1 h); none: no guardrails", () => {
    assert.deepStrictEqual(parseGuardrails(undefined), {
      bounceRate: 0.02,
      complaintRate: 0.0008,
      minSends: 200,
      window: "1h",
      windowSeconds: 3600,
    });
    assert.strictEqual(parseGuardrails("none"), undefined);
  });

  it("a key given overrides its default only", () => {
    assert.deepStrictEqual(parseGuardrails('{"bounceRate": 0.03, "window": "30m"}'), {
      ...DEFAULT_GUARDRAILS,
      bounceRate: 0.03,
      window: "30m",
      windowSeconds: 1800,
    });
  });

  for (const [raw, why] of [
    ["{", "not JSON"],
    ["[1]", "not an object"],
    ['{"bounce": 0.02}', "unknown key bounce"],
    ['{"bounceRate": 2}', "bounceRate must be a fraction above 0 and below 1"],
    ['{"complaintRate": "0.1%"}', "complaintRate must be a fraction above 0 and below 1"],
    ['{"minSends": 0}', "minSends must be a whole number from 1 to 1000000"],
    ['{"window": "90s"}', "window must be 5m to 24h"],
    ['{"window": "2d"}', "window must be 5m to 24h"],
    ['{"window": "25h"}', "window must be 5m to 24h"],
  ])
    it(`refuses ${raw}: one line naming the key and what is allowed`, () => {
      assert.throws(
        () => parseGuardrails(raw),
        (e: unknown) =>
          e instanceof InputError &&
          e.message.startsWith(`sendtime:guardrails = ${JSON.stringify(raw)} is not valid: ${why}; expected JSON {`) &&
          !e.message.includes("\n"),
      );
    });
});

/**
 * CloudWatch's metric math, as "Metric math syntax and functions" documents it
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html): metric ids start with a
 * lowercase letter and hold letters, digits and underscores; arithmetic + - * / ^, comparison == != <= >= < >, logical
 * AND && OR ||; functions called by name in capitals, here IF(condition, trueValue, falseValue) and FILL(metric, value).
 * The parser below reads that grammar and evaluates one datapoint (undefined = no value), independently of the code.
 */
type Val = number | undefined;
function evaluateMetricMath(expr: string, ids: Record<string, Val>): Val {
  const tokens = expr.match(/\s*(>=|<=|==|!=|&&|\|\||[-+*/^(),<>]|[0-9]+(?:\.[0-9]+)?|[A-Za-z_][A-Za-z0-9_]*)/gy);
  assert.ok(tokens && tokens.join("").replace(/\s/g, "") === expr.replace(/\s/g, ""), `unreadable: ${expr}`);
  const t = tokens!.map((x) => x.trim());
  let i = 0;
  const peek = () => t[i];
  const take = (want?: string) => {
    const x = t[i++];
    if (want !== undefined) assert.strictEqual(x, want, `expected ${want} in ${expr}`);
    return x;
  };
  const bin = (ops: string[], next: () => Val, f: (op: string, a: number, b: number) => number) => (): Val => {
    let a = next();
    while (ops.includes(peek())) {
      const op = take();
      const b = next();
      a = a === undefined || b === undefined ? undefined : f(op, a, b);
    }
    return a;
  };
  const FUNCTIONS: Record<string, (args: Val[]) => Val> = {
    IF: ([c, a, b]) => (c === undefined ? undefined : c !== 0 ? a : b),
    FILL: ([m, v]) => (m === undefined ? v : m),
  };
  const ARITY: Record<string, number> = { IF: 3, FILL: 2 };
  const primary = (): Val => {
    const x = take();
    if (x === "(") {
      const v = or();
      take(")");
      return v;
    }
    if (/^[0-9]/.test(x)) return Number(x);
    if (/^[A-Z]+$/.test(x)) {
      assert.ok(x in FUNCTIONS, `${x} is not a function this check knows`);
      take("(");
      const args: Val[] = [or()];
      while (peek() === ",") (take(), args.push(or()));
      take(")");
      assert.strictEqual(args.length, ARITY[x], `${x} takes ${ARITY[x]} arguments`);
      return FUNCTIONS[x](args);
    }
    assert.match(x, /^[a-z][A-Za-z0-9_]*$/, `metric id ${x}`);
    assert.ok(x in ids, `unknown metric id ${x}`);
    return ids[x];
  };
  const pow = bin(["^"], primary, (_, a, b) => a ** b);
  const mul = bin(["*", "/"], pow, (op, a, b) => (op === "*" ? a * b : a / b));
  const add = bin(["+", "-"], mul, (op, a, b) => (op === "+" ? a + b : a - b));
  const cmp = bin([">=", "<=", "==", "!=", "<", ">"], add, (op, a, b) => {
    const r = { ">=": a >= b, "<=": a <= b, "==": a === b, "!=": a !== b, "<": a < b, ">": a > b }[op]!;
    return r ? 1 : 0;
  });
  const and = bin(["&&", "AND"], cmp, (_, a, b) => (a && b ? 1 : 0));
  const or = bin(["||", "OR"], and, (_, a, b) => (a || b ? 1 : 0));
  const v = or();
  assert.strictEqual(i, t.length, `left over in ${expr}: ${t.slice(i).join(" ")}`);
  return v;
}

describe("guardrails: the campaign alarm's metric math", () => {
  const request = campaignAlarmRequest("dev", DEFAULT_GUARDRAILS, "bounce", "spring", "arn:topic");
  const rate = (sends: Val, events: Val) =>
    evaluateMetricMath(request.Metrics.find((m) => m.Expression)!.Expression as string, { sends, events });

  it("reads as CloudWatch's syntax, naming only the alarm's own metric ids (lowercase first)", () => {
    const ids = request.Metrics.map((m) => m.Id as string);
    assert.deepStrictEqual(ids, ["sends", "events", "rate"]);
    for (const id of ids) assert.match(id, /^[a-z][A-Za-z0-9_]*$/);
    assert.strictEqual(
      campaignRateExpression(DEFAULT_GUARDRAILS),
      "IF(FILL(sends, 0) >= 200, FILL(events, 0) / sends, 0)",
    );
    assert.deepStrictEqual(
      request.Metrics.map((m) => m.ReturnData),
      [false, false, true],
      "one expression returns the alarm's data",
    );
  });

  it("2% of at least 200 sends reaches the threshold; fewer sends or fewer bounces do not", () => {
    const t = request.Threshold;
    assert.strictEqual(t, 0.02);
    // Reaches: 4 of 200 is 2.0% (4/200 = 0.02 by hand), 30 of 1,000 is 3%.
    assert.ok(rate(200, 4)! >= t);
    assert.ok(rate(1000, 30)! >= t);
    // 3 of 200 is 1.5%; 10 of 199 is 5% but under 200 sends; no bounce published in the window is 0.
    assert.ok(rate(200, 3)! < t);
    assert.strictEqual(rate(199, 10), 0);
    assert.strictEqual(rate(500, undefined), 0);
    // No send in the window: 0, not breaching.
    assert.strictEqual(rate(undefined, undefined), 0);
  });

  it("one period of the window, one datapoint of one evaluation period: the first evaluation that sees it alarms", () => {
    assert.deepStrictEqual(
      request.Metrics.filter((m: any) => m.MetricStat).map((m: any) => [m.MetricStat.Period, m.MetricStat.Stat]),
      [
        [3600, "Sum"],
        [3600, "Sum"],
      ],
    );
    assert.deepStrictEqual(
      [request.EvaluationPeriods, request.DatapointsToAlarm, request.ComparisonOperator, request.TreatMissingData],
      [1, 1, "GreaterThanOrEqualToThreshold", "notBreaching"],
    );
  });
});

describe("guardrails in the stack under Pulumi mocks", () => {
  let stack: RenderedStack;
  before(async () => {
    stack = await renderWith();
  });

  it("the configuration set publishes SEND, BOUNCE and COMPLAINT to CloudWatch by the campaign tag alone", () => {
    const d = only(
      stack,
      "aws:sesv2/configurationSetEventDestination:ConfigurationSetEventDestination",
      "guardrails-events",
    );
    assert.deepStrictEqual(d.inputs.eventDestination, {
      enabled: true,
      matchingEventTypes: ["SEND", "BOUNCE", "COMPLAINT"],
      cloudWatchDestination: {
        dimensionConfigurations: [
          { dimensionName: "campaign", dimensionValueSource: "MESSAGE_TAG", defaultDimensionValue: "none" },
        ],
      },
    });
  });

  it("the account's reputation alarms: at the same thresholds, each to the alarm topic", () => {
    const topic = only(stack, "aws:sns/topic:Topic", "alarms-topic").outputs.arn;
    for (const [kind, metric, threshold] of [
      ["bounce", "Reputation.BounceRate", 0.02],
      ["complaint", "Reputation.ComplaintRate", 0.0008],
    ] as const) {
      const a = only(stack, "aws:cloudwatch/metricAlarm:MetricAlarm", `guardrails-account-${kind}`).inputs;
      assert.deepStrictEqual(
        [a.name, a.namespace, a.metricName, a.threshold, a.comparisonOperator, a.period, a.alarmActions],
        [
          `sendtime-dev-guardrail-account-${kind}`,
          "AWS/SES",
          metric,
          threshold,
          "GreaterThanOrEqualToThreshold",
          300,
          [topic],
        ],
      );
    }
  });

  it("the alarm rule matches the stack's guardrail alarms in ALARM and starts the pause machine; the launch rule, the fan-out's starts and the arm machine", () => {
    const pattern = (n: string) => JSON.parse(only(stack, "aws:cloudwatch/eventRule:EventRule", n).inputs.eventPattern);
    assert.deepStrictEqual(pattern("guardrails-alarms"), {
      source: ["aws.cloudwatch"],
      "detail-type": ["CloudWatch Alarm State Change"],
      detail: { alarmName: [{ prefix: "sendtime-dev-guardrail-" }], state: { value: ["ALARM"] } },
    });
    const fanOut = only(stack, "aws:sfn/stateMachine:StateMachine", "fanout").outputs.arn;
    assert.deepStrictEqual(pattern("guardrails-launches"), {
      source: ["aws.states"],
      "detail-type": ["Step Functions Execution Status Change"],
      detail: { status: ["RUNNING"], stateMachineArn: [fanOut] },
    });
    for (const [rule, machine] of [
      ["alarms", "pause"],
      ["launches", "arm"],
    ]) {
      const target = only(stack, "aws:cloudwatch/eventTarget:EventTarget", `guardrails-${rule}-target`).inputs;
      const sm = only(stack, "aws:sfn/stateMachine:StateMachine", `guardrails-${machine}`);
      assert.strictEqual(target.arn, sm.outputs.arn);
      assert.strictEqual(sm.inputs.type, "EXPRESS");
      assert.ok(target.deadLetterConfig?.arn, "undelivered events kept");
    }
  });

  it("the pause role writes campaign states only; the arm role puts only the stack's guardrail alarms", () => {
    const ledger = only(stack, "aws:dynamodb/table:Table", "bulk-sender-ledger").outputs.arn;
    const alarm = (n: string) => `arn:aws:cloudwatch:us-east-1:123456789012:alarm:${n}`;
    const pause = inlineStatements(stack, "guardrails-pause-role");
    const keys = (k: string) => ({ "dynamodb:LeadingKeys": [k] });
    expectDecision(pause, "Allow", [
      { action: "dynamodb:UpdateItem", resource: ledger, context: keys("campaign#spring") },
    ]);
    expectDecision(pause, "Deny", [
      { action: "dynamodb:UpdateItem", resource: ledger, context: keys("occ#arn:x#2026") },
      { action: "dynamodb:PutItem", resource: ledger, context: keys("campaign#spring") },
    ]);
    const arm = inlineStatements(stack, "guardrails-arm-role");
    expectDecision(arm, "Allow", [
      { action: "cloudwatch:PutMetricAlarm", resource: alarm("sendtime-dev-guardrail-campaign-bounce-spring") },
    ]);
    expectDecision(arm, "Deny", [
      { action: "cloudwatch:PutMetricAlarm", resource: alarm("alarms-dlq-not-empty") },
      { action: "cloudwatch:DeleteAlarms", resource: alarm("sendtime-dev-guardrail-account-bounce") },
    ]);
  });

  it("the stack output guardrailAlarmPrefix is the prefix the alarm rule matches (cancel-campaign deletes by it); none: absent", async () => {
    const rule = JSON.parse(only(stack, "aws:cloudwatch/eventRule:EventRule", "guardrails-alarms").inputs.eventPattern);
    assert.strictEqual(stack.outputs.guardrailAlarmPrefix, "sendtime-dev-guardrail-");
    assert.deepStrictEqual(rule.detail.alarmName, [{ prefix: stack.outputs.guardrailAlarmPrefix }]);
    const bare = await renderWith({ guardrails: "none" });
    assert.strictEqual(bare.outputs.guardrailAlarmPrefix, undefined);
  });

  it("sendtime:guardrails none: no guardrail resource", async () => {
    const bare = await renderWith({ guardrails: "none" });
    assert.deepStrictEqual(
      bare.resources.filter((r) => r.name.startsWith("guardrails")).map((r) => r.name),
      [],
    );
    assert.ok(all(stack, "aws:cloudwatch/eventRule:EventRule").some((r) => r.name === "guardrails-alarms"));
  });
});
