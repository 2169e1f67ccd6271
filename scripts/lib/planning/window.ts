/**
 * Flexible-window sizing. Pure.
 *
 * Reference rule for one spike: ⌈schedules ÷ TPS ÷ 60⌉ minutes. From a recipient list: with a window of W minutes,
 * Scheduler spreads the sends of an instant t evenly over [t, t + W). Windows of nearby instants overlap and their
 * rates add. W is the smallest whole number of minutes for which the summed rate never exceeds the effective TPS.
 */
import { scheduler } from "../../../infra/core/plan/quotas";
import { longestFreeMinutes } from "../../../infra/core/timing/promises";
import type { QuietTime } from "../../../infra/core/timing/quiet-time";

const MINUTE_MS = 60_000;

/** Reference rule for a single spike: ⌈schedules ÷ TPS ÷ 60⌉ minutes, at least 1. */
export function volumeWindowMinutes(schedules: number, tps: number): number {
  return Math.max(scheduler.flexibleWindowMinutes.min, Math.ceil(schedules / (tps * 60)));
}

/** The rate sends may reach, and where that number came from (for reports). */
export interface EffectiveTps {
  tps: number;
  source: string;
}

/** Sends per instant, with the zones behind each. State per distinct instant, never per row. */
export class InstantHistogram {
  private readonly byMinute = new Map<number, { count: number; zones: Map<string, number> }>();
  total = 0;

  add(utcMs: number, zone: string, count = 1): void {
    const minute = Math.floor(utcMs / MINUTE_MS);
    let slot = this.byMinute.get(minute);
    if (!slot) this.byMinute.set(minute, (slot = { count: 0, zones: new Map() }));
    slot.count += count;
    slot.zones.set(zone, (slot.zones.get(zone) ?? 0) + count);
    this.total += count;
  }

  /** Ascending by time. */
  instants(): { utcMs: number; count: number; zones: { zone: string; count: number }[] }[] {
    return [...this.byMinute.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([minute, s]) => ({
        utcMs: minute * MINUTE_MS,
        count: s.count,
        zones: [...s.zones.entries()]
          .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
          .map(([zone, count]) => ({ zone, count })),
      }));
  }
}

export type WindowResult =
  { fits: true; windowMinutes: number; peakTps: number } | { fits: false; windowMinutes: number; requiredTps: number };

/**
 * Most sends whose windows of W minutes overlap at any moment: for each instant, the sends of the instants in
 * (t − W, t]. `minutes` ascending.
 */
function maxOverlappingSends(minutes: number[], counts: number[], w: number): number {
  let best = 0;
  let sum = 0;
  let lo = 0;
  for (let hi = 0; hi < minutes.length; hi++) {
    sum += counts[hi];
    while (minutes[lo] <= minutes[hi] - w) sum -= counts[lo++];
    if (sum > best) best = sum;
  }
  return best;
}

/** The highest summed send rate (per second) with a window of `w` minutes. */
export function peakTpsWith(instants: { utcMs: number; count: number }[], w: number): number {
  const minutes = instants.map((i) => Math.floor(i.utcMs / MINUTE_MS));
  return (
    maxOverlappingSends(
      minutes,
      instants.map((i) => i.count),
      w,
    ) /
    (w * 60)
  );
}

/** The smallest W (1–1440) whose summed rate stays within `tps`; when none does, the TPS that 1440 would need. */
export function minimumWindowMinutes(instants: { utcMs: number; count: number }[], tps: number): WindowResult {
  const minutes = instants.map((i) => Math.floor(i.utcMs / MINUTE_MS));
  const counts = instants.map((i) => i.count);
  const { min, max } = scheduler.flexibleWindowMinutes;
  for (let w = min; w <= max; w++) {
    const peakTps = maxOverlappingSends(minutes, counts, w) / (w * 60);
    if (peakTps <= tps) return { fits: true, windowMinutes: w, peakTps };
  }
  return {
    fits: false,
    windowMinutes: max,
    requiredTps: Math.ceil(maxOverlappingSends(minutes, counts, max) / (max * 60)),
  };
}

/** Seconds to create `schedules` at `createTps`. */
export function fanOutSeconds(schedules: number, createTps: number): number {
  return Math.ceil(schedules / createTps);
}

/**
 * How a launch is paced. The fan-out's length depends on the schedule count, known only after planning; the list's
 * line count times the steps bounds it from above, so the launcher needs no second pass (its cutoff is a little early,
 * never late).
 */
export interface LaunchPace {
  /** Lines in the recipient list (countLines): an upper bound on its rows. */
  rowBound: number;
  steps: number;
  /** CreateSchedule calls per second the fan-out sustains. */
  createTps: number;
  /** Safety margin after the fan-out's estimated end. */
  marginMinutes: number;
}

/** Milliseconds from the launch to the first reachable send: the fan-out's bound plus the margin. */
function leadMs(p: LaunchPace): number {
  return fanOutSeconds(p.rowBound * p.steps, p.createTps) * 1000 + p.marginMinutes * 60_000;
}

/** The launcher's missed-time cutoff for a launch at `nowMs`: sends due before it cannot be reached. */
export function missedCutoff(nowMs: number, p: LaunchPace): number {
  return nowMs + leadMs(p);
}

/** The latest launch whose cutoff is not after `sendMs`: a launch then (or earlier) reaches that send. */
export function latestLaunch(sendMs: number, p: LaunchPace): number {
  return sendMs - leadMs(p);
}

/**
 * The flexible window quiet time is checked over when planning (a send is quiet when any minute of its window is:
 * infra/core/timing/promises.ts), known before the plan: the window given; without quiet time, any (1: nothing depends on
 * it); else one the computed window cannot exceed. With W minutes, the sends of all instants overlapping at any moment
 * number at most the schedules, so the summed rate is at most schedules ÷ (60 W): ⌈schedules bound ÷ TPS ÷ 60⌉
 * (volumeWindowMinutes) always holds the rate, and the smallest window that does is no larger. It is capped at
 * Scheduler's 1,440 and at the longest free stretch quiet time leaves (a longer window is quiet wherever it starts);
 * the caller then checks the computed window against it (quietWindowShortfall).
 */
export function quietCheckWindowMinutes(p: {
  givenMinutes?: number;
  quiet?: QuietTime;
  schedulesBound: number;
  tps: number;
}): number {
  if (p.givenMinutes !== undefined) return p.givenMinutes;
  if (!p.quiet) return scheduler.flexibleWindowMinutes.min;
  return Math.min(
    volumeWindowMinutes(p.schedulesBound, p.tps),
    scheduler.flexibleWindowMinutes.max,
    longestFreeMinutes(p.quiet),
  );
}

/** When the computed window is longer than the one quiet time was checked over: why the plan must not be sent. */
export function quietWindowShortfall(computedMinutes: number, checkedMinutes: number): string | undefined {
  if (computedMinutes <= checkedMinutes) return undefined;
  return `the sends need a flexible window of ${computedMinutes} minutes, but quiet time was checked over ${checkedMinutes} (the longest its free time allows): every minute of a send's window must be outside quiet time; shorten the quiet time, raise the send rate, or split the campaign`;
}
