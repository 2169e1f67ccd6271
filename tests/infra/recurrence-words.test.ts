import * as assert from "assert";
import { cronExpression, Recurrence } from "../../infra/core/plan/schedule-expression";
import { describeRecurrence } from "../../infra/core/timing/recurrence";

/** Each kind of recurrence as cron and a summary say it (expected strings written by hand). */
const KINDS: [Recurrence, string, string][] = [
  [{ kind: "daily" }, "cron(5 9 * * ? *)", "every day at 09:05 local until 2027-01-31"],
  [{ kind: "weekdays" }, "cron(5 9 ? * MON-FRI *)", "every weekday (Monday to Friday) at 09:05 local until 2027-01-31"],
  [
    { kind: "weekly", days: [4, 1, 0, 4] },
    "cron(5 9 ? * MON,THU,SUN *)",
    "every Monday, Thursday, Sunday at 09:05 local until 2027-01-31",
  ],
  [
    { kind: "monthly", day: 31 },
    "cron(5 9 31 * ? *)",
    "on day 31 of every month (none in months without day 31) at 09:05 local until 2027-01-31",
  ],
  [{ kind: "monthly", day: 3 }, "cron(5 9 3 * ? *)", "on day 3 of every month at 09:05 local until 2027-01-31"],
];

describe("recurrence words", () => {
  for (const [recurrence, cron, summary] of KINDS)
    it(`${recurrence.kind}: ${cron}`, () => {
      const t = { recurrence, hour: 9, minute: 5 };
      assert.strictEqual(cronExpression(t), cron);
      assert.strictEqual(describeRecurrence(t, { year: 2027, month: 1, day: 31 }), summary);
    });
});
