/**
 * Legal hours: the table as the sources read (docs/sms.md holds the same rows), the area-code map as the generator
 * writes it from the package's data, the jurisdictions a number resolves to, hand-worked next allowed instants, and a
 * property over every area code of the map, every weekday and the DST dates of 2026 and 2027: the instant chosen is
 * inside every applicable window in every candidate zone (checked with luxon from the table's hours), and no earlier
 * minute is (stepped minute by minute on a sample). Bounded for npm test; SENDTIME_PROPERTY_RUNS=N runs it N times.
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as path from "path";
import fc from "fast-check";
import { DateTime } from "luxon";
import { AREA_CODE_SUBDIVISIONS, AREA_CODES_VERSION } from "../../../../infra/core/sms/area-codes";
import { describeHours, Jurisdiction, JURISDICTIONS, LegalHoursPreset } from "../../../../infra/core/sms/legal-hours";
import {
  applicableJurisdictions,
  applyLegalHours,
  LegalCandidate,
  legalCandidates,
  nextLegalInstant,
  sameSubjectLimit,
} from "../../../../infra/core/sms/legal-window";
import {
  OUTPUT,
  placesByAreaCode,
  readGeocodes,
  renderAreaCodes,
  subdivisionsByAreaCode,
} from "../../../../scripts/gen-area-codes";

const RUNS = Number(process.env.SENDTIME_PROPERTY_RUNS ?? 0) || 200;
const MINUTE = 60_000;
const DAY = 86_400_000;
const ROOT = path.join(__dirname, "..", "..", "..", "..");

/** The instant of a wall-clock time in a zone, by luxon. */
const at = (iso: string, zone: string) => DateTime.fromISO(iso, { zone }).toMillis();
const wall = (ms: number, zone: string) => DateTime.fromMillis(ms, { zone }).toFormat("ccc yyyy-MM-dd HH:mm");

