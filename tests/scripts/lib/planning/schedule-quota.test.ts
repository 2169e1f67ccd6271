import * as assert from "assert";
import { scheduleQuotaFinding } from "../../../../scripts/lib/planning/schedule-quota";

describe("schedule quota", () => {
  const quota = { maxSchedules: 10_000_000, source: "EventBridge Scheduler's default" };

  it("a plan at the quota fits; one schedule more does not", () => {
    assert.strictEqual(
      scheduleQuotaFinding({ schedules: 10_000_000, recipients: 5_000_000, steps: 2 }, quota),
      undefined,
    );
    assert.ok(scheduleQuotaFinding({ schedules: 10_000_001, recipients: 5_000_001, steps: 2 }, quota));
  });

  it("10M recipients × 2 steps: says the count, the quota and its source, and how to split (2 campaigns of 5M)", () => {
    const text = scheduleQuotaFinding({ schedules: 20_000_000, recipients: 10_000_000, steps: 2 }, quota)!;
    assert.match(
      text,
      /^Not launched: the plan has 20,000,000 schedules \(10,000,000 recipients, 2 steps\), above the schedule quota of 10,000,000 \(EventBridge Scheduler's default\)/,
    );
    // 10,000,000 ÷ 2 steps = 5,000,000 recipients a campaign; 10,000,000 recipients → 2 campaigns.
    assert.match(text, /split the list into 2 campaigns of at most 5,000,000 recipients each/);
    assert.match(text, /pass the new value with --max-schedules/);
  });

  it("rounds the number of campaigns up (7 recipients × 3 steps under a quota of 10: 3 recipients a campaign → 3 campaigns)", () => {
    const text = scheduleQuotaFinding(
      { schedules: 21, recipients: 7, steps: 3 },
      { maxSchedules: 10, source: "--max-schedules" },
    )!;
    assert.match(text, /21 schedules \(7 recipients, 3 steps\), above the schedule quota of 10 \(--max-schedules\)/);
    assert.match(text, /split the list into 3 campaigns of at most 3 recipients each/);
  });
});
