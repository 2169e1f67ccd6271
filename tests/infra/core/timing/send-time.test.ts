import * as assert from "assert";
import { IANA_ZONE_NAMES } from "../../../../infra/core/zones/iana-zones";
import { parseStepFlag, timingFromFlags } from "../../../../scripts/lib/cli/campaign-flags";
import { SendDecider } from "../../../../scripts/lib/planning/decisions";
import { canonicalZone, stepTime, ZoneResolver, zonedInstant } from "../../../../infra/core/timing/send-time";

const at = (zone: string, date: string, hour: number, minute = 0) => {
  const [year, month, day] = date.split("-").map(Number);
  const r = zonedInstant(zone, { year, month, day, hour, minute });
  return { utc: new Date(r.utcMs).toISOString(), fold: r.fold };
};
const base = (date: string, hour: number, minute = 0) => {
  const [year, month, day] = date.split("-").map(Number);
  return { year, month, day, hour, minute };
};

describe("send-time rules", () => {
  describe("zones", () => {
    it("keeps IANA names, links included, exactly as written", () => {
      for (const z of ["America/New_York", "US/Eastern", "Asia/Calcutta", "Asia/Kolkata", "Etc/GMT+5", "UTC"])
        assert.strictEqual(canonicalZone(z), z);
    });
    it("re-cases a name that differs only in case", () => {
      assert.strictEqual(canonicalZone("america/chicago"), "America/Chicago");
      assert.strictEqual(canonicalZone("US/EASTERN"), "US/Eastern");
    });
    it("does not accept spaces, offsets or made-up names", () => {
      for (const z of [
        "America/New York",
        " America/Chicago",
        "America/Chicago ",
        "+05:00",
        "EST+5",
        "Mars/Base",
        "Local",
        "",
      ])
        assert.strictEqual(canonicalZone(z), undefined, z);
    });
    it("resolves a row's zone, reporting defaulted and re-cased rows", () => {
      const r = new ZoneResolver("Europe/Paris");
      assert.deepStrictEqual(r.resolve("Asia/Tokyo"), { zone: "Asia/Tokyo", status: "ok" });
      assert.deepStrictEqual(r.resolve("asia/tokyo"), { zone: "Asia/Tokyo", status: "canonicalised" });
      assert.deepStrictEqual(r.resolve(" Asia/Tokyo\t"), { zone: "Asia/Tokyo", status: "canonicalised" });
      assert.deepStrictEqual(r.resolve("Nowhere/Town"), { zone: "Europe/Paris", status: "defaulted" });
      assert.deepStrictEqual(r.resolve(""), { zone: "Europe/Paris", status: "defaulted" });
      assert.deepStrictEqual(r.resolve(undefined), { zone: "Europe/Paris", status: "defaulted" });
      assert.throws(() => new ZoneResolver("europe/paris"), /not an IANA zone name/);
    });
  });

  describe("local time to instant", () => {
    it("handles half- and quarter-hour zones and the far edges of the map", () => {
      assert.deepStrictEqual(at("Asia/Kolkata", "2026-12-01", 9), { utc: "2026-12-01T03:30:00.000Z", fold: "exact" });
      assert.deepStrictEqual(at("Asia/Kathmandu", "2026-12-01", 9), { utc: "2026-12-01T03:15:00.000Z", fold: "exact" });
      assert.deepStrictEqual(at("Pacific/Kiritimati", "2026-12-01", 9), {
        utc: "2026-11-30T19:00:00.000Z",
        fold: "exact",
      });
      assert.deepStrictEqual(at("Pacific/Pago_Pago", "2026-12-01", 9), {
        utc: "2026-12-01T20:00:00.000Z",
        fold: "exact",
      });
      assert.deepStrictEqual(at("US/Eastern", "2026-12-01", 9), { utc: "2026-12-01T14:00:00.000Z", fold: "exact" });
    });
    it("moves a time in the spring-forward gap forward by the gap (New York, Paris, Lord Howe's 30 minutes)", () => {
      assert.deepStrictEqual(at("America/New_York", "2026-03-08", 2, 30), {
        utc: "2026-03-08T07:30:00.000Z",
        fold: "gap",
      }); // 03:30 EDT
      assert.deepStrictEqual(at("Europe/Paris", "2026-03-29", 2, 30), { utc: "2026-03-29T01:30:00.000Z", fold: "gap" }); // 03:30 CEST
      assert.deepStrictEqual(at("Australia/Lord_Howe", "2026-10-04", 2, 15), {
        utc: "2026-10-03T15:45:00.000Z",
        fold: "gap",
      }); // 02:45 +11
    });
    it("takes the earlier instant of a time that happens twice at fall-back", () => {
      assert.deepStrictEqual(at("America/New_York", "2026-11-01", 1, 30), {
        utc: "2026-11-01T05:30:00.000Z",
        fold: "overlap",
      }); // EDT
      assert.deepStrictEqual(at("Europe/Paris", "2026-10-25", 2, 30), {
        utc: "2026-10-25T00:30:00.000Z",
        fold: "overlap",
      }); // CEST
      assert.deepStrictEqual(at("Australia/Lord_Howe", "2026-04-05", 1, 45), {
        utc: "2026-04-04T14:45:00.000Z",
        fold: "overlap",
      }); // +11
    });
    it("round-trips through Intl for every IANA name on ordinary and transition days", () => {
      const fmt = new Map<string, Intl.DateTimeFormat>();
      const wall = (zone: string, ms: number) => {
        if (!fmt.has(zone))
          fmt.set(
            zone,
            new Intl.DateTimeFormat("en-CA", {
              timeZone: zone,
              hourCycle: "h23",
              year: "numeric",
              month: "2-digit",
              day: "2-digit",
              hour: "2-digit",
              minute: "2-digit",
            }),
          );
        return fmt.get(zone)!.format(new Date(ms)).replace(", ", "T");
      };
      let checked = 0;
      for (const zone of IANA_ZONE_NAMES) {
        for (const date of ["2026-03-08", "2026-03-29", "2026-10-04", "2026-10-25", "2026-11-01", "2026-12-01"]) {
          for (const hour of [0, 1, 2, 3, 9]) {
            const [y, m, d] = date.split("-").map(Number);
            const r = zonedInstant(zone, { year: y, month: m, day: d, hour, minute: 30 });
            const requested = `${date}T${String(hour).padStart(2, "0")}:30`;
            if (r.fold === "gap") {
              assert.ok(wall(zone, r.utcMs) > requested, `${zone} ${requested}: a gap moves forward`);
              for (let ms = r.utcMs - 3 * 3_600_000; ms <= r.utcMs + 3 * 3_600_000; ms += 60_000) {
                assert.notStrictEqual(wall(zone, ms), requested, `${zone} ${requested} does not exist`);
              }
            } else {
              assert.strictEqual(wall(zone, r.utcMs), requested, `${zone} ${requested}`);
              if (r.fold === "overlap")
                assert.strictEqual(
                  wall(zone, r.utcMs - 3_600_000) === requested,
                  false,
                  `${zone}: the earlier of the two`,
                );
            }
            checked++;
          }
        }
      }
      assert.ok(checked > 15_000);
    });
  });

  describe("plan times", () => {
    it("writes an exact time as local time in the zone", () => {
      const t = stepTime("America/New_York", base("2026-12-01", 9), { number: 1, days: 0 });
      assert.deepStrictEqual([t.send_at, t.timezone], ["2026-12-01T09:00:00", "America/New_York"]);
    });
    it("writes a gap or overlap time in UTC, so send_at + timezone is one instant", () => {
      const gap = stepTime("America/New_York", base("2026-03-08", 2, 30), { number: 1, days: 0 });
      assert.deepStrictEqual([gap.send_at, gap.timezone], ["2026-03-08T07:30:00", "UTC"]);
      const overlap = stepTime("Europe/Paris", base("2026-10-25", 2, 30), { number: 1, days: 0 });
      assert.deepStrictEqual([overlap.send_at, overlap.timezone], ["2026-10-25T00:30:00", "UTC"]);
    });
    it("+Nd keeps the local time across a DST change; +Nh is an absolute duration", () => {
      const days = stepTime("America/New_York", base("2026-10-30", 9), { number: 2, days: 3 });
      assert.deepStrictEqual(
        [days.send_at, days.timezone, new Date(days.utcMs).toISOString()],
        ["2026-11-02T09:00:00", "America/New_York", "2026-11-02T14:00:00.000Z"],
      );
      const hours = stepTime("America/New_York", base("2026-10-31", 9), { number: 2, hours: 24 });
      assert.deepStrictEqual(
        [hours.send_at, new Date(hours.utcMs).toISOString()],
        ["2026-11-01T08:00:00", "2026-11-01T13:00:00.000Z"],
      );
    });
    it("+Nh landing in a fall-back hour is written in UTC", () => {
      const t = stepTime("America/New_York", base("2026-10-31", 1, 30), { number: 2, hours: 24 });
      assert.deepStrictEqual([t.send_at, t.timezone], ["2026-11-01T05:30:00", "UTC"]);
    });
    it("computes each zone once per campaign", () => {
      const decider = new SendDecider({
        rule: { kind: "date", date: { year: 2026, month: 12, day: 1 }, hour: 9, minute: 0 },
        steps: [
          { number: 1, days: 0 },
          { number: 2, days: 3 },
        ],
        defaultZone: "UTC",
      });
      assert.strictEqual(decider.forZone("Asia/Tokyo"), (decider.decide("asia/tokyo") as { steps: unknown }).steps);
      assert.deepStrictEqual(
        decider.forZone("Asia/Tokyo").map((d) => d.time!.send_at),
        ["2026-12-01T09:00:00", "2026-12-04T09:00:00"],
      );
    });
  });

  describe("steps (flags)", () => {
    it("parses +Nd and +Nh with an optional template", () => {
      assert.deepStrictEqual(parseStepFlag("+3d", 2), { number: 2, days: 3, template: undefined });
      assert.deepStrictEqual(parseStepFlag("+12h:reminder_v2", 3), { number: 3, hours: 12, template: "reminder_v2" });
      assert.deepStrictEqual(
        timingFromFlags({ date: "2026-12-01", hour: "9", step: ["+3d:followup", "+4d"] }, "welcome").steps,
        [
          { number: 1, days: 0, template: "welcome" },
          { number: 2, days: 3, template: "followup" },
          { number: 3, days: 4, template: "welcome" },
        ],
      );
    });
    it("rejects anything else with a message naming the flag", () => {
      for (const bad of ["3d", "+0d", "+3w", "+3d:", "+3d:bad name", "+1000d"])
        assert.throws(() => parseStepFlag(bad, 2), /^Error: --step .*: expected \+Nd or \+Nh/);
    });
  });
});
