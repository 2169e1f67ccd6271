/**
 * Send-time rules (DESIGN.md "Send-time rules"), implemented once for size-window and the launcher.
 * Pure: no AWS, no I/O. Offsets come from the IANA database through luxon's IANAZone (Intl underneath).
 *
 * Per-row work is a cache lookup: a zone's instants depend only on (zone, step), so they are computed once per
 * distinct zone, never per row.
 */
import { IANAZone } from "luxon";
import { SES_NAME } from "../../../infra/naming";
import { IANA_ZONE_NAMES } from "./iana-zones";

const MINUTE = 60_000;
const DAY = 86_400_000;

const EXACT_NAMES = new Set(IANA_ZONE_NAMES);
const NAMES_BY_LOWER_CASE = new Map(IANA_ZONE_NAMES.map((n) => [n.toLowerCase(), n]));

/**
 * The IANA name for `raw`: itself when it is one (links such as US/Eastern included), the IANA spelling when it
 * differs only in case (`america/chicago` → `America/Chicago`), otherwise undefined. Spaces matter.
 */
export function canonicalZone(raw: string): string | undefined {
  if (EXACT_NAMES.has(raw)) return raw;
  return NAMES_BY_LOWER_CASE.get(raw.toLowerCase());
}

export type ZoneStatus = "ok" | "canonicalised" | "defaulted";

export interface ResolvedZone {
  zone: string;
  status: ZoneStatus;
}

/** Resolves each row's zone, falling back to the campaign default; remembers every distinct raw value it saw. */
export class ZoneResolver {
  private readonly cache = new Map<string, ResolvedZone>();
  private static readonly MAX_CACHED = 100_000;

  constructor(readonly defaultZone: string) {
    if (canonicalZone(defaultZone) !== defaultZone) throw new Error(`default time zone "${defaultZone}" is not an IANA zone name`);
  }

  resolve(raw: string | undefined): ResolvedZone {
    const key = raw ?? "";
    let hit = this.cache.get(key);
    if (hit === undefined) {
      const zone = key === "" ? undefined : canonicalZone(key);
      hit = zone === undefined ? { zone: this.defaultZone, status: "defaulted" } : { zone, status: zone === key ? "ok" : "canonicalised" };
      if (this.cache.size < ZoneResolver.MAX_CACHED) this.cache.set(key, hit);
    }
    return hit;
  }
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

const zones = new Map<string, IANAZone>();
function zoneOf(name: string): IANAZone {
  let z = zones.get(name);
  if (!z) zones.set(name, (z = IANAZone.create(name)));
  return z;
}

/** Offset from UTC, in minutes, of `zone` at instant `utcMs`. */
export function offsetMinutes(zone: string, utcMs: number): number {
  return zoneOf(zone).offset(utcMs);
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
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes() };
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
  send_at: string;
  timezone: string;
  fold: Fold;
}

export function scheduledTime(zone: string, utcMs: number, fold: Fold): ScheduledTime {
  if (fold === "exact") return { utcMs, send_at: wallClock(zone, utcMs), timezone: zone, fold };
  return { utcMs, send_at: new Date(utcMs).toISOString().slice(0, 19), timezone: "UTC", fold };
}

/** A campaign step: step 1 is the base time; later steps are `+Nd` (same local time N days later) or `+Nh`. */
export interface Step {
  number: number;
  days?: number;
  hours?: number;
  /** The SES template of this step (launcher); size-window ignores it. */
  template?: string;
}

const STEP_FLAG = /^\+(\d{1,3})([dh])(?::(.*))?$/;

/** Parses `+3d`, `+3d:followup`, `+12h:reminder`. Offsets are from step 1. Returns an error message for bad input. */
export function parseStep(raw: string, number: number): Step | string {
  const m = STEP_FLAG.exec(raw);
  if (!m || Number(m[1]) === 0 || (m[3] !== undefined && !SES_NAME.test(m[3])))
    return `--step ${raw}: expected +Nd or +Nh (N from 1 to 999, from the first send), optionally :TEMPLATE (1–64 of A-Z a-z 0-9 _ -)`;
  return { number, [m[2] === "d" ? "days" : "hours"]: Number(m[1]), template: m[3] };
}

/** The instant of `step` in `zone`, for a campaign whose first send is at local time `base`. */
export function stepTime(zone: string, base: LocalTime, step: Step): ScheduledTime {
  if (step.hours) {
    // An absolute duration after the first send; the resulting wall clock may be ambiguous, never in a gap.
    const first = zonedInstant(zone, base);
    const utcMs = first.utcMs + step.hours * 3_600_000;
    return scheduledTime(zone, utcMs, zonedInstant(zone, localTimeOf(zone, utcMs)).fold === "overlap" ? "overlap" : "exact");
  }
  const { utcMs, fold } = zonedInstant(zone, addDays(base, step.days ?? 0));
  return scheduledTime(zone, utcMs, fold);
}

/** Parses YYYY-MM-DD plus hour and minute into a LocalTime, or returns an error message. */
export function parseLocalTime(date: string, hour: number, minute: number): LocalTime | string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return `--date ${date}: expected YYYY-MM-DD`;
  const t = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]), hour, minute };
  const d = new Date(Date.UTC(t.year, t.month - 1, t.day));
  if (d.getUTCFullYear() !== t.year || d.getUTCMonth() + 1 !== t.month || d.getUTCDate() !== t.day) return `--date ${date}: no such date`;
  return t;
}

/** Every step's scheduled time per zone, computed once per distinct zone. */
export class CampaignClock {
  private readonly cache = new Map<string, ScheduledTime[]>();

  constructor(
    readonly base: LocalTime,
    readonly steps: Step[],
  ) {}

  timesFor(zone: string): ScheduledTime[] {
    let times = this.cache.get(zone);
    if (!times) this.cache.set(zone, (times = this.steps.map((s) => stepTime(zone, this.base, s))));
    return times;
  }
}

/** Step 1 plus the `--step` flags, or an error message. */
export function campaignSteps(firstTemplate: string | undefined, stepFlags: string[]): Step[] | string {
  const steps: Step[] = [{ number: 1, days: 0, template: firstTemplate }];
  for (const raw of stepFlags) {
    const s = parseStep(raw, steps.length + 1);
    if (typeof s === "string") return s;
    steps.push(s);
  }
  return steps;
}
