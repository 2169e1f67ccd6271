/**
 * Legal hours applied to a row's texts (scripts/lib/planning/sms-legal.ts), as a property over every area code of the
 * map, one or two zones a recipient, every weekday and the DST dates of 2026 and 2027: the instant planned is inside
 * every applicable jurisdiction's hours in every zone for the send's whole window, no earlier minute is, and `until`
 * is when the first of those windows closes. The hours and who they apply to are written here again by hand from the
 * laws (docs/sms.md's table), and every local time is luxon's: nothing is taken from the code under test.
 */
import * as assert from "assert";
import { DateTime } from "luxon";
import { AREA_CODE_SUBDIVISIONS } from "../../../../infra/core/sms/area-codes";
import { LegalHoursPreset } from "../../../../infra/core/sms/legal-hours";
import { scheduledTime } from "../../../../infra/core/timing/send-time";
import { ZoneDecisions } from "../../../../scripts/lib/planning/decision-types";
import { SmsLegalHours } from "../../../../scripts/lib/planning/sms-legal";

/** [start, end) in local hours per luxon weekday (1 = Monday … 7 = Sunday). */
type Hours = (weekday: number) => [number, number];
const every =
  (a: number, b: number): Hours =>
  () => [a, b];
const BY_HAND: Record<string, Hours> = {
  US: every(8, 21),
  "US-FL": every(8, 20),
  "US-OK": every(8, 20),
  "US-MD": every(8, 20),
  "US-WA": every(8, 20),
  "US-CT": every(9, 20),
  "US-TX": (d) => (d === 7 ? [12, 21] : [9, 21]),
  CA: (d) => (d >= 6 ? [10, 18] : [9, 21.5]),
};
const LIMIT_3 = new Set(["US-FL", "US-OK", "US-MD"]);
const ZONES = [
  "America/New_York",
  "America/Chicago",
  "America/Denver",
  "America/Phoenix",
  "America/Los_Angeles",
  "America/Anchorage",
  "Pacific/Honolulu",
  "America/Toronto",
  "America/Halifax",
  "America/St_Johns",
  "America/Regina",
];
const DST_DATES = ["2026-03-08", "2026-11-01", "2027-03-14", "2027-11-07"];

/** The rules of `presets` for a number whose area code the map places in `subs` (written again from docs/sms.md). */
function rulesFor(presets: LegalHoursPreset[], subs: string[]): string[] {
  const out = new Set<string>();
  for (const p of presets) {
    const country = p.toUpperCase();
    for (const sub of subs) {
      if (sub === country)
        Object.keys(BY_HAND)
          .filter((id) => id.split("-")[0] === country)
          .forEach((id) => out.add(id));
      else if (sub.startsWith(`${country}-`)) {
        out.add(country);
        if (BY_HAND[sub]) out.add(sub);
      }
    }
  }
  return [...out];
}

/** Whether [t, t + window) is inside every rule's hours in every zone, on one local day (luxon). */
function fits(t: number, windowMinutes: number, zones: string[], rules: string[]): boolean {
  return zones.every((zone) =>
    rules.every((id) =>
      [t, t + (windowMinutes - 1) * 60_000].every((at) => {
        const local = DateTime.fromMillis(at, { zone });
        const [a, b] = BY_HAND[id](local.weekday);
        const h = local.hour + local.minute / 60;
        return h >= a && h < b && local.toISODate() === DateTime.fromMillis(t, { zone }).toISODate();
      }),
    ),
  );
}

/** When the first of the windows holding t closes (luxon). */
function closes(t: number, zones: string[], rules: string[]): number {
  return Math.min(
    ...zones.flatMap((zone) =>
      rules.map((id) => {
        const local = DateTime.fromMillis(t, { zone });
        const end = BY_HAND[id](local.weekday)[1];
        return local
          .startOf("day")
          .set({ hour: Math.floor(end), minute: (end % 1) * 60 })
          .toMillis();
      }),
    ),
  );
}

