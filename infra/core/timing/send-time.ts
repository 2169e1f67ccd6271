/**
 * Send-time rules, implemented once for size-window and the launcher (the README's "Rules worth knowing"):
 * - a row's zone is read by zone-names.ts: an IANA name (re-cased if need be), an abbreviation or Windows name mapped
 *   to the zone of a place, or the campaign's default zone when missing or unknown;
 * - a local time in a spring-forward gap moves forward by the gap; one that occurs twice (fall-back) takes the
 *   earlier instant; either is written in UTC, so `send_at` + `timezone` always denote exactly one instant;
 * - step k is `+Nd` (the same local time N days after step 1) or `+Nh` (N hours after it).
 * Pure: no AWS, no I/O. Offsets come from the IANA database through luxon's IANAZone (Intl underneath), cached per
 * zone and UTC day (zone-offsets.ts).
 */
import { cachedOffsetMinutes } from "./zone-offsets";

export { canonicalZone, ZoneResolver } from "../zones/zone-names";
export type { ResolvedZone, ZoneStatus } from "../zones/zone-names";

const MINUTE = 60_000;
const DAY = 86_400_000;

/** A local calendar date. `month` is 1–12. */
export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

/** A wall-clock time, minute precision. `month` is 1–12. */
export interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

/** exact: one instant; gap: the time does not exist (moved forward by the gap); overlap: it exists twice (earlier taken). */
export type Fold = "exact" | "gap" | "overlap";

/** Offset from UTC, in minutes, of `zone` at instant `utcMs`. */
export function offsetMinutes(zone: string, utcMs: number): number {
  return cachedOffsetMinutes(zone, utcMs);
}

/** The instant a local time denotes in `zone`: a gap moves forward by the gap, an overlap takes the earlier instant. */
export function zonedInstant(zone: string, t: LocalTime): { utcMs: number; fold: Fold } {
  const wall = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute);
  const before = offsetMinutes(zone, wall - DAY);
  const after = offsetMinutes(zone, wall + DAY);
  const candidates = new Set([before, after, offsetMinutes(zone, wall)]);
  const valid = [...candidates]
    .map((o) => wall - o * MINUTE)
    .filter((utc) => offsetMinutes(zone, utc) * MINUTE === wall - utc)
    .sort((a, b) => a - b);
  if (valid.length === 0) return { utcMs: wall - before * MINUTE, fold: "gap" };
  return { utcMs: valid[0], fold: valid.length > 1 ? "overlap" : "exact" };
}

/** `YYYY-MM-DDTHH:MM:SS` of an instant's wall clock in `zone`. */
export function wallClock(zone: string, utcMs: number): string {
  return new Date(utcMs + offsetMinutes(zone, utcMs) * MINUTE).toISOString().slice(0, 19);
}

/** The local time of an instant in `zone`. */
export function localTimeOf(zone: string, utcMs: number): LocalTime {
  const d = new Date(utcMs + offsetMinutes(zone, utcMs) * MINUTE);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
  };
}

export function addDays(t: LocalTime, days: number): LocalTime {
  const d = new Date(Date.UTC(t.year, t.month - 1, t.day + days));
  return { ...t, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/**
 * What a schedule carries for one instant: `send_at` + `timezone` denote exactly that instant. A requested local
 * time in a gap or an overlap is written in UTC, since Scheduler's handling of those is undocumented.
 */
export interface ScheduledTime {
  utcMs: number;
  /** The same instant, ISO 8601 in UTC. */
  utc: string;
  send_at: string;
  timezone: string;
  fold: Fold;
}

/** The first instant past the year 9999, which neither `at(YYYY-MM-DDTHH:MM:SS)` nor an ISO instant can write. */
const YEAR_10000_MS = Date.UTC(10_000, 0, 1);

/** Whether a send's instant and its wall clock in its zone both fall before the year 10000. */
export function writable(t: ScheduledTime): boolean {
  return t.utcMs < YEAR_10000_MS && t.utcMs + offsetMinutes(t.timezone, t.utcMs) * MINUTE < YEAR_10000_MS;
}

export function scheduledTime(zone: string, utcMs: number, fold: Fold): ScheduledTime {
  const utc = new Date(utcMs).toISOString();
  if (fold === "exact") return { utcMs, utc, send_at: wallClock(zone, utcMs), timezone: zone, fold };
  return { utcMs, utc, send_at: utc.slice(0, 19), timezone: "UTC", fold };
}

/** A campaign step: step 1 is the base time; later steps are `+Nd` (same local time N days later) or `+Nh`. */
export interface Step {
  number: number;
  days?: number;
  hours?: number;
  /** The SES template of this step (launcher); size-window ignores it. */
  template?: string;
  /** The step's channel (docs/sms.md): absent is email; "sms" sends a text from templates/<template>/sms.txt. */
  channel?: "email" | "sms";
}

/** `+3d` or `+36h`: how a step is written in reports. */
export function stepOffset(step: Step): string {
  return step.hours ? `+${step.hours}h` : `+${step.days ?? 0}d`;
}

/** The instant of `step` in `zone`, for a campaign whose first send is at local time `base`. */
export function stepTime(zone: string, base: LocalTime, step: Step): ScheduledTime {
  if (step.hours) {
    // An absolute duration after the first send; the resulting wall clock may be ambiguous, never in a gap.
    const first = zonedInstant(zone, base);
    const utcMs = first.utcMs + step.hours * 3_600_000;
    return scheduledTime(
      zone,
      utcMs,
      zonedInstant(zone, localTimeOf(zone, utcMs)).fold === "overlap" ? "overlap" : "exact",
    );
  }
  const { utcMs, fold } = zonedInstant(zone, addDays(base, step.days ?? 0));
  return scheduledTime(zone, utcMs, fold);
}

/** Parses YYYY-MM-DD plus hour and minute into a LocalTime, or returns what is wrong with the date. */
export function parseLocalTime(date: string, hour: number, minute: number): LocalTime | string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return `${date}: expected YYYY-MM-DD`;
  const t = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]), hour, minute };
  const d = new Date(Date.UTC(t.year, t.month - 1, t.day));
  if (d.getUTCFullYear() !== t.year || d.getUTCMonth() + 1 !== t.month || d.getUTCDate() !== t.day)
    return `${date}: no such date`;
  return t;
}
