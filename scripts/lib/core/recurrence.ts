/**
 * Recurring sends (`--every`): when a cron schedule of infra/plan-row.ts's four shapes fires in a zone, as EventBridge
 * Scheduler evaluates it (https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html, "Daylight
 * savings time"): at the local hour and minute on each matching local date; a time that does not exist that day
 * (spring forward) is skipped; one that happens twice (fall back) fires once, taken here as the earlier instant; a
 * month without day D has no monthly:D send (cron's rule). Invocations are limited to [StartDate, EndDate).
 * Pure: no AWS, no I/O.
 */
import { Recurrence, RecurringTime } from "../../../infra/plan-row";
import type { LocalDate } from "./send-rules";
import { addDays, localTimeOf, zonedInstant } from "./send-time";

const DAY = 86_400_000;

/** Whether the recurrence fires on a local date. */
export function firesOn(r: Recurrence, d: LocalDate): boolean {
  const weekday = new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();
  switch (r.kind) {
    case "daily":
      return true;
    case "weekdays":
      return weekday >= 1 && weekday <= 5;
    case "weekly":
      return r.days.includes(weekday);
    case "monthly":
      return d.day === r.day;
  }
}

/**
 * The instants, ascending, at which a recurring schedule in `zone` fires in [fromMs, toMs), at most `limit` of them.
 * Walks local dates: a span of years is a few thousand steps.
 */
export function occurrences(t: RecurringTime, zone: string, fromMs: number, toMs: number, limit = Infinity): number[] {
  const out: number[] = [];
  // From the local date of `fromMs` a day early (an offset change cannot move a date by more), to a day after `toMs`.
  let date = addDays({ ...localTimeOf(zone, fromMs), hour: t.hour, minute: t.minute }, -1);
  const lastDay = Math.floor(toMs / DAY) + 2;
  while (out.length < limit && Date.UTC(date.year, date.month - 1, date.day) / DAY <= lastDay) {
    if (firesOn(t.recurrence, date)) {
      const { utcMs, fold } = zonedInstant(zone, date);
      if (fold !== "gap" && utcMs >= fromMs && utcMs < toMs) out.push(utcMs);
    }
    date = addDays(date, 1);
  }
  return out;
}

/** The next time it fires at or after `fromMs` and before `toMs`, or undefined when it never does. */
export function nextOccurrence(t: RecurringTime, zone: string, fromMs: number, toMs: number): number | undefined {
  return occurrences(t, zone, fromMs, toMs, 1)[0];
}

/** `--until D` in a zone: the instant of local midnight after D (a midnight in a DST gap moves forward by the gap). */
export function endOfLocalDate(zone: string, until: LocalDate): number {
  return zonedInstant(zone, { ...addDays({ ...until, hour: 0, minute: 0 }, 1) }).utcMs;
}

/**
 * How far ahead of the start the flexible window is sized. The sends of one local date span 26 hours of UTC (UTC+14
 * to UTC-12), and a window is at most 24 hours: two weeks always hold one whole week of occurrences with the days
 * before and after each (a day's block of sends is complete, with its neighbours); two months always hold one whole
 * month's block of a monthly send (a month without day D has none, and the next has one).
 */
export function sizingSpanDays(r: Recurrence): number {
  return r.kind === "monthly" ? 62 : 14;
}

/** "every Monday and Thursday at 09:00 local until 2027-01-31", for summaries. */
export function describeRecurrence(t: RecurringTime, until: LocalDate): string {
  const names = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
  const r = t.recurrence;
  const days =
    r.kind === "daily"
      ? "every day"
      : r.kind === "weekdays"
        ? "every weekday (Monday to Friday)"
        : r.kind === "weekly"
          ? `every ${[...r.days]
              .sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7))
              .map((d) => names[d])
              .join(", ")}`
          : `on day ${r.day} of every month${r.day > 28 ? ` (none in months without day ${r.day})` : ""}`;
  const p2 = (n: number) => String(n).padStart(2, "0");
  return `${days} at ${p2(t.hour)}:${p2(t.minute)} local until ${until.year}-${p2(until.month)}-${p2(until.day)}`;
}
