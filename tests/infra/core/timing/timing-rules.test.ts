/**
 * Base rules, missed time and quiet time, against instants computed independently with Python's zoneinfo, e.g.
 *   python3 -c "from datetime import *; from zoneinfo import ZoneInfo as Z;
 *     print(datetime(2026,11,14,10,0,tzinfo=Z('America/New_York')).astimezone(timezone.utc))"
 * (a nonexistent local time with fold=0 takes the offset before the change: Python's "moved forward by the gap").
 */
import * as assert from "assert";
import { DateTime } from "luxon";
import * as fc from "fast-check";
import { endOfQuietTime, isQuiet, QuietTime } from "../../../../infra/core/timing/quiet-time";
import { endOfQuietWindow } from "../../../../infra/core/timing/promises";
import { SendDecider } from "../../../../scripts/lib/planning/decisions";
import { MissedRule } from "../../../../scripts/lib/planning/missed";
import { BaseRule, firstSend, parseInstant, reduceAfter, RowTiming } from "../../../../infra/core/timing/send-rules";
import { Step } from "../../../../infra/core/timing/send-time";

const iso = (ms: number) => new Date(ms).toISOString();
const MINUTE = 60_000;
/** Quiet hours as `length` minutes from local minute `start` (wrapping midnight), by plain arithmetic. */
const inQuietLuxon = (start: number, length: number, minuteOfDay: number) =>
  (minuteOfDay - start + 1440) % 1440 < length;
const LONG_AGO = Date.parse("2020-01-01T00:00:00Z");
const onTime: MissedRule = { policy: "skip", graceMinutes: 60, cutoffMs: LONG_AGO };

function first(rule: BaseRule, zone: string, row: RowTiming = {}) {
  const r = firstSend(rule, zone, row);
  if ("reason" in r) return r;
  return { utc: iso(r.utcMs), fold: r.fold };
}

/** A decider for one rule; `zone` is used as the default zone (rows pass no zone of their own). */
function timer(rule: BaseRule, steps: Step[], missed: MissedRule, quiet?: QuietTime) {
  return { rule, steps, missed, quiet };
}

function times(rules: ReturnType<typeof timer>, zone: string, row: RowTiming = {}) {
  const d = new SendDecider({ ...rules, defaultZone: zone }).decide(zone, row);
  if (d.reject) throw new Error(d.reject.text);
  return d.steps.map((s) =>
    s.time
      ? { utc: iso(s.time.utcMs), send_at: s.time.send_at, tz: s.time.timezone, quiet: s.quiet, missed: s.outcome }
      : { quiet: s.quiet, missed: s.outcome },
  );
}

const date = (d: string) => {
  const [year, month, day] = d.split("-").map(Number);
  return { year, month, day };
};
const STEP1: Step = { number: 1, days: 0 };

