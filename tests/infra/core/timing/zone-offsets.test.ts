import * as assert from "assert";
import { IANAZone } from "luxon";
import { cachedOffsetMinutes } from "../../../../infra/core/timing/zone-offsets";

describe("cached zone offsets", () => {
  it("agree with Intl (luxon, uncached) every 97 minutes of 2026 and to the millisecond around each change", () => {
    const zones = [
      "America/New_York",
      "Europe/London",
      "Australia/Lord_Howe",
      "Asia/Kolkata",
      "America/Santiago",
      "Pacific/Chatham",
      "Africa/Casablanca",
    ];
    const start = Date.parse("2026-01-01T00:00:00Z");
    const end = Date.parse("2027-01-01T00:00:00Z");
    let changes = 0;
    for (const name of zones) {
      const raw = IANAZone.create(name);
      let previous = raw.offset(start);
      for (let t = start; t < end; t += 97 * 60_000) {
        const expected = raw.offset(t);
        assert.strictEqual(cachedOffsetMinutes(name, t), expected, `${name} at ${new Date(t).toISOString()}`);
        if (expected !== previous) {
          // find the change by brute force over the last step, minute by minute, and check both sides to the ms
          changes++;
          let m = t - 97 * 60_000;
          while (raw.offset(m + 60_000) === previous) m += 60_000;
          const change = m + 60_000;
          assert.strictEqual(
            cachedOffsetMinutes(name, change - 1),
            previous,
            `${name} just before ${new Date(change).toISOString()}`,
          );
          assert.strictEqual(
            cachedOffsetMinutes(name, change),
            expected,
            `${name} at ${new Date(change).toISOString()}`,
          );
        }
        previous = expected;
      }
    }
    assert.ok(changes >= 10, `only ${changes} offset changes seen`);
  });
});
