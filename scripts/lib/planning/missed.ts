/**
 * The missed-time policy (launch-campaign --missed, --grace-minutes): what becomes of a send whose time has passed by
 * the time it can be sent. The launcher applies it to the sends due before its cutoff, now + fan-out + margin
 * (decisions.ts); redrive to the sends a pause held, at the time it would send them again (paused-sends.ts).
 */
import { addDays, LocalTime, ScheduledTime, scheduledTime, zonedInstant } from "../../../infra/core/timing/send-time";

export type MissedPolicy = "skip" | "send-now" | "next-day";
export const MISSED_POLICIES: MissedPolicy[] = ["skip", "send-now", "next-day"];

/** --grace-minutes: how late send-now may send, its bounds and the launcher's default. */
export const GRACE_MINUTES = { min: 0, max: 10_080, default: 60 } as const;

/**
 * Sends due before `cutoffMs` are missed: skip; send-now (at the cutoff, in UTC) when late by less than the grace;
 * next-day (same local time the next day, skipped if that is still too early).
 */
export interface MissedRule {
  policy: MissedPolicy;
  graceMinutes: number;
  cutoffMs: number;
}

/** What the policy makes of one send: on time (not missed), sent at another time, or skipped. */
export type MissedFate =
  { outcome: "on-time" } | { outcome: "sent-now" | "next-day"; time: ScheduledTime } | { outcome: "skipped" };

const ON_TIME: MissedFate = { outcome: "on-time" };
const SKIPPED: MissedFate = { outcome: "skipped" };

/**
 * The fate of a send due at `dueMs`, asked for at local time `requested` in `zone`. next-day tries the same local time
 * on each of the next `laterDays` days (the launcher: 1) and takes the first not before the cutoff (a time in a gap
 * moves forward, one in an overlap takes the earlier instant: send-time.ts zonedInstant).
 */
export function missedFate(
  zone: string,
  dueMs: number,
  requested: LocalTime,
  m: MissedRule,
  laterDays = 1,
): MissedFate {
  if (dueMs >= m.cutoffMs) return ON_TIME;
  if (m.policy === "send-now" && m.cutoffMs - dueMs < m.graceMinutes * 60_000) {
    const sendNowAt = Math.ceil(m.cutoffMs / 60_000) * 60_000;
    return { outcome: "sent-now", time: scheduledTime("UTC", sendNowAt, "exact") };
  }
  if (m.policy === "next-day")
    for (let day = 1; day <= laterDays; day++) {
      const { utcMs, fold } = zonedInstant(zone, addDays(requested, day));
      if (utcMs >= m.cutoffMs) return { outcome: "next-day", time: scheduledTime(zone, utcMs, fold) };
    }
  return SKIPPED;
}
