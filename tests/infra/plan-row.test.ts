import * as assert from "assert";
import { atExpression, formatPlanRow, parseAtExpression, parsePlanRow, PLAN_ROW_FIELDS, PlanRow, planKey } from "../../infra/plan-row";

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
    for (const variant of ["B", null]) assert.deepStrictEqual(parsePlanRow(formatPlanRow({ ...ROW, variant })), { ...ROW, variant });
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

  it("at(): formats send_at and parses it back; anything else is not a one-time schedule", () => {
    assert.strictEqual(atExpression(ROW.send_at), "at(2026-12-04T09:00:00)");
    assert.deepStrictEqual(parseAtExpression("at(2026-12-04T09:00:00)"), { year: 2026, month: 12, day: 4, hour: 9, minute: 0 });
    assert.deepStrictEqual(parseAtExpression("at(2027-01-31T23:59:30)"), { year: 2027, month: 1, day: 31, hour: 23, minute: 59 });
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