describe("SMS legal hours", () => {
  it("holds the hours the sources give (recipient's local time; end exclusive)", () => {
    const byId = new Map(JURISDICTIONS.map((j) => [j.id, j]));
    const text = Object.fromEntries([...byId].map(([id, j]) => [id, describeHours(j.hours)]));
    assert.deepEqual(text, {
      US: "every day 08:00-21:00",
      "US-FL": "every day 08:00-20:00",
      "US-OK": "every day 08:00-20:00",
      "US-MD": "every day 08:00-20:00",
      "US-WA": "every day 08:00-20:00",
      "US-CT": "every day 09:00-20:00",
      "US-TX": "MON-SAT 09:00-21:00, SUN 12:00-21:00",
      CA: "MON-FRI 09:00-21:30, SAT-SUN 10:00-18:00",
    });
    for (const id of ["US-FL", "US-OK", "US-MD"]) assert.equal(byId.get(id)!.sameSubjectPer24h, 3, id);
    for (const j of JURISDICTIONS) {
      assert.equal(j.hours.length, 7, j.id);
      assert.match(j.source, /^https:\/\//, j.id);
      assert.match(j.read, /^\d{4}-\d{2}-\d{2}$/, j.id);
    }
  });

  it("is in docs/sms.md row by row, with its source and the date read", () => {
    const doc = fs.readFileSync(path.join(ROOT, "docs", "sms.md"), "utf8");
    for (const j of JURISDICTIONS) {
      const row = doc.split("\n").find((line) => line.startsWith(`| ${j.name} |`));
      assert.ok(row, `docs/sms.md has no row for ${j.name}`);
      for (const part of [describeHours(j.hours), j.source, j.read]) assert.ok(row.includes(part), `${j.id}: ${part}`);
    }
  });

  it("has the area-code map the generator writes from the package's data", () => {
    const { version, map } = readGeocodes();
    assert.equal(AREA_CODES_VERSION.version, version);
    const text = renderAreaCodes(version, subdivisionsByAreaCode(placesByAreaCode(map)));
    assert.equal(fs.readFileSync(OUTPUT, "utf8"), text);
  });

  it("places area codes as the geocoding data does, several states for one that spans them", () => {
    const byCode = new Map<string, string>();
    for (const [list, codes] of Object.entries(AREA_CODE_SUBDIVISIONS))
      for (const c of codes.split(" ")) byCode.set(c, list);
    const expected: Record<string, string> = {
      "305": "US-FL",
      "405": "US-OK",
      "410": "US-MD",
      "206": "US-WA",
      "203": "US-CT",
      "512": "US-TX",
      "915": "US-TX",
      "202": "US-DC",
      "907": "US-AK",
      "808": "US-HI",
      "416": "CA-ON",
      "709": "CA-NL",
      "201": "US-NJ US-NY",
      "902": "CA-NS CA-PE",
    };
    for (const [code, list] of Object.entries(expected)) assert.equal(byCode.get(code), list, code);
    // Other NANP countries' area codes (Bahamas, Jamaica, Puerto Rico) are not the presets' countries'.
    for (const code of ["242", "876", "787"]) assert.equal(byCode.get(code), undefined, code);
    assert.ok(byCode.size > 400, `${byCode.size} area codes`);
  });

  it("resolves a number to its country's rule and its state's, and an unknown one to the preset's strictest", () => {
    const ids = (presets: LegalHoursPreset[], e164?: string) =>
      applicableJurisdictions(presets, e164)
        .map((j) => j.id)
        .sort();
    assert.deepEqual(ids(["us"], "+13055550100"), ["US", "US-FL"]);
    assert.deepEqual(ids(["us"], "+12145550100"), ["US", "US-TX"]);
    assert.deepEqual(ids(["us"], "+12015550100"), ["US"]); // New Jersey and New York: federal hours only
    assert.deepEqual(ids(["us"], "+14165550100"), []); // Toronto: not the us preset's
    assert.deepEqual(ids(["us", "ca"], "+14165550100"), ["CA"]);
    assert.deepEqual(ids(["us"], "+442079460000"), ids(["us"]));
    assert.deepEqual(ids(["us"]), ["US", "US-CT", "US-FL", "US-MD", "US-OK", "US-TX", "US-WA"]);
    assert.equal(sameSubjectLimit(["us"], "+13055550100"), 3);
    assert.equal(sameSubjectLimit(["us"], "+12125550100"), undefined);
    assert.equal(sameSubjectLimit(["us"]), 3);
  });

  it("moves a send outside them to the next allowed instant, hand-worked", () => {
    const next = (e164: string | undefined, zones: string[], iso: string, presets: LegalHoursPreset[] = ["us"]) => {
      const r = nextLegalInstant(at(iso, zones[0]), legalCandidates(presets, zones, e164));
      return r === null ? null : wall(r, zones[0]);
    };
    // Florida, Friday 20:30: past 20:00, so Saturday 08:00.
    assert.equal(next("+13055550100", ["America/New_York"], "2026-12-04T20:30"), "Sat 2026-12-05 08:00");
    // New York (federal): 20:30 is allowed; 21:00 is not.
    assert.equal(next("+12125550100", ["America/New_York"], "2026-12-04T20:30"), "Fri 2026-12-04 20:30");
    assert.equal(next("+12125550100", ["America/New_York"], "2026-12-04T21:00"), "Sat 2026-12-05 08:00");
    // Texas, Sunday 09:30: noon; Saturday 08:30: 09:00; Saturday 21:10: Sunday noon.
    assert.equal(next("+12145550100", ["America/Chicago"], "2026-12-06T09:30"), "Sun 2026-12-06 12:00");
    assert.equal(next("+12145550100", ["America/Chicago"], "2026-12-05T08:30"), "Sat 2026-12-05 09:00");
    assert.equal(next("+12145550100", ["America/Chicago"], "2026-12-05T21:10"), "Sun 2026-12-06 12:00");
    // Toronto: Saturday 19:00 → Sunday 10:00; Friday 21:15 is allowed; Friday 21:30 → Saturday 10:00.
    const ca: LegalHoursPreset[] = ["ca"];
    assert.equal(next("+14165550100", ["America/Toronto"], "2026-12-05T19:00", ca), "Sun 2026-12-06 10:00");
    assert.equal(next("+14165550100", ["America/Toronto"], "2026-12-04T21:15", ca), "Fri 2026-12-04 21:15");
    assert.equal(next("+14165550100", ["America/Toronto"], "2026-12-04T21:30", ca), "Sat 2026-12-05 10:00");
    // Unknown state, New York or Honolulu (5 hours apart in December): the strictest US hours (09:00-20:00 on a
    // Monday) in both: 14:00 in New York is 09:00 in Honolulu.
    assert.equal(next(undefined, ["America/New_York", "Pacific/Honolulu"], "2026-12-07T10:00"), "Mon 2026-12-07 14:00");
    // Unknown state on a Sunday at 20:30 in New York: Texas would allow it, Florida would not; Monday 09:00.
    assert.equal(next(undefined, ["America/New_York"], "2026-12-06T20:30"), "Mon 2026-12-07 09:00");
    // The night the clocks spring forward in New York (Sunday 2026-03-08): 01:30 EST → 08:00 EDT, 12:00 UTC.
    const spring = nextLegalInstant(
      at("2026-03-08T01:30", "America/New_York"),
      legalCandidates(["us"], ["America/New_York"], "+12125550100"),
    );
    assert.equal(new Date(spring!).toISOString(), "2026-03-08T12:00:00.000Z");
  });

  it("returns null when the candidates' windows never meet, and skips by the caller's choice", () => {
    const monday8to9 = [null, { start: 480, end: 540 }, null, null, null, null, null];
    const apart: LegalCandidate[] = [
      { zone: "America/New_York", hours: monday8to9, jurisdictions: ["X"] },
      { zone: "Asia/Tokyo", hours: monday8to9, jurisdictions: ["X"] },
    ];
    assert.equal(nextLegalInstant(at("2026-12-07T07:00", "America/New_York"), apart), null);
    assert.deepEqual(applyLegalHours(at("2026-12-07T07:00", "America/New_York"), apart, "delay"), {
      skipped:
        "legal hours (America/New_York MON 08:00-09:00, TUE-SUN none; Asia/Tokyo MON 08:00-09:00, TUE-SUN none) leave no time within 8 days",
    });
    const fl = legalCandidates(["us"], ["America/New_York"], "+13055550100");
    const late = at("2026-12-04T20:30", "America/New_York");
    assert.match(String((applyLegalHours(late, fl, "skip") as { skipped: string }).skipped), /outside legal hours/);
    assert.deepEqual(applyLegalHours(late, fl, "delay"), {
      utcMs: at("2026-12-05T08:00", "America/New_York"),
      moved: true,
    });
    const noon = at("2026-12-04T12:00", "America/New_York");
    assert.deepEqual(applyLegalHours(noon, fl, "skip"), { utcMs: noon, moved: false });
    assert.equal(nextLegalInstant(noon, []), noon);
    assert.deepEqual(legalCandidates(["us"], [], "+14165550100"), []); // no rule applies: no zone needed
    assert.throws(() => legalCandidates(["us"], [], "+13055550100"), /legal hours need the recipient's zone/);
  });

  describe("property: never outside the strictest window, never later than the first allowed minute", () => {
    const ZONES = [
      "America/New_York",
      "America/Chicago",
      "America/Denver",
      "America/Phoenix",
      "America/Los_Angeles",
      "America/Anchorage",
      "Pacific/Honolulu",
      "America/Halifax",
      "America/St_Johns",
      "America/Toronto",
      "America/Vancouver",
    ];
    /** The UTC midnight of every local day on which one of the zones changes its offset, 2026 and 2027, by luxon. */
    const transitions: number[] = [];
    for (const zone of ZONES)
      for (let d = DateTime.fromISO("2026-01-01", { zone }); d.year < 2028; d = d.plus({ days: 1 }))
        if (d.offset !== d.plus({ days: 1 }).offset) transitions.push(d.toUTC().startOf("day").toMillis());
    const AREA_CODES = Object.entries(AREA_CODE_SUBDIVISIONS).flatMap(([list, codes]) =>
      codes.split(" ").map((code) => ({ code, subdivisions: list.split(" ") })),
    );

    /** The jurisdictions of the presets for an area code's subdivisions, restated from the docs' rule. */
    function rulesFor(presets: LegalHoursPreset[], subdivisions: string[]): Jurisdiction[] {
      const out = new Set<Jurisdiction>();
      for (const preset of presets) {
        const country = preset.toUpperCase();
        const own = JURISDICTIONS.filter((j) => j.id === country || j.id.startsWith(`${country}-`));
        for (const s of subdivisions) {
          if (s === country) own.forEach((j) => out.add(j));
          else if (s.startsWith(`${country}-`))
            own.filter((j) => j.id === country || j.id === s).forEach((j) => out.add(j));
        }
      }
      return [...out];
    }

    /** Whether every rule allows the minute in every zone, by luxon (weekday 1 = Monday … 7 = Sunday). */
    function allowed(rules: Jurisdiction[], zones: string[], ms: number): boolean {
      for (const zone of zones) {
        const t = DateTime.fromMillis(ms, { zone });
        const minute = t.hour * 60 + t.minute;
        for (const j of rules) {
          const w = j.hours[t.weekday % 7];
          if (!w || minute < w.start || minute >= w.end) return false;
        }
      }
      return true;
    }

    it("holds for every area code of the map on every weekday of a DST week, at two hours, in one zone or two", () => {
      let checked = 0;
      AREA_CODES.forEach((area, i) => {
        const zones = [ZONES[i % ZONES.length], ZONES[(i * 7 + 3) % ZONES.length]];
        const day = transitions[i % transitions.length];
        const e164 = `+1${area.code}5550100`;
        {
          const presets = ([["us"], ["ca"], ["us", "ca"]] as LegalHoursPreset[][])[i % 3];
          const rules = rulesFor(presets, area.subdivisions);
          for (let d = -3; d <= 3; d++)
            for (const hour of [(i % 24) + 0.5, ((i + 12) % 24) + 0.25]) {
              const t = day + d * DAY + hour * 3_600_000;
              for (const zs of i % 2 ? [zones] : [zones.slice(0, 1)]) {
                const r = nextLegalInstant(t, legalCandidates(presets, zs, e164));
                assert.ok(r !== null && r >= t && allowed(rules, zs, r), `${e164} ${zs} ${new Date(t).toISOString()}`);
                checked++;
              }
            }
        }
      });
      assert.ok(checked >= 400 * 7 * 2, `${checked}`);
    });

    it(`holds over every area code, weekday and DST date (${RUNS} runs)`, () => {
      // 9 of the zones kept DST in 2026–27 by tzdata 2025c (Node 20); 2026e (Node 24) has America/Vancouver stay on
      // UTC-7 from 2026-03-08 (British Columbia's permanent daylight time), so the count is the data's, not fixed.
      assert.ok(transitions.length >= 32, `${transitions.length} transition days`);
      const arb = fc.record({
        area: fc.constantFrom(...AREA_CODES),
        zones: fc.uniqueArray(fc.constantFrom(...ZONES), { minLength: 1, maxLength: 2 }),
        day: fc.constantFrom(...transitions),
        // -3 to +4 days around the change, so every weekday comes.
        minutes: fc.integer({ min: -3 * 1440, max: 4 * 1440 }),
        seconds: fc.integer({ min: 0, max: 59 }),
        presets: fc.constantFrom<LegalHoursPreset[]>(["us"], ["ca"], ["us", "ca"]),
        step: fc.integer({ min: 0, max: 3 }),
        // One run in five has no number: every jurisdiction of the presets applies.
        known: fc.integer({ min: 0, max: 4 }).map((n) => n > 0),
      });
      fc.assert(
        fc.property(arb, ({ area, zones, day, minutes, seconds, presets, step, known }) => {
          const t = day + minutes * MINUTE + seconds * 1000;
          const e164 = known ? `+1${area.code}5550100` : undefined;
          const rules = rulesFor(presets, known ? area.subdivisions : presets.map((p) => p.toUpperCase()));
          const r = nextLegalInstant(t, legalCandidates(presets, zones, e164));
          assert.notEqual(r, null, `no instant for ${e164} in ${zones}`);
          assert.ok(r! >= t);
          assert.ok(allowed(rules, zones, r!), `${e164} ${zones}: ${new Date(r!).toISOString()} is outside`);
          // On one run in four, every whole minute from t to r is outside (r is the first allowed one).
          if (step === 0 && r! > t) {
            const first = Math.ceil(t / MINUTE) * MINUTE;
            if (t % MINUTE !== 0) assert.ok(!allowed(rules, zones, t), "t's own minute was allowed");
            for (let m = first; m < r!; m += MINUTE)
              assert.ok(
                !allowed(rules, zones, m),
                `${e164} ${zones}: ${new Date(m).toISOString()} was allowed, before ${new Date(r!).toISOString()}`,
              );
          }
          assert.ok(r! - t <= 8 * DAY);
        }),
        { numRuns: RUNS },
      );
    });
  });
});
