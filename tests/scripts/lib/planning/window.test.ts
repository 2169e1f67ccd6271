import * as assert from "assert";
import { effectiveTps } from "../../../../scripts/lib/cli/campaign-flags";
import { PlannedSends } from "../../../../scripts/lib/planning/planned-sends";
import { StepDecision } from "../../../../scripts/lib/planning/decision-types";
import { scheduledTime } from "../../../../infra/core/timing/send-time";
import { InstantHistogram, minimumWindowMinutes, volumeWindowMinutes } from "../../../../scripts/lib/planning/window";

const T0 = Date.UTC(2026, 11, 1, 3, 15);
const MIN = 60_000;

describe("window sizing", () => {
  it("the reference example: 500,000 schedules at 5,000 TPS need 2 minutes", () =>
    assert.strictEqual(volumeWindowMinutes(500_000, 5000), 2));
  it("exact division boundary: 600,000 → 2 minutes, 600,001 → 3", () => {
    assert.strictEqual(volumeWindowMinutes(600_000, 5000), 2);
    assert.strictEqual(volumeWindowMinutes(600_001, 5000), 3);
  });
  it("never less than the API's 1 minute", () => assert.strictEqual(volumeWindowMinutes(0, 5000), 1));

  it("effective TPS is the lower of the invocation quota and the SES rate, and says which", () => {
    assert.deepStrictEqual(effectiveTps({}), { tps: 1000, source: "Scheduler invocation quota, default" });
    assert.deepStrictEqual(effectiveTps({ sesRate: 14 }), { tps: 14, source: "SES maximum send rate, --ses-rate" });
    assert.deepStrictEqual(effectiveTps({ invocationTps: 500, sesRate: 2000 }), {
      tps: 500,
      source: "Scheduler invocation quota, --invocation-tps",
    });
    assert.deepStrictEqual(effectiveTps({ tps: 5000, sesRate: 14 }), { tps: 5000, source: "--tps" });
  });

  it("instants 15 minutes apart (Kathmandu, Kolkata) do not share a window of 15 minutes", () => {
    const instants = [
      { utcMs: T0, count: 90_000 },
      { utcMs: T0 + 15 * MIN, count: 90_000 },
    ];
    assert.deepStrictEqual(minimumWindowMinutes(instants, 100), { fits: true, windowMinutes: 15, peakTps: 100 });
  });

  it("overlapping windows add up", () => {
    // 10 minutes apart: a 15-minute window overlaps, so 180,000 sends share [t+10, t+15): needs 30 minutes
    const instants = [
      { utcMs: T0, count: 90_000 },
      { utcMs: T0 + 10 * MIN, count: 90_000 },
    ];
    const r = minimumWindowMinutes(instants, 100);
    assert.deepStrictEqual(r, { fits: true, windowMinutes: 30, peakTps: 100 });
  });

  it("when no window up to 1,440 minutes fits, says what TPS would", () => {
    const r = minimumWindowMinutes([{ utcMs: T0, count: 10_000_000 }], 100);
    assert.deepStrictEqual(r, { fits: false, windowMinutes: 1440, requiredTps: 116 });
  });

  it("the histogram keeps one slot per instant and the zones behind it", () => {
    const h = new InstantHistogram();
    h.add(T0 + 15 * MIN, "Asia/Kolkata", 2);
    h.add(T0, "Asia/Kathmandu");
    h.add(T0 + 15 * MIN + 30_000, "Asia/Calcutta");
    assert.deepStrictEqual(h.instants(), [
      { utcMs: T0, count: 1, zones: [{ zone: "Asia/Kathmandu", count: 1 }] },
      {
        utcMs: T0 + 15 * MIN,
        count: 3,
        zones: [
          { zone: "Asia/Kolkata", count: 2 },
          { zone: "Asia/Calcutta", count: 1 },
        ],
      },
    ]);
    assert.strictEqual(h.total, 4);
  });

  it("planned sends count every row once, with lists shared by two counters, two zones and past a flush", () => {
    const sent = (utcMs: number): StepDecision => ({
      step: { number: 1 },
      outcome: "planned",
      quiet: "none",
      time: scheduledTime("UTC", utcMs, "exact"),
    });
    const skipped: StepDecision = { step: { number: 2 }, outcome: "skipped", quiet: "none" };
    const a = [sent(T0), skipped];
    const b = [sent(T0 + MIN), sent(T0 + 2 * MIN)];
    const x = new PlannedSends();
    const y = new PlannedSends();
    // interleaved: x and y take turns with the same lists; b also comes with another zone
    for (let i = 0; i < 10; i++) {
      x.add("UTC", a);
      y.add("UTC", a);
      x.add("UTC", b);
      if (i % 2) x.add("Etc/GMT", b);
    }
    x.add("UTC", a);
    // 60,000 other lists (more than are kept pending before a flush), then a and b again
    for (let i = 0; i < 60_000; i++) x.add("UTC", [sent(T0 + 10 * MIN)]);
    x.add("UTC", a);
    x.add("UTC", b);
    const counts = (s: PlannedSends) =>
      s
        .instants()
        .instants()
        .map((i) => [i.utcMs - T0, i.count, i.zones.map((z) => `${z.zone} ${z.count}`).join(", ")]);
    // x: a 12 times (1 send each), b 11 times in UTC and 5 in Etc/GMT (2 sends each), 60,000 single sends
    assert.deepStrictEqual(counts(x), [
      [0, 12, "UTC 12"],
      [MIN, 16, "UTC 11, Etc/GMT 5"],
      [2 * MIN, 16, "UTC 11, Etc/GMT 5"],
      [10 * MIN, 60_000, "UTC 60000"],
    ]);
    assert.strictEqual(x.schedules, 12 + 16 * 2 + 60_000);
    assert.deepStrictEqual(counts(y), [[0, 10, "UTC 10"]]);
    assert.strictEqual(y.schedules, 10);
  });
});
