/**
 * When a journey's step falls for one subscriber, before the promises (step-schedules.ts).
 *
 * Step time: `+Nh` = trigger + N hours; `+Nd` = the trigger's local wall-clock time N days later, or with `at` that
 * local date at HH:MM (a time in a DST gap moves forward by the gap, a repeated one takes the earlier). A time not at
 * least one minute after the trigger moves to the next day (with `at`) or to trigger + 1 minute. Minutes round up.
 * Then quiet time (quietHours, quietDays in the subscriber's zone) delays a step until its whole flexible window is
 * free, as the launcher's `--quiet delay` does.
 */
import { Journey, JourneyStep, STEP_AFTER } from "./journeys-definition";
import { endOfQuietAcross, endOfQuietWindow, longestFreeMinutes } from "../timing/promises";
import { describeQuietTime, QuietTime, WEEKDAY_NAMES } from "../timing/quiet-time";
import { addDays, Fold, LocalTime, localTimeOf, scheduledTime, ScheduledTime, zonedInstant } from "../timing/send-time";

export const MINUTE = 60_000;
const HOUR = 3_600_000;

/**
 * The instant of one step for a subscriber in `zone` triggered at `triggerMs` (see the file header); quiet time is
 * checked over the schedule's flexible window of `windowMinutes`.
 */
export function journeyStepTime(
  zone: string,
  triggerMs: number,
  step: JourneyStep,
  quiet?: QuietTime,
  windowMinutes = 1,
): ScheduledTime {
  const time = stepTimeBeforeQuiet(zone, triggerMs, step);
  const end = quiet ? endOfQuietWindow(quiet, zone, time.utcMs, windowMinutes) : undefined;
  return end ? scheduledTime(zone, end.utcMs, end.fold) : time;
}

/**
 * A step's time for a subscriber whose data admits several zones: the latest of its times in each (so its local time
 * has come in all of them: never early), written in that zone, then moved out of quiet time in every one of them
 * (promises.ts endOfQuietAcross; when their quiet times leave no common free window, out of quiet time in the zone
 * written, as for a subscriber of that one zone).
 */
export function stepTimeAcross(
  zones: readonly string[],
  triggerMs: number,
  step: JourneyStep,
  quiet?: QuietTime,
  windowMinutes = 1,
): ScheduledTime {
  let latest = stepTimeBeforeQuiet(zones[0], triggerMs, step);
  let zone = zones[0];
  for (const z of zones.slice(1)) {
    const t = stepTimeBeforeQuiet(z, triggerMs, step);
    if (t.utcMs > latest.utcMs) [latest, zone] = [t, z];
  }
  const end = quiet ? endOfQuietAcross(quiet, zones, latest.utcMs, windowMinutes) : undefined;
  if (end === undefined) return latest;
  if (end === null) return journeyStepTime(zone, triggerMs, step, quiet, windowMinutes);
  const fold = zonedInstant(zone, localTimeOf(zone, end)).fold === "overlap" ? "overlap" : "exact";
  return scheduledTime(zone, end, fold);
}

/**
 * The first journey whose quiet time leaves no free stretch as long as the schedules' flexible window, as one line:
 * every step's window would touch quiet time wherever it starts (quiet time covers the window), so nothing could be
 * sent. Checked where the journeys meet the window: the stack program and enrol.
 */
export function quietWindowProblem(journeys: Journey[], windowMinutes: number, windowKey: string): string | undefined {
  for (const journey of journeys) {
    const quiet = journeyQuietTime(journey);
    const free = quiet ? longestFreeMinutes(quiet) : Infinity;
    if (quiet && free < windowMinutes)
      return `sendtime:journeys: journey "${journey.name}": its quiet time (${describeQuietTime(quiet)}) leaves at most ${free} free minutes in a row, shorter than ${windowKey} ${windowMinutes}: every send's window would touch quiet time; shorten the window or the quiet time`;
  }
  return undefined;
}

/** A journey's quiet time in the launcher's terms: a step due in it is delayed to its end. */
export function journeyQuietTime(journey: Journey): QuietTime | undefined {
  if (journey.quietHours === undefined && journey.quietDays === undefined) return undefined;
  const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  const [start, end] = journey.quietHours?.split("-") ?? [];
  return {
    ...(start !== undefined ? { hours: { start: minutes(start), end: minutes(end) } } : {}),
    days: (journey.quietDays ?? []).map((d) => (WEEKDAY_NAMES as readonly string[]).indexOf(d)),
    policy: "delay",
  };
}

function stepTimeBeforeQuiet(zone: string, triggerMs: number, step: JourneyStep): ScheduledTime {
  const m = STEP_AFTER.exec(step.after);
  if (!m) throw new Error(`step after "${step.after}" is not +Nh or +Nd`);
  const n = Number(m[1]);
  const earliest = triggerMs + MINUTE;
  if (m[2] === "h") return exactOrUtc(zone, ceilMinute(Math.max(triggerMs + n * HOUR, earliest)));

  const triggerLocal = localTimeOf(zone, triggerMs);
  if (step.at !== undefined) {
    const [hour, minute] = step.at.split(":").map(Number);
    let at = zonedInstant(zone, { ...addDays(triggerLocal, n), hour, minute });
    if (at.utcMs < earliest) at = zonedInstant(zone, { ...addDays(triggerLocal, n + 1), hour, minute });
    return scheduledTime(zone, at.utcMs, at.fold);
  }
  // The trigger's wall clock N days later; its seconds carry over (zone offsets are whole minutes), then round up.
  const seconds = triggerMs - Math.floor(triggerMs / MINUTE) * MINUTE;
  const later = zonedInstant(zone, addDays(triggerLocal, n));
  const utcMs = ceilMinute(later.utcMs + seconds);
  if (utcMs < earliest) return exactOrUtc(zone, ceilMinute(earliest));
  // A requested time in a gap or an overlap is written in UTC, as the launcher does.
  return later.fold === "exact" ? exactOrUtc(zone, utcMs) : scheduledTime(zone, utcMs, later.fold);
}

/** An instant found by arithmetic: local in `zone` unless its wall clock is repeated (then UTC). */
function exactOrUtc(zone: string, utcMs: number): ScheduledTime {
  const wall: LocalTime = localTimeOf(zone, utcMs);
  const back = zonedInstant(zone, wall);
  const fold: Fold = back.fold === "overlap" ? "overlap" : "exact";
  return scheduledTime(zone, utcMs, fold);
}

export function ceilMinute(ms: number): number {
  return Math.ceil(ms / MINUTE) * MINUTE;
}