describe("timing rules", () => {
  describe("base rules", () => {
    it("--date with the row's send_hour and send_minute (best hour per recipient)", () => {
      const rule: BaseRule = { kind: "date", date: date("2026-12-01"), hour: 9, minute: 0 };
      // 2026-12-01 18:45 in Asia/Tokyo (+09:00) = 09:45Z
      assert.deepStrictEqual(first(rule, "Asia/Tokyo", { sendHour: "18", sendMinute: "45" }), {
        utc: "2026-12-01T09:45:00.000Z",
        fold: "exact",
      });
      // an empty send_hour keeps --hour: 09:00 EST = 14:00Z
      assert.deepStrictEqual(first(rule, "America/New_York", { sendHour: "", sendMinute: "" }), {
        utc: "2026-12-01T14:00:00.000Z",
        fold: "exact",
      });
    });
    it("rejects a bad send_hour, send_minute or send_at as invalid-send-time", () => {
      const rule: BaseRule = { kind: "date", date: date("2026-12-01"), hour: 9, minute: 0 };
      for (const row of [
        { sendHour: "24" },
        { sendHour: "9am" },
        { sendMinute: "60" },
        { sendAt: "2026-12-01 09:00" },
        { sendAt: "2026-12-01T09:00Z" },
        { sendAt: "2026-02-30T09:00" },
      ])
        assert.strictEqual(
          (first(rule, "UTC", row) as { reason: string }).reason,
          "invalid-send-time",
          JSON.stringify(row),
        );
    });
    it("send_at is local time in the row's zone and replaces any rule", () => {
      const at: BaseRule = { kind: "at", utcMs: Date.parse("2026-11-26T14:00:00Z") };
      // 2026-12-24 08:30 in Australia/Sydney (+11:00) = 2026-12-23T21:30Z
      assert.deepStrictEqual(first(at, "Australia/Sydney", { sendAt: "2026-12-24T08:30" }), {
        utc: "2026-12-23T21:30:00.000Z",
        fold: "exact",
      });
    });
    it("--after COLUMN:+30d across a DST change keeps the local hour", () => {
      const rule: BaseRule = { kind: "after", column: "last_login", days: 30, hour: 10, minute: 0 };
      // a date: 2026-10-15 + 30 d = 2026-11-14 10:00 EST (after the 1 Nov change) = 15:00Z
      assert.deepStrictEqual(first(rule, "America/New_York", { after: "2026-10-15" }), {
        utc: "2026-11-14T15:00:00.000Z",
        fold: "exact",
      });
      // an instant: 2026-02-20 + 30 d = 2026-03-22 10:00 EDT (after the 8 March change) = 14:00Z
      assert.deepStrictEqual(first(rule, "America/New_York", { after: "2026-02-20T12:00:00Z" }), {
        utc: "2026-03-22T14:00:00.000Z",
        fold: "exact",
      });
    });
    it("--after +Nd takes the instant's local date in the row's zone, not its UTC date", () => {
      const rule: BaseRule = { kind: "after", column: "last_login", days: 30, hour: 10, minute: 0 };
      // 2026-03-02T03:30Z is 2026-03-01 19:30 in Los Angeles: +30 d = 2026-03-31 10:00 PDT = 17:00Z (not 1 April)
      for (const after of [
        "2026-03-02T03:30:00Z",
        "2026-03-01T22:30:00-05:00",
        "2026-03-02 03:30:00.999+00",
        "2026-03-02T0330",
      ])
        if (after.endsWith("0330"))
          assert.strictEqual(
            (first(rule, "America/Los_Angeles", { after }) as { reason: string }).reason,
            "invalid-date",
          );
        else
          assert.deepStrictEqual(
            first(rule, "America/Los_Angeles", { after }),
            { utc: "2026-03-31T17:00:00.000Z", fold: "exact" },
            after,
          );
    });
    it("--after +Nh: hours after the instant (seconds round up), a date meaning local midnight", () => {
      const rule: BaseRule = { kind: "after", column: "cart_abandoned_at", hours: 2 };
      assert.deepStrictEqual(first(rule, "Europe/Paris", { after: "2026-12-01T14:05:30.250Z" }), {
        utc: "2026-12-01T16:06:00.000Z",
        fold: "exact",
      });
      // midnight EST 2026-03-08 = 05:00Z; +2 h = 07:00Z (03:00 EDT: the gap lies in between)
      assert.deepStrictEqual(first(rule, "America/New_York", { after: "2026-03-08" }), {
        utc: "2026-03-08T07:00:00.000Z",
        fold: "exact",
      });
    });
    it("a value without an offset, empty or malformed is invalid-date naming the column", () => {
      const rule: BaseRule = { kind: "after", column: "last_login", days: 30, hour: 10, minute: 0 };
      const cases: [string, RegExp][] = [
        ["2026-03-02T03:30:00", /^last_login "2026-03-02T03:30:00" is a time without Z or an offset/],
        ["", /^last_login "" is empty/],
        ["03/02/2026", /^last_login "03\/02\/2026" is not a date/],
        ["2026-02-29", /is not a date/],
        ["2026-03-02T25:00Z", /is not a date/],
      ];
      for (const [after, text] of cases) {
        const r = first(rule, "UTC", { after }) as { reason: string; text: string };
        assert.strictEqual(r.reason, "invalid-date");
        assert.match(r.text, text);
      }
    });
    it("--at is one instant for everyone; a local time that happens twice is written in UTC", () => {
      const rule: BaseRule = { kind: "at", utcMs: Date.parse("2026-11-26T14:00:00Z") };
      const rules = timer(rule, [STEP1, { number: 2, days: 1 }], onTime);
      assert.deepStrictEqual(times(rules, "Asia/Kolkata")[0], {
        utc: "2026-11-26T14:00:00.000Z",
        send_at: "2026-11-26T19:30:00",
        tz: "Asia/Kolkata",
        quiet: "none",
        missed: "planned",
      });
      // 2026-11-01 01:30 happens twice in New York; 05:30Z is the first (EDT)
      const ambiguous = timer({ kind: "at", utcMs: Date.parse("2026-11-01T05:30:00Z") }, [STEP1], onTime);
      assert.deepStrictEqual(times(ambiguous, "America/New_York")[0], {
        utc: "2026-11-01T05:30:00.000Z",
        send_at: "2026-11-01T05:30:00",
        tz: "UTC",
        quiet: "none",
        missed: "planned",
      });
    });
    it("parses ISO instants with Z, offsets and fractions", () => {
      assert.strictEqual(parseInstant("2026-11-26T09:00-05:00"), Date.parse("2026-11-26T14:00:00Z"));
      assert.strictEqual(parseInstant("2026-11-26T19:30+0530"), Date.parse("2026-11-26T14:00:00Z"));
      assert.strictEqual(parseInstant("2026-11-26T14:00:00.5z"), Date.parse("2026-11-26T14:00:00.500Z"));
      // Past the millisecond a fraction rounds up (a send is never early); to the millisecond it is exact.
      assert.strictEqual(parseInstant("2027-03-14T05:00:00.0000001Z"), Date.parse("2027-03-14T05:00:00.001Z"));
      assert.strictEqual(parseInstant("2027-03-14T05:00:00.123000000Z"), Date.parse("2027-03-14T05:00:00.123Z"));
      assert.strictEqual(parseInstant("2027-03-14T05:00:00.123Z"), Date.parse("2027-03-14T05:00:00.123Z"));
      const twoHours: BaseRule = { kind: "after", column: "cart_abandoned_at", hours: 2 };
      assert.deepStrictEqual(first(twoHours, "UTC", { after: "2027-03-14T05:00:00.0000001Z" }), {
        utc: "2027-03-14T07:01:00.000Z",
        fold: "exact",
      });
      assert.strictEqual(parseInstant("2026-11-26T14:00"), "no-offset");
      assert.strictEqual(parseInstant("2026-11-26T14:00+25:00"), undefined);
      assert.strictEqual(parseInstant("tomorrow"), undefined);
    });
    it("reads the common date and instant forms of an --after column by hand, the same as the general parsers", () => {
      const hours = { kind: "after", column: "c", hours: 1 } as const;
      const days = { kind: "after", column: "c", days: 1, hour: 9, minute: 0 } as const;
      // Dates stay dates, leap days checked; instants round up to the minute (expected values from Date.parse).
      assert.strictEqual(reduceAfter(hours, "UTC", " 2024-02-29 "), "2024-02-29");
      const minuteAfter = (iso: string) => new Date(Math.ceil(Date.parse(iso) / 60_000) * 60_000).toISOString();
      for (const iso of [
        "2026-10-05T10:00:00Z",
        "2026-10-05T10:00:00.007Z",
        "2026-12-31T23:59:59.999Z",
        "2026-10-05T10:00:00.000Z",
      ])
        assert.strictEqual(reduceAfter(hours, "UTC", iso), minuteAfter(iso), iso);
      // +Nd reads the local date: 02:30Z on Oct 5 is Oct 4 in Los Angeles.
      assert.strictEqual(reduceAfter(days, "America/Los_Angeles", "2026-10-05T02:30:00.250Z"), "2026-10-04");
      const invalid = (v: string) => (reduceAfter(hours, "UTC", v) as { reason: string }).reason;
      for (const bad of [
        "2026-02-29",
        "2026-13-01",
        "2026-10-05T24:00:00Z",
        "2026-10-05T10:60:00.000Z",
        "2026-10-05T10:00:00",
      ])
        assert.strictEqual(invalid(bad), "invalid-date", bad);
    });
  });

  describe("quiet time", () => {
    const night: QuietTime = { hours: { start: 21 * 60, end: 8 * 60 }, days: [], policy: "delay" };
    it("start inclusive, end exclusive, across midnight", () => {
      // Europe/London is UTC+0 in December
      assert.strictEqual(isQuiet(night, "Europe/London", Date.parse("2026-12-01T20:59:00Z")), false);
      assert.strictEqual(isQuiet(night, "Europe/London", Date.parse("2026-12-01T21:00:00Z")), true);
      assert.strictEqual(isQuiet(night, "Europe/London", Date.parse("2026-12-02T07:59:00Z")), true);
      assert.strictEqual(isQuiet(night, "Europe/London", Date.parse("2026-12-02T08:00:00Z")), false);
    });
    it("22:30 with 21:00-08:00 → 08:00 the next day; 03:00 → 08:00 the same day", () => {
      assert.strictEqual(
        iso(endOfQuietTime(night, "Europe/London", Date.parse("2026-12-01T22:30:00Z"))!.utcMs),
        "2026-12-02T08:00:00.000Z",
      );
      // 03:00 in Tokyo (+09:00) on 12-02 = 12-01T18:00Z → 08:00 Tokyo = 12-01T23:00Z
      assert.strictEqual(
        iso(endOfQuietTime(night, "Asia/Tokyo", Date.parse("2026-12-01T18:00:00Z"))!.utcMs),
        "2026-12-01T23:00:00.000Z",
      );
      assert.strictEqual(endOfQuietTime(night, "Europe/London", Date.parse("2026-12-01T12:00:00Z")), undefined);
    });
    it("a quiet day followed by quiet hours: Friday 22:30 → Sunday 08:00 with SAT quiet", () => {
      const q: QuietTime = { ...night, days: [6] };
      // Fri 2026-12-04 22:30 CET = 21:30Z; Sun 2026-12-06 08:00 CET = 07:00Z
      assert.strictEqual(
        iso(endOfQuietTime(q, "Europe/Paris", Date.parse("2026-12-04T21:30:00Z"))!.utcMs),
        "2026-12-06T07:00:00.000Z",
      );
    });
    it("a quiet end inside a spring-forward gap is the gap's end: the instant the clock jumps past it", () => {
      const q: QuietTime = { hours: { start: 22 * 60, end: 2 * 60 + 30 }, days: [], policy: "delay" };
      // 2026-03-07 23:00 EST = 03-08T04:00Z; 02:30 does not exist on 03-08: at 07:00Z the clock jumps from 01:59 EST
      // to 03:00 EDT, past 02:30, so 07:00Z is the first minute that is not quiet (python3 zoneinfo).
      const end = endOfQuietTime(q, "America/New_York", Date.parse("2026-03-08T04:00:00Z"))!;
      assert.deepStrictEqual(
        { utc: iso(end.utcMs), fold: end.fold },
        { utc: "2026-03-08T07:00:00.000Z", fold: "exact" },
      );
    });
    it("Europe/London 00:45 with 22:30-01:50 on 2026-03-29 → 01:00Z (02:00 BST), not 01:50Z (02:50 BST)", () => {
      const q: QuietTime = { hours: { start: 22 * 60 + 30, end: 60 + 50 }, days: [], policy: "delay" };
      // python3 zoneinfo: 00:55Z is 00:55 GMT (quiet), 01:00Z is 02:00 BST (free)
      const end = endOfQuietTime(q, "Europe/London", Date.parse("2026-03-29T00:45:00Z"))!;
      assert.deepStrictEqual(
        { utc: iso(end.utcMs), fold: end.fold },
        { utc: "2026-03-29T01:00:00.000Z", fold: "exact" },
      );
      assert.strictEqual(
        iso(endOfQuietWindow(q, "Europe/London", Date.parse("2026-03-29T00:45:00Z"), 1)!.utcMs),
        "2026-03-29T01:00:00.000Z",
      );
    });
    it("America/New_York 01:59 EDT with 01:59-02:00 on the fall-back night → 06:00Z (01:00 EST), not 07:00Z (02:00 EST)", () => {
      // The property's counterexample. python3 zoneinfo: 05:59Z is 01:59 EDT (quiet); at 06:00Z the clock is set back
      // to 01:00 EST (free), before the quiet end's 02:00 EST (07:00Z). 01:00 repeats that night: an overlap, in UTC.
      const q: QuietTime = { hours: { start: 119, end: 120 }, days: [], policy: "delay" };
      const end = endOfQuietTime(q, "America/New_York", Date.parse("2026-11-01T05:59:00Z"))!;
      assert.deepStrictEqual(
        { utc: iso(end.utcMs), fold: end.fold },
        { utc: "2026-11-01T06:00:00.000Z", fold: "overlap" },
      );
    });
    it("Pacific/Chatham Sat 23:15 with 00:00-02:59 + MON and a 138-minute window → 14:00Z (03:45 CHADT)", () => {
      const q: QuietTime = { hours: { start: 0, end: 2 * 60 + 59 }, days: [1], policy: "delay" };
      // python3 zoneinfo: 2026-09-26 23:15 +12:45 = 10:30Z; its window reaches Sunday 00:00 (quiet); 02:59 Sunday does
      // not exist (13:59Z is 02:44 +12:45, 14:00Z is 03:45 +13:45); [14:00Z, 16:18Z) is Sunday 03:45-06:03, free.
      const end = endOfQuietWindow(q, "Pacific/Chatham", Date.parse("2026-09-26T10:30:00Z"), 138)!;
      assert.strictEqual(iso(end.utcMs), "2026-09-26T14:00:00.000Z");
    });
    it("property: the end of quiet time is the first minute that is not quiet (luxon), DST changes included", () => {
      const zones = [
        "Europe/London",
        "America/New_York",
        "Pacific/Chatham",
        "Australia/Lord_Howe",
        "America/Santiago",
        "Asia/Tehran",
      ];
      fc.assert(
        fc.property(
          fc.constantFrom(...zones),
          // around 2026's changes: every start minute of the year, weighted to nothing in particular
          fc.integer({ min: 0, max: 365 * 1440 - 1 }),
          fc.integer({ min: 0, max: 1439 }),
          fc.integer({ min: 1, max: 360 }),
          (zone, minute, start, length) => {
            const q: QuietTime = { hours: { start, end: (start + length) % 1440 }, days: [], policy: "delay" };
            // Start inside the quiet period, in local terms, so that most cases move (DST days are the interesting ones).
            const from = Date.UTC(2026, 0, 1) + minute * MINUTE;
            const quietByLuxon = (ms: number) => {
              const t = DateTime.fromMillis(ms, { zone });
              return inQuietLuxon(start, length, t.hour * 60 + t.minute);
            };
            const end = endOfQuietTime(q, zone, from);
            if (!quietByLuxon(from)) return assert.strictEqual(end, undefined);
            assert.ok(end && !quietByLuxon(end.utcMs), `${zone} ${iso(from)}: ${end && iso(end.utcMs)} is quiet`);
            for (let m = from; m < end.utcMs; m += MINUTE)
              assert.ok(quietByLuxon(m), `${zone} ${iso(from)}: ${iso(m)} is free before ${iso(end.utcMs)}`);
          },
        ),
        { numRuns: 300 },
      );
    });
    it("property: on 2026's DST days, the end of quiet time is the first minute that is not quiet (luxon)", () => {
      // [zone, the UTC instant of a 2026 change] from python3 zoneinfo; quiet periods around the change.
      const changes: [string, string][] = [
        ["Europe/London", "2026-03-29T01:00:00Z"],
        ["Europe/London", "2026-10-25T01:00:00Z"],
        ["America/New_York", "2026-03-08T07:00:00Z"],
        ["America/New_York", "2026-11-01T06:00:00Z"],
        ["Pacific/Chatham", "2026-09-26T14:00:00Z"],
        ["Pacific/Chatham", "2026-04-04T14:00:00Z"],
        ["Australia/Lord_Howe", "2026-10-03T15:30:00Z"],
        ["America/Santiago", "2026-09-06T04:00:00Z"],
      ];
      fc.assert(
        fc.property(
          fc.constantFrom(...changes),
          fc.integer({ min: -300, max: 60 }),
          fc.integer({ min: -180, max: 180 }),
          fc.integer({ min: 1, max: 300 }),
          ([zone, change], fromOffset, endOffset, length) => {
            // A quiet period that ends near the change's local wall clock (in a gap, an overlap or beside them).
            const local = DateTime.fromISO(change, { zone });
            const endMinute = (((local.hour * 60 + local.minute + endOffset) % 1440) + 1440) % 1440;
            const start = (((endMinute - length) % 1440) + 1440) % 1440;
            const q: QuietTime = { hours: { start, end: endMinute }, days: [], policy: "delay" };
            const from = Date.parse(change) + fromOffset * MINUTE;
            const quietByLuxon = (ms: number) => {
              const t = DateTime.fromMillis(ms, { zone });
              return inQuietLuxon(start, length, t.hour * 60 + t.minute);
            };
            const end = endOfQuietTime(q, zone, from);
            if (!quietByLuxon(from)) return assert.strictEqual(end, undefined);
            assert.ok(
              end && !quietByLuxon(end.utcMs),
              `${zone} ${iso(from)} ${JSON.stringify(q.hours)}: ${end && iso(end.utcMs)} is quiet`,
            );
            for (let m = from; m < end.utcMs; m += MINUTE)
              assert.ok(
                quietByLuxon(m),
                `${zone} ${iso(from)} ${JSON.stringify(q.hours)}: ${iso(m)} is free before ${iso(end.utcMs)}`,
              );
          },
        ),
        { numRuns: 300 },
      );
    });
    it("when a DST gap takes the week's only free hour, the send waits for the next week's", () => {
      // Free only on Sundays, 02:00-03:00 local. From Sun 2027-03-07 15:00 EST (20:00Z): Sun 03-14 02:00 does not
      // exist (clocks go to 03:00 EDT, quiet again), so Sun 03-21 02:00 EDT = 06:00Z. Sixteen moves and more.
      const q: QuietTime = { hours: { start: 3 * 60, end: 2 * 60 }, days: [1, 2, 3, 4, 5, 6], policy: "delay" };
      assert.strictEqual(
        iso(endOfQuietTime(q, "America/New_York", Date.parse("2027-03-07T20:00:00Z"))!.utcMs),
        "2027-03-21T06:00:00.000Z",
      );
    });
    it("in the second pass of a fall-back hour, the quiet end is the later instant, never earlier than the send", () => {
      const q: QuietTime = { hours: { start: 60, end: 90 }, days: [], policy: "delay" };
      // 01:10 EST on 2026-11-01 = 06:10Z (the second 01:10); 01:30 EST = 06:30Z (01:30 EDT = 05:30Z is in the past)
      assert.strictEqual(
        iso(endOfQuietTime(q, "America/New_York", Date.parse("2026-11-01T06:10:00Z"))!.utcMs),
        "2026-11-01T06:30:00.000Z",
      );
    });
  });

  describe("per row: base rule → missed time → quiet time", () => {
    const night: QuietTime = { hours: { start: 21 * 60, end: 8 * 60 }, days: [], policy: "delay" };
    it("a 36-hour step counts from step 1's time before quiet hours delayed it", () => {
      const rules = timer(
        { kind: "date", date: date("2026-12-01"), hour: 9, minute: 0 },
        [STEP1, { number: 2, hours: 36 }],
        onTime,
        night,
      );
      // send_at 2026-12-01 22:30 London → step 1 at 12-02 08:00Z; step 2 = 22:30 + 36 h = 12-03T10:30Z (not 20:00)
      assert.deepStrictEqual(times(rules, "Europe/London", { sendAt: "2026-12-01T22:30" }), [
        {
          utc: "2026-12-02T08:00:00.000Z",
          send_at: "2026-12-02T08:00:00",
          tz: "Europe/London",
          quiet: "delayed",
          missed: "planned",
        },
        {
          utc: "2026-12-03T10:30:00.000Z",
          send_at: "2026-12-03T10:30:00",
          tz: "Europe/London",
          quiet: "none",
          missed: "planned",
        },
      ]);
    });
    it("skip drops quiet steps only", () => {
      const rules = timer(
        { kind: "date", date: date("2026-12-01"), hour: 22, minute: 0 },
        [STEP1, { number: 2, hours: 12 }],
        onTime,
        {
          ...night,
          policy: "skip",
        },
      );
      assert.deepStrictEqual(times(rules, "UTC"), [
        { quiet: "skipped", missed: "planned" },
        {
          utc: "2026-12-02T10:00:00.000Z",
          send_at: "2026-12-02T10:00:00",
          tz: "UTC",
          quiet: "none",
          missed: "planned",
        },
      ]);
    });
    it("a send-now lands in quiet hours and is delayed, in the recipient's zone", () => {
      const cutoff = Date.parse("2026-12-01T13:00:30Z");
      const rules = timer(
        { kind: "date", date: date("2026-12-01"), hour: 13, minute: 0 },
        [STEP1],
        { policy: "send-now", graceMinutes: 60, cutoffMs: cutoff },
        night,
      );
      // 13:00 London = 13:00Z is 30 s before the cutoff → send-now at 13:01Z (written in UTC), not quiet in London.
      assert.deepStrictEqual(times(rules, "Europe/London"), [
        {
          utc: "2026-12-01T13:01:00.000Z",
          send_at: "2026-12-01T13:01:00",
          tz: "UTC",
          quiet: "none",
          missed: "sent-now",
        },
      ]);
      // --at 12:30Z, 30.5 min late → send-now at 13:01Z; in Asia/Tokyo (+09:00) that is 22:01, quiet: delayed to 08:00 Tokyo on 12-02 = 12-01T23:00Z
      const late = timer(
        { kind: "at", utcMs: Date.parse("2026-12-01T12:30:00Z") },
        [STEP1],
        { policy: "send-now", graceMinutes: 60, cutoffMs: cutoff },
        night,
      );
      assert.deepStrictEqual(times(late, "Asia/Tokyo"), [
        {
          utc: "2026-12-01T23:00:00.000Z",
          send_at: "2026-12-02T08:00:00",
          tz: "Asia/Tokyo",
          quiet: "delayed",
          missed: "sent-now",
        },
      ]);
    });
    it("next-day repeats the requested local time, then quiet time applies", () => {
      const cutoff = Date.parse("2026-12-01T12:00:00Z");
      const rules = timer(
        { kind: "date", date: date("2026-12-01"), hour: 7, minute: 30 },
        [STEP1],
        { policy: "next-day", graceMinutes: 60, cutoffMs: cutoff },
        night,
      );
      // 07:30 London 12-01 is missed → 12-02 07:30, quiet (before 08:00) → 08:00Z
      assert.deepStrictEqual(times(rules, "Europe/London"), [
        {
          utc: "2026-12-02T08:00:00.000Z",
          send_at: "2026-12-02T08:00:00",
          tz: "Europe/London",
          quiet: "delayed",
          missed: "next-day",
        },
      ]);
    });
    it("never answers a row from another row's cached decision when it needs another instant", () => {
      // Rows that share a zone, a date, an hour or the key's number with an earlier row but need another instant,
      // decided in this order, twice (the second time from the cache). Expected instants from luxon's own date math.
      const longBefore = { ...onTime, cutoffMs: Date.UTC(1960, 0, 1) };
      const step1 = (rule: BaseRule) =>
        new SendDecider({ rule, steps: [STEP1], missed: longBefore, defaultZone: "UTC" });
      const local = (zone: string, text: string) => DateTime.fromISO(text, { zone });
      const days = step1({ kind: "after", column: "last_login", days: 30, hour: 10, minute: 0 });
      const hours = step1({ kind: "after", column: "last_login", hours: 2 });
      const best = step1({ kind: "date", date: date("2026-12-01"), hour: 9, minute: 0 });
      const rows: [SendDecider, string, RowTiming, DateTime][] = [
        [
          days,
          "Asia/Kolkata",
          { after: "2026-10-15", sendHour: "" },
          local("Asia/Kolkata", "2026-10-15T10:00").plus({ days: 30 }),
        ],
        // the same values in a zone 15 minutes away
        [
          days,
          "Asia/Kathmandu",
          { after: "2026-10-15", sendHour: "" },
          local("Asia/Kathmandu", "2026-10-15T10:00").plus({ days: 30 }),
        ],
        // the same date, the row's own hour and minute
        [
          days,
          "Asia/Kolkata",
          { after: "2026-10-15", sendHour: "9" },
          local("Asia/Kolkata", "2026-10-15T09:00").plus({ days: 30 }),
        ],
        [
          days,
          "Asia/Kolkata",
          { after: "2026-10-15", sendHour: "9", sendMinute: "30" },
          local("Asia/Kolkata", "2026-10-15T09:30").plus({ days: 30 }),
        ],
        [
          days,
          "Asia/Kolkata",
          { after: "2026-10-15", sendHour: "09", sendMinute: "30" },
          local("Asia/Kolkata", "2026-10-15T09:30").plus({ days: 30 }),
        ],
        // an instant whose local date is the next UTC day's (01:30 IST on the 15th), and one still on the 14th (23:30)
        [
          days,
          "Asia/Kolkata",
          { after: "2026-10-14T20:00:00Z" },
          local("Asia/Kolkata", "2026-10-15T10:00").plus({ days: 30 }),
        ],
        [
          days,
          "Asia/Kolkata",
          { after: "2026-10-14T18:00:00Z" },
          local("Asia/Kolkata", "2026-10-14T10:00").plus({ days: 30 }),
        ],
        // the zone written in another case, and a zone whose +30d crosses the end of DST
        [days, "asia/kolkata", { after: "2026-10-15" }, local("Asia/Kolkata", "2026-10-15T10:00").plus({ days: 30 })],
        [
          days,
          "America/New_York",
          { after: "2026-10-15" },
          local("America/New_York", "2026-10-15T10:00").plus({ days: 30 }),
        ],
        // +Nh: a date is local midnight, not the instant at UTC midnight; instants round up to the minute
        [
          hours,
          "America/New_York",
          { after: "2026-10-15" },
          local("America/New_York", "2026-10-15T00:00").plus({ hours: 2 }),
        ],
        [hours, "America/New_York", { after: "2026-10-15T00:00:00Z" }, local("UTC", "2026-10-15T02:00")],
        [hours, "America/New_York", { after: "2026-10-15T00:00:00.001Z" }, local("UTC", "2026-10-15T02:01")],
        [hours, "America/New_York", { after: "2026-10-15T00:01:00Z" }, local("UTC", "2026-10-15T02:01")],
        [hours, "America/New_York", { after: "2026-10-16T00:00:00Z" }, local("UTC", "2026-10-16T02:00")],
        // (the 14th minute of 1970 and its 14th day: one number apart in the key, never the same)
        [hours, "America/New_York", { after: "1970-01-01T00:14:00Z" }, local("UTC", "1970-01-01T02:14")],
        [
          hours,
          "America/New_York",
          { after: "1970-01-15" },
          local("America/New_York", "1970-01-15T00:00").plus({ hours: 2 }),
        ],
        // --date with a best hour per row, and a row's send_at (keyed by its text)
        [best, "Asia/Tokyo", { sendHour: "18", sendMinute: "45" }, local("Asia/Tokyo", "2026-12-01T18:45")],
        [best, "Asia/Tokyo", { sendHour: "18", sendMinute: "" }, local("Asia/Tokyo", "2026-12-01T18:00")],
        [best, "Asia/Tokyo", { sendHour: "", sendMinute: "45" }, local("Asia/Tokyo", "2026-12-01T09:45")],
        [best, "Asia/Tokyo", {}, local("Asia/Tokyo", "2026-12-01T09:00")],
        [
          best,
          "Asia/Tokyo",
          { sendAt: "2026-12-02T18:45", sendHour: "18", sendMinute: "45" },
          local("Asia/Tokyo", "2026-12-02T18:45"),
        ],
        [best, "Europe/London", { sendHour: "18", sendMinute: "45" }, local("Europe/London", "2026-12-01T18:45")],
      ];
      for (let pass = 0; pass < 2; pass++)
        for (const [decider, zone, row, expected] of rows) {
          const d = decider.decide(zone, row);
          assert.strictEqual(
            d.steps[0]?.time?.utc,
            expected.toUTC().toISO(),
            `${zone} ${JSON.stringify(row)} (pass ${pass + 1})`,
          );
        }
    });
    it("a send past 9999-12-31 (in UTC or in the zone) cannot be written in a schedule: the row is rejected, naming the step", () => {
      const deciderFor = (rule: BaseRule, steps: Step[] = [STEP1]) =>
        new SendDecider({ rule, steps, missed: onTime, defaultZone: "UTC" });
      const winback = deciderFor({ kind: "after", column: "last_login", days: 30, hour: 10, minute: 0 });
      // 9999-11-15 + 30 days = 9999-12-15 (November has 30 days): still writable
      assert.strictEqual(winback.decide("UTC", { after: "9999-11-15" }).steps[0].time?.send_at, "9999-12-15T10:00:00");
      assert.deepStrictEqual(winback.decide("UTC", { after: "9999-12-31T08:00:00Z" }).reject, {
        reason: "invalid-date",
        text: "last_login +30d at 10:00 local: step 1 falls after 9999-12-31, the last date a schedule can be written for",
      });
      const drip = deciderFor({ kind: "date", date: date("9999-12-30"), hour: 9, minute: 0 }, [
        STEP1,
        { number: 2, days: 999 },
      ]);
      assert.deepStrictEqual(drip.decide("Asia/Tokyo").reject, {
        reason: "invalid-send-time",
        text: "9999-12-30 09:00 local: step 2 falls after 9999-12-31, the last date a schedule can be written for",
      });
      // send_at 9999-12-31T23:30 is 09:30Z in Kiritimati (UTC+14) but 10000-01-01T07:30Z in Los Angeles (UTC-8)
      const own = deciderFor({ kind: "date", date: date("2026-12-01"), hour: 9, minute: 0 });
      assert.strictEqual(
        own.decide("Pacific/Kiritimati", { sendAt: "9999-12-31T23:30" }).steps[0].time?.utc,
        "9999-12-31T09:30:00.000Z",
      );
      assert.deepStrictEqual(own.decide("America/Los_Angeles", { sendAt: "9999-12-31T23:30" }).reject, {
        reason: "invalid-send-time",
        text: 'send_at "9999-12-31T23:30": step 1 falls after 9999-12-31, the last date a schedule can be written for',
      });
    });
    it("shares decisions between rows with the same zone and values, and reports invalid rows", () => {
      const timer = new SendDecider({
        rule: { kind: "after", column: "last_login", days: 30, hour: 10, minute: 0 },
        steps: [STEP1],
        missed: onTime,
        defaultZone: "UTC",
      });
      assert.strictEqual(
        timer.decide("UTC", { after: "2026-10-15" }).steps,
        timer.decide("UTC", { after: "2026-10-15" }).steps,
      );
      // +Nd reads only the local date: two logins on 2026-10-15 in UTC share one result
      assert.strictEqual(
        timer.decide("UTC", { after: "2026-10-15T08:00:00Z" }).steps,
        timer.decide("UTC", { after: "2026-10-15T23:59:59.9+00:00" }).steps,
      );
      assert.notStrictEqual(
        timer.decide("UTC", { after: "2026-10-15T08:00:00Z" }).steps,
        timer.decide("UTC", { after: "2026-10-16T00:00:00Z" }).steps,
      );
      assert.deepStrictEqual(timer.decide("UTC", { after: "soon" }).reject, {
        reason: "invalid-date",
        text: 'last_login "soon" is not a date YYYY-MM-DD or an ISO instant with Z or an offset',
      });
    });
  });
});

describe("the decider's answers", () => {
  it("rows whose zone is written two ways, taking turns, each get back their own answer, not a new one per row", () => {
    // What a row's answer carries (its zone as written, its notes) differs by spelling; the planner prepares a row's
    // lines once per answer, so an answer made anew for every row would be prepared anew for every row.
    const rule: BaseRule = { kind: "date", date: date("2026-12-10"), hour: 9, minute: 0 };
    const decider = new SendDecider({ rule, steps: [STEP1], missed: onTime, defaultZone: "UTC" });
    const row = { sendAt: "2026-12-11T09:00" };
    const first = {
      blank: decider.decide("", row),
      utc: decider.decide("UTC", row),
      lower: decider.decide("utc", row),
    };
    assert.strictEqual(first.blank.steps, first.utc.steps, "one computation for the zone and send_at");
    assert.notStrictEqual(first.blank, first.utc);
    for (let i = 0; i < 3; i++) {
      assert.strictEqual(decider.decide("", row), first.blank);
      assert.strictEqual(decider.decide("UTC", row), first.utc);
      assert.strictEqual(decider.decide("utc", row), first.lower);
    }
    assert.deepStrictEqual(first.blank.notes, ["no timezone: sent in UTC, the default zone"]);
  });
});
