/**
 * The promises every path that creates or changes a schedule keeps — the launcher's plan (one-time and recurring),
 * size-window, the fan-out, journeys (the deployed handler and enrol), reschedule and the redrive — in one place, so
 * that a new path cannot forget one. Pure: no AWS, no I/O.
 *
 * - Never two at once: no two sends of one recipient within MIN_GAP_MINUTES in one campaign or journey.
 * - Quiet time covers the window: a send is quiet when any minute of [t, t + window) is (a recurring send at every
 *   occurrence, the nights the clock changes included).
 * - In order: no recipient gets step k+1 before step k.
 * - Never created late: a schedule is created only when due at least CREATE_LEAD_MS after the moment it is created
 *   (Scheduler's handling of an at() in the past is undocumented: never rely on it).
 * - Late, not lost: a journey step handled up to its grace after its time is sent at once.
 * - Operations tell the truth: a send is not moved once it may have fired.
 */
import { describeQuietTime, endOfQuietTime, inQuietHours, isQuiet, QuietTime } from "./quiet-time";
import { addDays, Fold, localTimeOf } from "./send-time";
import { zoneOffsets } from "./zone-offsets";

const MINUTE = 60_000;
const DAY_MS = 86_400_000;

/** Two sends of one recipient closer than this read as a double send: the later one is not planned. */
export const MIN_GAP_MINUTES = 60;

/** A schedule is created only when due at least this long after the moment it is created. */
export const CREATE_LEAD_MS = 60_000;

/** Whether a send due at `utcMs` may still be created (or moved) at `atMs`. */
export function inTimeToCreate(utcMs: number, atMs: number): boolean {
  return utcMs >= atMs + CREATE_LEAD_MS;
}

/**
 * Whether a one-time send due at `utcMs` may already have fired by `nowMs`, or may fire before a change made now
 * takes effect: its time has passed, its flexible window is open, or it is due within CREATE_LEAD_MS.
 */
export function mayHaveFired(utcMs: number, nowMs: number): boolean {
  return !inTimeToCreate(utcMs, nowMs);
}

/** Late, not lost: a journey step handled up to this long after its time is sent at once (journey `lateGraceMinutes`). */
export const DEFAULT_LATE_GRACE_MINUTES = 60;

/** A redriven send is created this long after the redrive runs. */
export const REDRIVE_DELAY_MS = 2 * 60_000;

/** A step's offset from the first send (or the trigger): `+Nh`, `+Nd`, and for journeys a local time `at`. */
export interface StepOffset {
  hours?: number;
  days?: number;
  /** `HH:MM` local (journeys' `+Nd at`). */
  at?: string;
}

/**
 * Never two at once, when a definition is read: two steps with equal offsets would send at one instant to everyone
 * (`+0h` twice; `+24h` and `+1d`, which differ only on a DST day; the same `after` and `at`).
 */
export function sameStepOffset(a: StepOffset, b: StepOffset): boolean {
  const hours = (s: StepOffset) => (s.days ?? 0) * 24 + (s.hours ?? 0);
  return hours(a) === hours(b) && (a.at ?? "") === (b.at ?? "");
}

/** The first two steps (indexes, in order) with equal offsets, or undefined. */
export function equalStepOffsets(steps: readonly StepOffset[]): [number, number] | undefined {
  for (let j = 1; j < steps.length; j++)
    for (let i = 0; i < j; i++) if (sameStepOffset(steps[i], steps[j])) return [i, j];
  return undefined;
}

/** Why a send of one recipient is dropped: it comes within MIN_GAP_MINUTES of, or before, an earlier step kept. */
export interface DroppedSend {
  reason: "too-close" | "out-of-order";
  /** Index of the earlier step it is dropped for. */
  with: number;
}

