/**
 * The promises every path that creates or changes a schedule keeps — the launcher's plan (one-time and recurring),
 * size-window, the fan-out, journeys (the deployed handler and enrol), reschedule and the redrive — in one place, so
 * that a new path cannot forget one. Pure: no AWS, no I/O.
 *
 * - Never two at once: no two sends of one recipient within MIN_GAP_MINUTES in one campaign or journey.
 * - Quiet time covers the window: a send is quiet when any minute of [t, t + window) is.
 * - In order: no recipient gets step k+1 before step k.
 * - Never created late: a schedule is created only when due at least CREATE_LEAD_MS after the moment it is created
 *   (Scheduler's handling of an at() in the past is undocumented: never rely on it).
 * - Late, not lost: a journey step handled up to its grace after its time is sent at once.
 * - Operations tell the truth: a send is not moved once it may have fired.
 */

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
