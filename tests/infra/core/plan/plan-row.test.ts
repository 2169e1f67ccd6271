import * as assert from "assert";
import {
  atExpression,
  cronExpression,
  parseAtExpression,
  parseCronExpression,
} from "../../../../infra/core/plan/schedule-expression";
import { formatPlanRow, parsePlanRow, PLAN_ROW_FIELDS, PlanRow, planKey } from "../../../../infra/core/plan/plan-row";

const ROW: PlanRow = {
  schedule_name: "a1-2",
  send_at: "2026-12-04T09:00:00",
  timezone: "America/New_York",
  email: "ann@example.com",
  template: "followup",
  template_data: { first_name: 'Ann "A"', note: "line one\nline two, back\\slash, 😀 Zoë", step: "2" },
  recipient_id: "a1",
  step: 2,
  utc: "2026-12-04T14:00:00.000Z",
  variant: null,
  schedule_expression: "at(2026-12-04T09:00:00)",
};

describe("plan row format", () => {
  it("parsing a serialized row gives the row back, quotes, newlines, backslashes and emoji included", () => {
    const line = formatPlanRow(ROW);
    assert.ok(line.endsWith("}\n") && !line.slice(0, -1).includes("\n"), "one line");
    assert.deepStrictEqual(parsePlanRow(line), ROW);
    for (const variant of ["B", null])
      assert.deepStrictEqual(parsePlanRow(formatPlanRow({ ...ROW, variant })), { ...ROW, variant });
  });

  it("writes the fields in the contract's order, as JSON.stringify would", () => {
    const ordered = Object.fromEntries(PLAN_ROW_FIELDS.map((k) => [k, ROW[k]]));
    assert.strictEqual(formatPlanRow(ROW), JSON.stringify(ordered) + "\n");
    assert.deepStrictEqual(Object.keys(JSON.parse(formatPlanRow(ROW))), [
      "schedule_name",
      "send_at",
      "timezone",
      "email",
      "template",
      "template_data",
      "recipient_id",
      "step",
      "utc",
      "variant",
      "schedule_expression",
    ]);
  });

  it("refuses a line that is not a plan row, naming the field", () => {
    assert.throws(() => parsePlanRow(JSON.stringify({ ...ROW, step: "2" })), /field "step"/);
    assert.throws(() => parsePlanRow(JSON.stringify({ ...ROW, template_data: { n: 1 } })), /field "template_data"/);
    const { email: _, ...noEmail } = ROW;
    assert.throws(() => parsePlanRow(JSON.stringify(noEmail)), /field "email"/);
    assert.throws(() => parsePlanRow(JSON.stringify({ ...ROW, send_at: "2026-12-04 09:00" })), /send_at/);
    assert.throws(() => parsePlanRow(JSON.stringify({ ...ROW, variant: 3 })), /field "variant"/);
    assert.throws(() => parsePlanRow("[1]"), /JSON object/);
  });

  it("a recurring row carries start_date and end_date after the other fields, and parses back; a one-time row has neither", () => {
    const recurring: PlanRow = {
      ...ROW,
      schedule_expression: "cron(0 9 ? * MON *)",
      start_date: "2026-11-30T12:05:01.000Z",
      end_date: "2027-02-01T05:00:00.000Z",
    };
    const line = formatPlanRow(recurring);
    assert.deepStrictEqual(Object.keys(JSON.parse(line)).slice(-3), ["schedule_expression", "start_date", "end_date"]);
    assert.deepStrictEqual(parsePlanRow(line), recurring);
    assert.ok(!formatPlanRow(ROW).includes("start_date") && !formatPlanRow(ROW).includes("end_date"));
    assert.deepStrictEqual(Object.keys(parsePlanRow(formatPlanRow(ROW))), [...PLAN_ROW_FIELDS]);
  });

  it("refuses dates on a one-time row, a cron row without both, null dates, and a start not before the end", () => {
    const cron = { ...ROW, schedule_expression: "cron(0 9 * * ? *)" };
    const dates = { start_date: "2026-11-30T12:05:01.000Z", end_date: "2027-02-01T05:00:00.000Z" };
    assert.throws(() => parsePlanRow(JSON.stringify({ ...ROW, ...dates })), /field "start_date" is only for recurring/);
    assert.throws(() => parsePlanRow(JSON.stringify(cron)), /field "start_date" of a recurring/);
    assert.throws(
      () => parsePlanRow(JSON.stringify({ ...cron, start_date: dates.start_date })),
      /field "end_date" of a recurring/,
    );
    assert.throws(() => parsePlanRow(JSON.stringify({ ...cron, ...dates, end_date: null })), /field "end_date"/);
    assert.throws(
      () => parsePlanRow(JSON.stringify({ ...cron, ...dates, start_date: "2026-11-30 12:05" })),
      /field "start_date"/,
    );
    assert.throws(
      () => parsePlanRow(JSON.stringify({ ...cron, start_date: dates.end_date, end_date: dates.start_date })),
      /not before end_date/,
    );
  });

  it("cron(): the four shapes, written by hand, and read back; anything else is not ours", () => {
    const at = { hour: 9, minute: 5 };
    const cases: [Parameters<typeof cronExpression>[0]["recurrence"], string][] = [
      [{ kind: "daily" }, "cron(5 9 * * ? *)"],
      [{ kind: "weekdays" }, "cron(5 9 ? * MON-FRI *)"],
      [{ kind: "weekly", days: [4, 1] }, "cron(5 9 ? * MON,THU *)"],
      [{ kind: "weekly", days: [0, 6] }, "cron(5 9 ? * SAT,SUN *)"],
      [{ kind: "monthly", day: 31 }, "cron(5 9 31 * ? *)"],
    ];
    for (const [recurrence, text] of cases) {
      assert.strictEqual(cronExpression({ recurrence, ...at }), text);
      const back = parseCronExpression(text)!;
      assert.strictEqual(cronExpression(back), text);
      assert.deepStrictEqual([back.hour, back.minute], [9, 5]);
    }
    for (const other of [
      "at(2026-12-04T09:00:00)",
      "cron(0 9 ? * MON#2 *)",
      "cron(0 24 * * ? *)",
      "cron(0 9 L * ? *)",
      "rate(1 day)",
      undefined,
    ])
      assert.strictEqual(parseCronExpression(other), undefined, String(other));
  });

  it("at(): formats send_at and parses it back; anything else is not a one-time schedule", () => {
    assert.strictEqual(atExpression(ROW.send_at), "at(2026-12-04T09:00:00)");
    assert.deepStrictEqual(parseAtExpression("at(2026-12-04T09:00:00)"), {
      year: 2026,
      month: 12,
      day: 4,
      hour: 9,
      minute: 0,
    });
    assert.deepStrictEqual(parseAtExpression("at(2027-01-31T23:59:30)"), {
      year: 2027,
      month: 1,
      day: 31,
      hour: 23,
      minute: 59,
    });
    for (const other of [
      "cron(0 9 * * ? *)",
      "rate(5 minutes)",
      "at(2026-13-01T09:00:00)",
      "at(2026-12-01T24:00:00)",
      "at(2026-12-01)",
      "",
      undefined,
    ])
      assert.strictEqual(parseAtExpression(other), undefined, String(other));
  });

  it("plan key: plans/<campaign>/<launch id>.jsonl", () => {
    assert.strictEqual(planKey("spring", "ae32aac75343b824"), "plans/spring/ae32aac75343b824.jsonl");
  });
});