/**
 * Never two at once, and in order: given one recipient's sends in step order (epoch ms; undefined for a step not
 * sent), which are dropped. Walking the steps in order, a send within MIN_GAP_MINUTES of an earlier step kept is
 * dropped ("too-close"), and so is one before an earlier step kept ("out-of-order": step k+1 never before step k).
 * Returns, per step, why it is dropped, or undefined (kept, or not sent).
 */
export function droppedSends(sends: readonly (number | undefined)[]): (DroppedSend | undefined)[] {
  const gap = MIN_GAP_MINUTES * 60_000;
  const kept: number[] = [];
  return sends.map((t, k) => {
    if (t === undefined) return undefined;
    const close = kept.find((i) => Math.abs(sends[i]! - t) < gap);
    if (close !== undefined) return { reason: "too-close", with: close };
    const later = kept.find((i) => sends[i]! > t);
    if (later !== undefined) return { reason: "out-of-order", with: later };
    kept.push(k);
    return undefined;
  });
}

/**
 * Never two at once, and in order, for one send moved (reschedule): given one recipient's sends in step order (epoch
 * ms; undefined for a step not pending) with step `index` at its new time, the other step the move would bring within
 * MIN_GAP_MINUTES of it, or put on the wrong side of it (droppedSends drops one of the two), or undefined.
 */
export function movedSendConflict(
  sends: readonly (number | undefined)[],
  index: number,
): { reason: DroppedSend["reason"]; with: number } | undefined {
  const dropped = droppedSends(sends);
  for (let k = 0; k < dropped.length; k++) {
    const d = dropped[k];
    if (d === undefined) continue;
    if (k === index) return d;
    if (d.with === index) return { reason: d.reason, with: k };
  }
  return undefined;
}

/**
 * Quiet time covers the window: a send at `utcMs` whose flexible window is `windowMinutes` (Scheduler invokes it
 * anywhere in [t, t + window)) is quiet when any minute of that window is. Returns the first instant at or after
 * `utcMs` whose whole window is free (re-checked there: a quiet period's end, each time), or undefined when the
 * window at `utcMs` already is. A window of 1 minute is the send's own minute.
 */
export function endOfQuietWindow(
  q: QuietTime,
  zone: string,
  utcMs: number,
  windowMinutes: number,
): { utcMs: number; fold: Fold } | undefined {
  let at: { utcMs: number; fold: Fold } | undefined;
  let t = utcMs;
  for (let moves = 0; moves < 10_000; moves++) {
    const quiet = firstQuietInWindow(q, zone, t, windowMinutes);
    if (quiet === undefined) return at;
    at = endOfQuietTime(q, zone, quiet)!;
    t = at.utcMs;
  }
  throw new Error(`quiet time (${describeQuietTime(q)}) leaves no free ${windowMinutes} minutes in ${zone}`);
}

/**
 * endOfQuietWindow in several zones at once (a recipient whose data admits several): the first instant at or after
 * `utcMs` whose whole window is outside quiet time in every zone, or undefined when the window at `utcMs` already is;
 * null when no such instant comes within a few moves per zone (their quiet times cover the clock between them).
 */
export function endOfQuietAcross(
  q: QuietTime,
  zones: readonly string[],
  utcMs: number,
  windowMinutes: number,
): number | undefined | null {
  let t = utcMs;
  for (let moves = 0; moves <= zones.length * 4; moves++) {
    let latest = t;
    for (const zone of zones) latest = Math.max(latest, endOfQuietWindow(q, zone, t, windowMinutes)?.utcMs ?? t);
    if (latest === t) return t === utcMs ? undefined : t;
    t = latest;
  }
  return null;
}

/** The first quiet instant of the window [utcMs, utcMs + windowMinutes), or undefined when all of it is free. */
export function firstQuietInWindow(
  q: QuietTime,
  zone: string,
  utcMs: number,
  windowMinutes: number,
): number | undefined {
  return isQuiet(q, zone, utcMs) ? utcMs : firstQuietIn(q, zone, utcMs, utcMs + windowMinutes * MINUTE);
}

