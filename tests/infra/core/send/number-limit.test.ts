/**
 * The same-subject limit's model (infra/core/send/number-limit.ts): over random histories of admissions (from several
 * campaigns at random instants, each text leaving up to SEND_AFTER_ADMISSION_SECONDS after its admission) and
 * releases of texts that ended not sent, no rolling 24 h holds more than N texts sent to the number. The count is made
 * here by brute force over the send instants, not by the model.
 */
import * as assert from "assert";
import fc from "fast-check";
import {
  admit,
  effectiveLimit,
  emptySlots,
  NUMBER_HOLD_SECONDS,
  NUMBER_SLOTS,
  NUMBER_WINDOW_SECONDS,
  release,
  SEND_AFTER_ADMISSION_SECONDS,
} from "../../../../infra/core/send/number-limit";

const RUNS = 400;
const step = fc.record({
  // Any spacing, and often near the edge of a day, where a slot becomes reusable.
  gap: fc.oneof(
    fc.integer({ min: 0, max: 30 * 3600 }),
    fc.integer({ min: NUMBER_WINDOW_SECONDS - 600, max: NUMBER_WINDOW_SECONDS + 600 }),
  ),
  delay: fc.integer({ min: 0, max: SEND_AFTER_ADMISSION_SECONDS }),
  notSent: fc.boolean(),
});

/** The most sends in any window (t − 24 h, t]: checking the windows that end at a send suffices. */
function mostInAnyDay(sends: number[]): number {
  let most = 0;
  for (const t of sends) most = Math.max(most, sends.filter((s) => s > t - NUMBER_WINDOW_SECONDS && s <= t).length);
  return most;
}

describe("the same-subject limit (a number's slots)", () => {
  it("at most N texts sent in any rolling 24 h, whatever the admissions' spacing, send delays and releases", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: NUMBER_SLOTS }), fc.array(step, { maxLength: 40 }), (n, steps) => {
        const slots = emptySlots();
        const sends: number[] = [];
        let now = 1_800_000_000;
        steps.forEach((s, k) => {
          now += s.gap;
          const a = admit(slots, now, n, `occ-${k}`);
          if (a === "capped" || a === "repeat") return;
          if (s.notSent) release(slots, a.slot, `occ-${k}`);
          else sends.push(now + s.delay);
        });
        assert.ok(mostInAnyDay(sends) <= n, `${mostInAnyDay(sends)} sends in 24 h under limit ${n}`);
      }),
      { numRuns: RUNS },
    );
  });

  it("mixed limits on one number: an admission under limit N leaves at most N slots in use", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.integer({ min: 0, max: 20 * 3600 }), n: fc.integer({ min: 1, max: 5 }) }), {
          maxLength: 40,
        }),
        (steps) => {
          const slots = emptySlots();
          let now = 1_800_000_000;
          steps.forEach((s, k) => {
            now += s.gap;
            if (typeof admit(slots, now, s.n, `occ-${k}`) !== "object") return;
            const live = slots.times.filter((t) => t >= now - NUMBER_HOLD_SECONDS).length;
            assert.ok(live <= effectiveLimit(s.n), `${live} live slots after an admission under ${s.n}`);
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("Florida, by hand: 3 texts at 13:00, 17:00 and 22:00 hold the 4th until 13:05 the next day", () => {
    const slots = emptySlots();
    const t = (iso: string) => Date.parse(iso) / 1000;
    const at = ["2026-12-01T13:00:00Z", "2026-12-01T17:00:00Z", "2026-12-01T22:00:00Z"];
    assert.deepStrictEqual(
      at.map((iso, k) => admit(slots, t(iso), 3, `o${k}`)),
      [{ slot: 0 }, { slot: 1 }, { slot: 2 }],
    );
    assert.strictEqual(admit(slots, t("2026-12-02T13:04:59Z"), 3, "o3"), "capped");
    assert.deepStrictEqual(admit(slots, t("2026-12-02T13:05:01Z"), 3, "o4"), { slot: 0 });
    assert.strictEqual(admit(slots, t("2026-12-02T13:05:02Z"), 3, "o4"), "repeat", "one occurrence holds one slot");
  });

  it("a larger SameSubjectLimit is held to the slots there are; a smaller one to at least 1", () => {
    assert.deepStrictEqual([effectiveLimit(7), effectiveLimit(0), effectiveLimit(2)], [NUMBER_SLOTS, 1, 2]);
  });
});
