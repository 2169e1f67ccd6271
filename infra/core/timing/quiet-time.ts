/**
 * Quiet time in the recipient's zone (Pinpoint's QuietTime, Braze's quiet hours): never mail at 3 AM.
 * Quiet hours `start`–`end` are wall-clock minutes (start inclusive, end exclusive; start > end wraps midnight);
 * quiet days are whole local days. A send inside quiet time is delayed to the first minute that is not quiet, or
 * skipped. Pure: no AWS, no I/O.
 */
import { addDays, Fold, LocalTime, localTimeOf, offsetMinutes, zonedInstant } from "./send-time";
import { zoneOffsets } from "./zone-offsets";

export type QuietPolicy = "delay" | "skip";
export const QUIET_POLICIES: QuietPolicy[] = ["delay", "skip"];

/** Day names as `--quiet-days` takes them, indexed like Date#getUTCDay (0 = Sunday). */
export const WEEKDAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] as const;

export interface QuietTime {
  /** Minutes after local midnight, 0–1439; start ≠ end. */
  hours?: { start: number; end: number };
  /** Quiet weekdays, 0 = Sunday … 6 = Saturday; never all seven. */
  days: readonly number[];
  policy: QuietPolicy;
}

const MINUTE = 60_000;
const DAY_MS = 86_400_000;

const clock = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`;

/** "21:00-08:00, SAT SUN": the quiet time in words, for summaries and rejects. */
export function describeQuietTime(q: QuietTime): string {
  const hours = q.hours ? `${clock(q.hours.start)}-${clock(q.hours.end)}` : "";
  const days = q.days.map((d) => WEEKDAY_NAMES[d]).join(" ");
  return [hours, days].filter(Boolean).join(", ") + " local";
}

function weekday(t: LocalTime): number {
  return new Date(Date.UTC(t.year, t.month - 1, t.day)).getUTCDay();
}

/** Whether a local minute of the day (0–1439) is in the quiet hours. */
export function inQuietHours(q: QuietTime, minuteOfDay: number): boolean {
  if (!q.hours) return false;
  const { start, end } = q.hours;
  return start < end ? minuteOfDay >= start && minuteOfDay < end : minuteOfDay >= start || minuteOfDay < end;
}

/** Whether the local wall clock of `utcMs` in `zone` is quiet. */
export function isQuiet(q: QuietTime, zone: string, utcMs: number): boolean {
  const t = localTimeOf(zone, utcMs);
  return q.days.includes(weekday(t)) || inQuietHours(q, t.hour * 60 + t.minute);
}

const YEAR_MS = 366 * 24 * 60 * MINUTE;
const MAX_MOVES = 1_000;

/**
 * The first instant at or after `utcMs` that is not quiet in `zone`, or undefined when `utcMs` is not quiet.
 * Each move goes to a quiet period's local end (the end of quiet hours, or midnight after a quiet day) and checks
 * again, so a quiet day followed by quiet hours is passed in two moves. An end that falls in a DST gap is the gap's end
 * (the instant the clock jumps past it: the first minute that is not quiet, not the end moved forward by the gap); one
 * in a fall-back overlap takes the earlier instant unless that is not after the current one.
 */
export function endOfQuietTime(q: QuietTime, zone: string, utcMs: number): { utcMs: number; fold: Fold } | undefined {
  let at: { utcMs: number; fold: Fold } | undefined;
  let now = utcMs;
  // Each move ends a quiet day or a quiet period (6 quiet days with quiet hours: 14 a week), and the flags leave free
  // time every week; a DST gap can take a week's free time, never a year's.
  for (let moves = 0; now - utcMs <= YEAR_MS && moves < MAX_MOVES; moves++) {
    const t = localTimeOf(zone, now);
    const minuteOfDay = t.hour * 60 + t.minute;
    let end: LocalTime;
    if (q.days.includes(weekday(t))) end = { ...addDays(t, 1), hour: 0, minute: 0 };
    else if (inQuietHours(q, minuteOfDay)) {
      const { start, end: endMinute } = q.hours!;
      const endDate = start > endMinute && minuteOfDay >= start ? addDays(t, 1) : t;
      end = { ...endDate, hour: Math.floor(endMinute / 60), minute: endMinute % 60 };
    } else return at;
    let next = zonedInstant(zone, end);
    if (next.fold === "gap") next = { utcMs: gapEnd(zone, next.utcMs), fold: "exact" };
    if (next.utcMs <= now) {
      // The end's earlier instant is behind us (we are in the second pass of a fall-back hour): take the later one.
      next = {
        utcMs: Date.UTC(end.year, end.month - 1, end.day, end.hour, end.minute) - offsetMinutes(zone, now) * MINUTE,
        fold: "overlap",
      };
    }
    // A clock set back before that end can land outside quiet time (a fall-back hour repeats times before it).
    next = changeOutOfQuiet(q, zone, now, next.utcMs) ?? next;
    at = next;
    now = next.utcMs;
  }
  throw new Error(`quiet time never ends in ${zone}`);
}

/**
 * The first DST change strictly between `fromMs` and `toMs` at which the wall clock is not quiet, with its fold (a
 * time a fall-back repeats is an overlap), or undefined: quiet time then ends there, before its local end.
 */
function changeOutOfQuiet(
  q: QuietTime,
  zone: string,
  fromMs: number,
  toMs: number,
): { utcMs: number; fold: Fold } | undefined {
  const offsets = zoneOffsets(zone);
  for (let day = Math.floor(fromMs / DAY_MS); day <= Math.floor(toMs / DAY_MS); day++) {
    const change = offsets.changeOn(day);
    if (change === undefined || change <= fromMs || change >= toMs || isQuiet(q, zone, change)) continue;
    const earliest = zonedInstant(zone, localTimeOf(zone, change));
    return { utcMs: change, fold: earliest.utcMs === change && earliest.fold === "exact" ? "exact" : "overlap" };
  }
  return undefined;
}

/**
 * The instant a DST gap ends (the offset change), given `movedMs`, a local time of the gap moved forward by the gap:
 * the change lies less than a day before it.
 */
export function gapEnd(zone: string, movedMs: number): number {
  const offsets = zoneOffsets(zone);
  const day = Math.floor(movedMs / DAY_MS);
  for (const d of [day, day - 1]) {
    const change = offsets.changeOn(d);
    if (change !== undefined && change <= movedMs) return change;
  }
  return movedMs;
}