/**
 * Quiet time covers the window, for a recurring send (one local time at every occurrence), on a night the clock keeps
 * its pace: whether a minute of [minuteOfDay, minuteOfDay + window) is in the quiet hours. (Such a send takes no quiet
 * days: it chooses its days.) Then it is quiet at every occurrence but those of quietOccurrences' nights.
 */
export function quietEveryNight(q: QuietTime, minuteOfDay: number, windowMinutes: number): boolean {
  for (let m = 0; m < windowMinutes; m++) if (inQuietHours(q, (minuteOfDay + m) % 1_440)) return true;
  return false;
}

/** An occurrence of a recurring send whose window reaches quiet time, and the minutes of it before quiet time. */
export interface QuietOccurrence {
  utcMs: number;
  /** The longest window that keeps quiet time out of this occurrence's. */
  freeMinutes: number;
}

/**
 * Quiet time covers the window, for a recurring send, on the nights its clock changes: one cron time keeps the same
 * local minutes in its window every night but those, where the window runs across the change and its wall clock jumps
 * forward (into quiet time that starts later) or back (into quiet time that ended before). Of `occurrences` (epoch
 * ms), those whose window [t, t + window) reaches quiet time, each with the minutes free before it.
 */
export function quietOccurrences(
  q: QuietTime,
  zone: string,
  occurrences: readonly number[],
  windowMinutes: number,
): QuietOccurrence[] {
  const out: QuietOccurrence[] = [];
  for (const utcMs of occurrences) {
    const quiet = firstQuietInWindow(q, zone, utcMs, windowMinutes);
    if (quiet !== undefined) out.push({ utcMs, freeMinutes: Math.floor((quiet - utcMs) / MINUTE) });
  }
  return out;
}

/**
 * The first quiet instant in (from, to), or undefined. Quiet time begins only where the local clock reaches a quiet
 * start (quiet hours' start, midnight of a quiet day: each instant of it, twice in a fall-back hour) or where the
 * offset changes (a clock jumping into quiet time): those instants are the only ones to check.
 */
function firstQuietIn(q: QuietTime, zone: string, from: number, to: number): number | undefined {
  const offsets = zoneOffsets(zone);
  const candidates: number[] = [];
  for (let day = Math.floor(from / DAY_MS); day <= Math.floor(to / DAY_MS); day++) {
    const change = offsets.changeOn(day);
    if (change !== undefined) candidates.push(change);
  }
  const first = localTimeOf(zone, from);
  const days = Math.ceil((to - from) / DAY_MS) + 2;
  for (let k = -1; k <= days; k++) {
    const date = addDays(first, k);
    const starts: number[] = [];
    if (q.hours) starts.push(q.hours.start);
    if (q.days.includes(new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay())) starts.push(0);
    for (const minute of starts) {
      const wall = Date.UTC(date.year, date.month - 1, date.day, Math.floor(minute / 60), minute % 60);
      // Every instant with that wall clock: one, two in an overlap, none in a gap (the offset change covers it).
      for (const o of new Set([offsets.at(wall - DAY_MS), offsets.at(wall + DAY_MS)])) {
        const instant = wall - o * MINUTE;
        if (offsets.at(instant) === o) candidates.push(instant);
      }
    }
  }
  candidates.sort((a, b) => a - b);
  return candidates.find((c) => c > from && c < to && isQuiet(q, zone, c));
}

/**
 * The longest stretch of minutes a week of `q` leaves free (local, without DST): a flexible window longer than that
 * is quiet wherever it starts.
 */
export function longestFreeMinutes(q: QuietTime): number {
  const WEEK = 7 * 1440;
  let longest = 0;
  let run = 0;
  for (let m = 0; m < 2 * WEEK; m++) {
    const minute = m % WEEK;
    const quiet = q.days.includes(Math.floor(minute / 1440)) || inQuietHours(q, minute % 1440);
    run = quiet ? 0 : run + 1;
    if (run > longest) longest = run;
  }
  return Math.min(longest, WEEK);
}
