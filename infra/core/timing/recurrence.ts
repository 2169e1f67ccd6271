/**
 * Recurring sends (`--every`): when a cron schedule of infra/core/plan/schedule-expression.ts's four shapes fires in a
 * zone, as EventBridge Scheduler evaluates it (https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html,
 * "Daylight savings time"): at the local hour and minute on each matching local date; a time that does not exist that day
 * (spring forward) is skipped; one that happens twice (fall back) fires once, taken here as the earlier instant; a
 * month without day D has no monthly:D send (cron's rule). Invocations are limited to [StartDate, EndDate).
 * Pure: no AWS, no I/O.
 */
import { Recurrence, RecurringTime, sayRecurrence } from "../plan/schedule-expression";
import { scheduler } from "../plan/quotas";
import { addDays, type LocalDate, localTimeOf, zonedInstant } from "./send-time";
import { zoneOffsets } from "./zone-offsets";

const DAY = 86_400_000;
const MINUTE = 60_000;

/**
 * The largest change of a zone's UTC offset between two days (Antarctica/Troll moves between UTC+0 and UTC+2; every
 * other zone by an hour or less): two occurrences one local day apart are at least a day less this apart.
 */
const MAX_OFFSET_CHANGE_MINUTES = 120;

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

/** The instants in [fromMs, toMs) at which `zone`'s offset changes, ascending (a few a year: one lookup per day). */
export function offsetChanges(zone: string, fromMs: number, toMs: number): number[] {
  const offsets = zoneOffsets(zone);
  const out: number[] = [];
  for (let day = Math.floor(fromMs / DAY); day <= Math.floor(toMs / DAY); day++) {
    const change = offsets.changeOn(day);
    if (change !== undefined && change >= fromMs && change < toMs) out.push(change);
  }
  return out;
}

/**
 * The occurrences in [fromMs, toMs) whose window [t, t + windowMinutes) holds one of `changes` (offsetChanges): the
 * nights the window's wall clock jumps. Every other occurrence's window covers the same local minutes.
 */
export function occurrencesAcross(
  t: RecurringTime,
  zone: string,
  changes: readonly number[],
  fromMs: number,
  toMs: number,
  windowMinutes: number,
): number[] {
  const out: number[] = [];
  for (const change of changes) {
    const from = Math.max(fromMs, change - windowMinutes * MINUTE + 1);
    for (const o of occurrences(t, zone, from, Math.min(toMs, change + 1))) if (o !== out[out.length - 1]) out.push(o);
  }
  return out;
}

/** The next time it fires at or after `fromMs` and before `toMs`, or undefined when it never does. */
export function nextOccurrence(t: RecurringTime, zone: string, fromMs: number, toMs: number): number | undefined {
  return occurrences(t, zone, fromMs, toMs, 1)[0];
}

/**
 * CreateSchedule's EndDate for `--until D` in a zone. Scheduler invokes a target only "before" EndDate, and with a
 * flexible window an occurrence is invoked up to the window after its time: so EndDate is local midnight after D, or
 * later when the last occurrence on or before D plus the largest window (1,440 minutes) and a minute ends later — but
 * never later than a minute before the first occurrence after D, which must not be invoked. (The launcher refuses a
 * window that could reach that one: recurring-steps.ts maxRecurringWindowMinutes.)
 */
export function recurringEndMs(t: RecurringTime, zone: string, until: LocalDate): number {
  const midnight = endOfLocalDate(zone, until);
  const span = sizingSpanDays(t.recurrence) * DAY;
  const last = occurrences(t, zone, midnight - span, midnight).pop() ?? midnight;
  const firstAfter = nextOccurrence(t, zone, midnight, midnight + span) ?? Infinity;
  return Math.min(Math.max(midnight, last + (scheduler.flexibleWindowMinutes.max + 1) * MINUTE), firstAfter - MINUTE);
}

/**
 * The --until date a schedule's EndDate was made for (recurringEndMs), in its zone: the day before an EndDate at local
 * midnight; otherwise (an EndDate moved past midnight for the last occurrence's window) that occurrence's date.
 * Undefined when it has no occurrence in the two spans before its EndDate.
 */
export function untilOfEndDate(t: RecurringTime, zone: string, endMs: number): LocalDate | undefined {
  const before = localTimeOf(zone, endMs - 1);
  const dayBefore = { year: before.year, month: before.month, day: before.day };
  if (endOfLocalDate(zone, dayBefore) === endMs) return dayBefore;
  const last = occurrences(t, zone, endMs - 2 * sizingSpanDays(t.recurrence) * DAY, endMs).pop();
  if (last === undefined) return undefined;
  const { year, month, day } = localTimeOf(zone, last);
  return { year, month, day };
}

/**
 * The shortest time between two consecutive occurrences of one schedule, in minutes: the fewest days between two
 * firing dates, less the largest offset change (a DST change in between brings them closer).
 */
export function shortestGapMinutes(r: Recurrence): number {
  let days: number;
  if (r.kind === "monthly") days = 28;
  else if (r.kind === "weekly") {
    const sorted = [...new Set(r.days)].sort((a, b) => a - b);
    days = Math.min(...sorted.map((d, i) => (i + 1 < sorted.length ? sorted[i + 1] - d : sorted[0] + 7 - d)));
  } else days = 1;
  return days * 1_440 - MAX_OFFSET_CHANGE_MINUTES;
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
  const days = sayRecurrence(t.recurrence, names, {
    daily: "every day",
    weekdays: "every weekday (Monday to Friday)",
    weekly: (list) => `every ${list.join(", ")}`,
    monthly: (day) => `on day ${day} of every month${day > 28 ? ` (none in months without day ${day})` : ""}`,
  });
  const p2 = (n: number) => String(n).padStart(2, "0");
  return `${days} at ${p2(t.hour)}:${p2(t.minute)} local until ${until.year}-${p2(until.month)}-${p2(until.day)}`;
}
