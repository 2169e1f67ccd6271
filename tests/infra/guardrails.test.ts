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
    ['{"window": "7m"}', "window must be a whole number of 5 minutes"],
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
 * lowercase letter and hold letters, digits and underscores; arithmetic + - * / ^ (a missing value counts as 0, a
 * division by zero drops the point), comparison == != <= >= < > (0 or 1 per point), logical AND && OR ||; functions in
 * capitals, here IF(condition, trueValue, falseValue) (per point for a series condition: true → the true value, 0 where
 * that series has none; false → the false value, dropped where it has none; no condition value → dropped),
 * FILL(TS, S), EPOCH(TS) (each period's timestamp in seconds, non-sparse), MAX(TS) and SUM(TS) (a scalar over all the
 * retrieved points), TIME_SERIES(S) (a non-sparse series of that scalar). The reader below evaluates that grammar over
 * a retrieved range of periods (undefined = no value), independently of the code.
 */
type Point = number | undefined;
type Val = { scalar: number } | { series: Point[] };
function evaluateMetricMath(expr: string, ids: Record<string, Val>, timestamps: number[]): Val {
  const tokens = expr.match(/\s*(>=|<=|==|!=|&&|\|\||[-+*/^(),<>]|[0-9]+(?:\.[0-9]+)?|[A-Za-z_][A-Za-z0-9_]*)/gy);
  assert.ok(tokens && tokens.join("").replace(/\s/g, "") === expr.replace(/\s/g, ""), `unreadable: ${expr}`);
  const t = tokens!.map((x) => x.trim());
  let i = 0;
  const n = timestamps.length;
  const peek = () => t[i];
  const take = (want?: string) => {
    const x = t[i++];
    if (want !== undefined) assert.strictEqual(x, want, `expected ${want} in ${expr}`);
    return x;
  };
  const at = (v: Val, k: number): Point => ("scalar" in v ? v.scalar : v.series[k]);
  const isSeries = (v: Val) => "series" in v;
  // Arithmetic and comparison: a missing value counts as 0; a division by zero drops the point.
  const combine = (a: Val, b: Val, f: (x: number, y: number) => number): Val => {
    const one = (x: Point, y: Point): Point => {
      const r = f(x ?? 0, y ?? 0);
      return Number.isFinite(r) ? r : undefined;
    };
    if (!isSeries(a) && !isSeries(b)) return { scalar: one(at(a, 0), at(b, 0))! };
    return { series: timestamps.map((_, k) => one(at(a, k), at(b, k))) };
  };
  const bin = (ops: string[], next: () => Val, f: (op: string, a: number, b: number) => number) => (): Val => {
    let a = next();
    while (ops.includes(peek())) {
      const op = take();
      const b = next();
      a = combine(a, b, (x, y) => f(op, x, y));
    }
    return a;
  };
  const series = (v: Val, name: string): Point[] => {
    assert.ok(isSeries(v), `${name} takes a time series`);
    return (v as { series: Point[] }).series;
  };
  const scalar = (v: Val, name: string): number => {
    assert.ok(!isSeries(v), `${name} takes a scalar`);
    return (v as { scalar: number }).scalar;
  };
  const defined = (p: Point[]) => p.filter((x): x is number => x !== undefined);
  const FUNCTIONS: Record<string, [number, (args: Val[]) => Val]> = {
    IF: [
      3,
      ([c, a, b]) =>
        isSeries(c)
          ? {
              series: timestamps.map((_, k) => {
                const ck = at(c, k);
                if (ck === undefined) return undefined;
                return ck !== 0 ? (at(a, k) ?? 0) : at(b, k);
              }),
            }
          : scalar(c, "IF") !== 0
            ? a
            : b,
    ],
    FILL: [2, ([m, v]) => ({ series: series(m, "FILL").map((x) => x ?? scalar(v, "FILL")) })],
    EPOCH: [1, ([m]) => (series(m, "EPOCH"), { series: [...timestamps] })],
    MAX: [1, ([m]) => ({ scalar: Math.max(...defined(series(m, "MAX"))) })],
    SUM: [1, ([m]) => ({ scalar: defined(series(m, "SUM")).reduce((x, y) => x + y, 0) })],
    TIME_SERIES: [1, ([v]) => ({ series: timestamps.map(() => scalar(v, "TIME_SERIES")) })],
  };
  const primary = (): Val => {
    const x = take();
    if (x === "(") {
      const v = or();
      take(")");
      return v;
    }
    if (/^[0-9]/.test(x)) return { scalar: Number(x) };
    if (/^[A-Z][A-Z0-9_]*$/.test(x)) {
      assert.ok(x in FUNCTIONS, `${x} is not a function this check knows`);
      take("(");
      const args: Val[] = [or()];
      while (peek() === ",") (take(), args.push(or()));
      take(")");
      assert.strictEqual(args.length, FUNCTIONS[x][0], `${x} takes ${FUNCTIONS[x][0]} arguments`);
      return FUNCTIONS[x][1](args);
    }
    assert.match(x, /^[a-z][A-Za-z0-9_]*$/, `metric id ${x}`);
    assert.ok(x in ids, `unknown metric id ${x} (or one defined after its use)`);
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
  assert.ok(n > 0);
  return v;
}

/**
 * One evaluation of an alarm request as CloudWatch documents it: its metrics' 5-minute Sums over the retrieved periods
 * (`sends[k]`, `events[k]`: undefined = nothing published), its expressions in order, then the last EvaluationPeriods
 * values of the one with ReturnData: ALARM when at least DatapointsToAlarm of them reach the threshold (missing data
 * not breaching).
 */
function alarms(request: ReturnType<typeof campaignAlarmRequest>, sends: Point[], events: Point[]): boolean {
  const timestamps = sends.map((_, k) => 1_800_000_000 + 300 * k);
  const ids: Record<string, Val> = {};
  const data: Record<string, Point[]> = { sends, events };
  let watched: Val | undefined;
  for (const m of request.Metrics as any[]) {
    assert.match(m.Id, /^[a-z][A-Za-z0-9_]*$/);
    ids[m.Id] = m.MetricStat ? { series: data[m.Id] } : evaluateMetricMath(m.Expression, ids, timestamps);
    if (m.ReturnData) watched = ids[m.Id];
  }
  assert.ok(watched && "series" in watched, "the alarm watches one time series");
  const last = watched.series.slice(-request.EvaluationPeriods);
  const breaching = last.filter((x) => x !== undefined && x >= request.Threshold).length;
  return breaching >= request.DatapointsToAlarm;
}

describe("guardrails: the campaign alarm's metric math", () => {
  const request = campaignAlarmRequest("dev", DEFAULT_GUARDRAILS, "bounce", "spring", "arn:topic");
  const periods = (count: number, value: Point) => Array.from({ length: count }, () => value);

  it("reads as CloudWatch's syntax: documented functions, ids lowercase first and defined before use, one returned", () => {
    const ids = request.Metrics.map((m) => m.Id as string);
    assert.deepStrictEqual(ids, ["sends", "events", "inwindow", "wsends", "wevents", "rate"]);
    assert.strictEqual(campaignRateExpression(DEFAULT_GUARDRAILS), "IF(wsends >= 200, wevents / wsends, 0)");
    assert.deepStrictEqual(
      request.Metrics.map((m) => m.ReturnData),
      [false, false, false, false, false, true],
      "one expression returns the alarm's data",
    );
    // At most 10 metrics and 10 expressions in a PutMetricAlarm (MetricDataQuery's documented limits).
    assert.ok(request.Metrics.filter((m) => m.MetricStat).length <= 10);
    assert.ok(request.Metrics.filter((m) => m.Expression).length <= 10);
    // Every expression parses (evaluated on a quiet hour: nothing published, rate 0).
    assert.strictEqual(alarms(request, periods(12, undefined), periods(12, undefined)), false);
  });

  it("5-minute periods, as many evaluation periods as the window holds (≤ 1 day in all), one datapoint alarms", () => {
    assert.deepStrictEqual(
      request.Metrics.filter((m: any) => m.MetricStat).map((m: any) => [m.MetricStat.Period, m.MetricStat.Stat]),
      [
        [300, "Sum"],
        [300, "Sum"],
      ],
    );
    assert.deepStrictEqual(
      [request.EvaluationPeriods, request.DatapointsToAlarm, request.ComparisonOperator, request.TreatMissingData],
      [12, 1, "GreaterThanOrEqualToThreshold", "notBreaching"],
    );
    const day = campaignAlarmRequest("dev", parseGuardrails('{"window": "24h"}')!, "bounce", "x", "arn:topic");
    assert.strictEqual(day.EvaluationPeriods * 300, 86_400);
  });

  it("the window's sums, not the retrieved range's: 10% bounces an hour ago count for nothing now", () => {
    // 24 periods retrieved (CloudWatch retrieves more than the evaluation periods). The older 12: 100 sends and 10
    // bounces each. The last 12 (the hour): 20 sends each = 240 sends; 4 bounces = 1.67% (by hand: 4/240), 5 = 2.08%.
    const sends = [...periods(12, 100), ...periods(12, 20)];
    const withBounces = (b: number) => [...periods(12, 10), ...periods(12, undefined).map((_, k) => (k < b ? 1 : 0))];
    assert.strictEqual(alarms(request, sends, withBounces(4)), false);
    assert.strictEqual(alarms(request, sends, withBounces(5)), true);
    // The same hour alone, or after 60 more quiet periods retrieved: the same answers.
    assert.strictEqual(alarms(request, periods(12, 20), withBounces(5).slice(12)), true);
    const quiet = periods(60, undefined);
    assert.strictEqual(alarms(request, [...quiet, ...periods(12, 20)], [...quiet, ...withBounces(4).slice(12)]), false);
    // Under 200 sends in the hour: 199 sends with 50 bounces decide nothing.
    assert.strictEqual(alarms(request, [...periods(11, 17), 12], [...periods(11, 4), 6]), false);
  });

  it("a crossing alarms at the evaluation of the 5-minute period it happens in", () => {
    // 50 sends every 5 minutes; no bounce in periods 0–5, then 3 a period. By hand, at the end of period k the hour
    // holds 50·(k+1) sends and 3·(k−5) bounces: k=6 3/350 = 0.86%, k=7 6/400 = 1.5%, k=8 9/450 = 2%: the first alarm.
    const first = Array.from({ length: 20 }, (_, k) => k).find((k) =>
      alarms(
        request,
        periods(k + 1, 50),
        periods(k + 1, 0).map((_, j) => (j >= 6 ? 3 : 0)),
      ),
    );
    assert.strictEqual(first, 8);
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

  it("the alarm clean-up: its own schedule group; the arm role schedules there only; the schedules' role deletes the campaigns' alarms only", () => {
    const group = only(stack, "aws:scheduler/scheduleGroup:ScheduleGroup", "guardrails-cleanup");
    assert.strictEqual(group.inputs.name, "sendtime-dev-guardrail-cleanup");
    const schedule = (g: string, n: string) => `arn:aws:scheduler:us-east-1:123456789012:schedule/${g}/${n}`;
    const alarm = (n: string) => `arn:aws:cloudwatch:us-east-1:123456789012:alarm:${n}`;
    const cleanupRole = only(stack, "aws:iam/role:Role", "guardrails-cleanup-role").outputs.arn;
    const arm = inlineStatements(stack, "guardrails-arm-role");
    expectDecision(arm, "Allow", [
      { action: "scheduler:CreateSchedule", resource: schedule("sendtime-dev-guardrail-cleanup", "spring") },
      { action: "scheduler:UpdateSchedule", resource: schedule("sendtime-dev-guardrail-cleanup", "spring") },
      {
        action: "iam:PassRole",
        resource: cleanupRole,
        context: { "iam:PassedToService": "scheduler.amazonaws.com" },
      },
    ]);
    expectDecision(arm, "Deny", [
      { action: "scheduler:CreateSchedule", resource: schedule("campaign-spring", "a1-0") },
      { action: "scheduler:DeleteSchedule", resource: schedule("sendtime-dev-guardrail-cleanup", "spring") },
      { action: "iam:PassRole", resource: cleanupRole, context: { "iam:PassedToService": "lambda.amazonaws.com" } },
    ]);
    const cleanup = inlineStatements(stack, "guardrails-cleanup-role");
    expectDecision(cleanup, "Allow", [
      { action: "cloudwatch:DeleteAlarms", resource: alarm("sendtime-dev-guardrail-campaign-bounce-spring") },
    ]);
    expectDecision(cleanup, "Deny", [
      { action: "cloudwatch:DeleteAlarms", resource: alarm("sendtime-dev-guardrail-account-bounce") },
      { action: "cloudwatch:DeleteAlarms", resource: alarm("alarms-dlq-not-empty") },
      { action: "cloudwatch:PutMetricAlarm", resource: alarm("sendtime-dev-guardrail-campaign-bounce-spring") },
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