function decisions(zones: string[], utcMs: number): ZoneDecisions {
  return {
    zone: zones[0],
    status: "ok",
    steps: [
      {
        step: { number: 1, days: 0, channel: "sms" },
        outcome: "planned",
        quiet: "none",
        time: scheduledTime(zones[0], utcMs, "exact"),
      },
    ],
    notes: [],
    noSendLeft: undefined,
    reject: undefined,
    candidates: zones.length > 1 ? zones : undefined,
    prepared: undefined,
  };
}

let seed = 37;
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
const RUNS = Number(process.env.SENDTIME_PROPERTY_RUNS ?? 1);

describe("legal hours over every area code, zone, weekday and DST date", () => {
  const codes = Object.entries(AREA_CODE_SUBDIVISIONS).flatMap(([subs, list]) =>
    list.split(" ").map((code) => ({ code, subs: subs.split(" ") })),
  );

  it("plans each text at the first minute inside every applicable window, for its whole window, with until", () => {
    let checked = 0;
    let moved = 0;
    for (let run = 0; run < RUNS; run++)
      for (const { code, subs } of codes) {
        const presets = pick<LegalHoursPreset[]>([["us"], ["ca"], ["us", "ca"]]);
        const zones = random() < 0.7 ? [pick(ZONES)] : [...new Set([pick(ZONES), pick(ZONES)])];
        const day =
          random() < 0.3
            ? DateTime.fromISO(pick(DST_DATES), { zone: "UTC" })
            : DateTime.utc(2026, 1, 1).plus({ days: Math.floor(random() * 730) });
        const from = day.plus({ minutes: Math.floor(random() * 1440) }).toMillis();
        const windowMinutes = pick([1, 15, 90]);
        const e164 = `+1${code}5550100`;
        const legal = new SmsLegalHours({ presets, miss: "delay", windowMinutes }, new Set([0]));
        const answer = legal.apply(decisions(zones, from), e164);
        const step = answer.decided.steps[0];
        const rules = rulesFor(presets, subs);
        const what = `${e164} ${zones.join("+")} ${presets} from ${new Date(from).toISOString()} W=${windowMinutes}`;
        if (rules.length === 0) {
          assert.equal(step.time?.utcMs, from, what);
          continue;
        }
        assert.ok(step.time, `${what}: not planned (${answer.decided.notes})`);
        const t = step.time.utcMs;
        assert.ok(fits(t, windowMinutes, zones, rules), `${what}: ${step.time.utc} is outside ${rules}`);
        if (t !== from) {
          moved++;
          assert.equal(t % 60_000, 0, what);
          assert.ok(
            t > from && !fits(t - 60_000, windowMinutes, zones, rules),
            `${what}: ${step.time.utc} is not the first`,
          );
        }
        assert.equal(step.text?.until, new Date(closes(t, zones, rules)).toISOString(), what);
        const limited = rules.some((id) => LIMIT_3.has(id));
        assert.equal(step.text?.sameSubjectLimit, limited ? 3 : undefined, what);
        checked++;
      }
    assert.ok(checked > 200 && moved > 80, `${checked} checked, ${moved} moved`);
  });

  it("skips a text outside legal hours under --legal-hours-miss skip, and keeps one inside", () => {
    const legal = new SmsLegalHours({ presets: ["us"], miss: "skip", windowMinutes: 1 }, new Set([0]));
    const night = DateTime.fromISO("2026-12-07T22:00", { zone: "America/New_York" }).toMillis();
    const noon = DateTime.fromISO("2026-12-07T12:00", { zone: "America/New_York" }).toMillis();
    const skipped = legal.apply(decisions(["America/New_York"], night), "+12125550100");
    assert.equal(skipped.decided.steps[0].time, undefined);
    assert.equal(skipped.skipped, 1);
    const kept = legal.apply(decisions(["America/New_York"], noon), "+12125550100");
    assert.equal(kept.decided.steps[0].time?.utcMs, noon);
  });
});
