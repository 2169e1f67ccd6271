/**
 * When step 1 of a recipient is sent: the campaign's base rule (one of three), or the row's own `send_at`.
 *
 * - date:  a local date and time (`--date D --hour H [--minute M]`); a row's `send_hour`/`send_minute` replace H/M.
 * - after: relative to a date or instant in a row's column (`--after COLUMN:+Nd|+Nh`): `+Nd` is the local date (in
 *          the row's zone) N days later at the campaign/row hour; `+Nh` is N hours after the instant (a date means
 *          local midnight).
 * - at:    one instant for everyone (`--at INSTANT`).
 * - every: a recurring send (`--every … --until D`) at a local hour and minute (recurrence.ts; recurring-steps.ts plans it).
 * - a row's `send_at` (local `YYYY-MM-DDTHH:MM` in the row's zone) replaces the rule for that row.
 *
 * Later steps count from step 1's time (before any missed-time or quiet-time move): `+Nd` is the same local time N
 * days later, `+Nh` N hours after. at() has minute precision: an instant with seconds rounds up to the next minute,
 * so nothing is sent early. Pure: no AWS, no I/O.
 */
import type { Recurrence } from "../plan/schedule-expression";
import { describeRecurrence } from "./recurrence";
import {
  addDays,
  Fold,
  LocalDate,
  LocalTime,
  localTimeOf,
  offsetMinutes,
  scheduledTime,
  ScheduledTime,
  Step,
  zonedInstant,
} from "./send-time";
import { InternalError } from "../errors";

export type BaseRule =
  | { kind: "date"; date: LocalDate; hour: number; minute: number }
  | { kind: "after"; column: string; days: number; hour: number; minute: number }
  | { kind: "after"; column: string; hours: number }
  | { kind: "at"; utcMs: number }
  /** Repeats until local midnight after `until`; a row's send_hour/send_minute replace hour/minute. */
  | { kind: "every"; recurrence: Recurrence; hour: number; minute: number; until: LocalDate };

/** Control columns: they steer the send time and are never personalization. */
export const SEND_AT_COLUMN = "send_at";
export const SEND_HOUR_COLUMN = "send_hour";
export const SEND_MINUTE_COLUMN = "send_minute";

/** A row's raw timing values (undefined when the column is absent). */
export interface RowTiming {
  sendAt?: string;
  sendHour?: string;
  sendMinute?: string;
  /** The `--after` column's value. */
  after?: string;
}

/** Step 1 as requested: the local time (steps `+Nd` count from it) and the instant (steps `+Nh` count from it). */
export interface FirstSend {
  local: LocalTime;
  utcMs: number;
  fold: Fold;
}

export type TimingProblem = { reason: "invalid-send-time" | "invalid-date"; text: string };

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** A real calendar date, or undefined. */
export function calendarDate(year: number, month: number, day: number): LocalDate | undefined {
  const d = new Date(Date.UTC(year, month - 1, day));
  if (year < 1000 || d.getUTCFullYear() !== year || d.getUTCMonth() + 1 !== month || d.getUTCDate() !== day)
    return undefined;
  return { year, month, day };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)?$/i;

export function parseDate(raw: string): LocalDate | undefined {
  const m = DATE.exec(raw);
  return m ? calendarDate(Number(m[1]), Number(m[2]), Number(m[3])) : undefined;
}

/**
 * An ISO 8601 / RFC 3339 instant: date, `T` (or a space), HH:MM[:SS[.fraction]] and `Z` or an offset
 * (`+02:00`, `+0200`, `+02`). Returns epoch ms (a fraction past the millisecond rounded up), "no-offset" for a local
 * time (ambiguous), or undefined when malformed.
 */
export function parseInstant(raw: string): number | "no-offset" | undefined {
  const m = INSTANT.exec(raw);
  if (!m) return undefined;
  const date = calendarDate(Number(m[1]), Number(m[2]), Number(m[3]));
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  if (!date || hour > 23 || minute > 59 || second > 59) return undefined;
  if (!m[8] && !m[9]) return "no-offset";
  let offset = 0;
  if (m[9]) {
    const [oh, om] = [Number(m[10]), Number(m[11] ?? 0)];
    if (oh > 23 || om > 59) return undefined;
    offset = (m[9] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  // Whole milliseconds, exactly; digits past them round up (a send is never early; a double keeps no nanoseconds).
  const digits = m[7] ?? "";
  const fraction = Number(digits.slice(0, 3).padEnd(3, "0")) + (/[1-9]/.test(digits.slice(3)) ? 1 : 0);
  return Date.UTC(date.year, date.month - 1, date.day, hour, minute, second) + fraction - offset * MINUTE;
}

/** The number written in ASCII digits at `s[from, from + n)`, or -1. */
function digitsAt(s: string, from: number, n: number): number {
  let value = 0;
  for (let i = from; i < from + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

const daysInMonth = (year: number, month: number) =>
  month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : month === 4 || month === 6 || month === 9 || month === 11
      ? 30
      : 31;

/** parseInstant's milliseconds for each 3-digit fraction, computed its way (`Number("0.fff") * 1000`, not always whole). */
const MILLIS_OF_FRACTION = Array.from({ length: 1000 }, (_, f) => Number(`0.${String(f).padStart(3, "0")}`) * 1000);

/**
 * parseDate and parseInstant for the two forms a date column mostly holds, read by hand (a column of per-row login
 * times is read once per row): a valid `YYYY-MM-DD` → its UTC midnight in epoch ms (the caller tells it by its length,
 * 10), a valid `YYYY-MM-DDTHH:MM:SS[.fff]Z` → what parseInstant returns. Anything else, valid or not, → undefined:
 * the general parsers decide.
 */
function quickUtcMs(v: string): number | undefined {
  const n = v.length;
  if (n < 10 || v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45) return undefined;
  const year = digitsAt(v, 0, 4);
  const month = digitsAt(v, 5, 2);
  const day = digitsAt(v, 8, 2);
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (n === 10) return Date.UTC(year, month - 1, day);
  // "T", ":" and ":" at their places, "Z" last, and nothing or "." and 3 digits between the seconds and the "Z".
  if (
    (n !== 20 && n !== 24) ||
    v.charCodeAt(10) !== 84 ||
    v.charCodeAt(13) !== 58 ||
    v.charCodeAt(16) !== 58 ||
    v.charCodeAt(n - 1) !== 90
  )
    return undefined;
  const hour = digitsAt(v, 11, 2);
  const minute = digitsAt(v, 14, 2);
  const second = digitsAt(v, 17, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  let fraction = 0;
  if (n === 24) {
    const f = digitsAt(v, 20, 3);
    if (v.charCodeAt(19) !== 46 || f < 0) return undefined;
    fraction = MILLIS_OF_FRACTION[f];
  }
  return Date.UTC(year, month - 1, day, hour, minute, second) + fraction;
}

const QUICK_DATE_LENGTH = 10;

/** Rounds up to a whole minute: at() cannot say seconds, and a send must never be early. */
export const ceilToMinute = (ms: number) => Math.ceil(ms / MINUTE) * MINUTE;

/** The fold of an instant's own wall clock: "overlap" when that local time happens twice. */
function foldOfInstant(zone: string, utcMs: number): Fold {
  return zonedInstant(zone, localTimeOf(zone, utcMs)).fold === "overlap" ? "overlap" : "exact";
}

function fromLocal(zone: string, local: LocalTime): FirstSend {
  const { utcMs, fold } = zonedInstant(zone, local);
  return { local, utcMs, fold };
}

function fromInstant(zone: string, utcMs: number): FirstSend {
  const exact = ceilToMinute(utcMs);
  return { local: localTimeOf(zone, exact), utcMs: exact, fold: foldOfInstant(zone, exact) };
}

const SEND_AT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::00)?$/;

/** The rule's hour and minute, or the row's send_hour/send_minute when it has them. */
export function rowHourAndMinute(
  rule: { hour: number; minute: number },
  row: RowTiming,
): { hour: number; minute: number } | TimingProblem {
  let { hour, minute } = rule;
  if (row.sendHour !== undefined && row.sendHour.trim() !== "") {
    const h = row.sendHour.trim();
    if (!/^\d{1,2}$/.test(h) || Number(h) > 23)
      return { reason: "invalid-send-time", text: `${SEND_HOUR_COLUMN} "${row.sendHour}": expected a whole hour 0–23` };
    hour = Number(h);
  }
  if (row.sendMinute !== undefined && row.sendMinute.trim() !== "") {
    const m = row.sendMinute.trim();
    if (!/^\d{1,2}$/.test(m) || Number(m) > 59)
      return {
        reason: "invalid-send-time",
        text: `${SEND_MINUTE_COLUMN} "${row.sendMinute}": expected a whole minute 0–59`,
      };
    minute = Number(m);
  }
  return { hour, minute };
}

/** Step 1 of a row in `zone`, or why the row cannot be planned. */
export function firstSend(rule: BaseRule, zone: string, row: RowTiming): FirstSend | TimingProblem {
  if (row.sendAt !== undefined && row.sendAt.trim() !== "") {
    const m = SEND_AT.exec(row.sendAt.trim());
    const date = m && calendarDate(Number(m[1]), Number(m[2]), Number(m[3]));
    if (!m || !date || Number(m[4]) > 23 || Number(m[5]) > 59)
      return {
        reason: "invalid-send-time",
        text: `${SEND_AT_COLUMN} "${row.sendAt}": expected a local time YYYY-MM-DDTHH:MM in the row's zone (no offset)`,
      };
    return fromLocal(zone, { ...date, hour: Number(m[4]), minute: Number(m[5]) });
  }
  if (rule.kind === "every")
    throw new InternalError("a recurring send has no first send of its own (recurring-steps.ts plans it)");
  if (rule.kind === "at") return fromInstant(zone, rule.utcMs);
  if (rule.kind === "date") {
    const hm = rowHourAndMinute(rule, row);
    return "reason" in hm ? hm : fromLocal(zone, { ...rule.date, ...hm });
  }
  if ("days" in rule) {
    const hm = rowHourAndMinute(rule, row);
    if ("reason" in hm) return hm;
    return afterColumn({ ...rule, ...hm }, zone, row.after ?? "");
  }
  return afterColumn(rule, zone, row.after ?? "");
}

const DAY = 86_400_000;
const dateTexts = new Map<number, string>();

/** `YYYY-MM-DD` of an instant's local date in `zone`; the texts of the few distinct days are kept. */
function localDateText(zone: string, utcMs: number): string {
  const day = Math.floor((utcMs + offsetMinutes(zone, utcMs) * MINUTE) / DAY);
  let text = dateTexts.get(day);
  if (text === undefined) dateTexts.set(day, (text = new Date(day * DAY).toISOString().slice(0, 10)));
  return text;
}

/**
 * The `--after` column's value reduced to what the rule reads, as text that `firstSend` reads back the same way: for
 * `+Nd` the local date in `zone` (YYYY-MM-DD), for `+Nh` the date or the instant rounded up to the minute (ISO, UTC). Rows with different
 * values but the same reduced value share one computation.
 */
export function reduceAfter(
  rule: Extract<BaseRule, { kind: "after" }>,
  zone: string,
  raw: string,
): string | TimingProblem {
  const value = raw.trim();
  let instant: number | "no-offset" | undefined = quickUtcMs(value);
  if (instant !== undefined && value.length === QUICK_DATE_LENGTH) return value;
  if (instant === undefined) {
    if (parseDate(value)) return value;
    instant = parseInstant(value);
  }
  if (typeof instant !== "number") {
    const why =
      value === ""
        ? "is empty"
        : instant === "no-offset"
          ? "is a time without Z or an offset (ambiguous)"
          : "is not a date YYYY-MM-DD or an ISO instant with Z or an offset";
    return { reason: "invalid-date", text: `${rule.column} "${raw}" ${why}` };
  }
  if ("days" in rule) return localDateText(zone, instant);
  // (ceil(t) + N h = ceil(t + N h): rounding first changes nothing and lets more rows share the result.)
  return new Date(ceilToMinute(instant)).toISOString();
}

/** A send_hour/send_minute value read by hand: -1 when absent or empty, its number when 1–2 digits ≤ max, else -2. */
function quickClockField(raw: string | undefined, max: number): number {
  if (raw === undefined || raw.length === 0) return -1;
  const value = raw.length <= 2 ? digitsAt(raw, 0, raw.length) : -1;
  return value < 0 || value > max ? -2 : value;
}

/** The minute of the day step 1 is asked for (the rule's, or the row's send_hour/send_minute), or -1 (read by the rule). */
function quickMinuteOfDay(rule: { hour: number; minute: number }, row: RowTiming): number {
  const hour = quickClockField(row.sendHour, 23);
  const minute = quickClockField(row.sendMinute, 59);
  if (hour === -2 || minute === -2) return -1;
  return (hour === -1 ? rule.hour : hour) * 60 + (minute === -1 ? rule.minute : minute);
}

/**
 * A number standing for everything `firstSend` reads of a row under `rule` in one zone: two rows of that zone with
 * the same number get the same first send (and so the same decisions). Computed by hand and without allocating, for
 * the common forms only (decisions.ts keys its per-zone cache on it; a list of per-row login times reads it once per
 * row): no send_at, send_hour/send_minute empty or 1–2 digits, an --after value in one of quickUtcMs's two forms.
 * Anything else → undefined, and the caller keys on the text. `offsets.at` is the zone's UTC offset in minutes at an
 * instant (+Nd reads an instant's local date).
 *
 *   at:                  0 (one instant for everyone)
 *   date, every:         minute of the day (0–1439)
 *   after +Nd:           local day number × 1440 + minute of the day
 *   after +Nh:           2 × the instant in minutes rounded up (even), or 2 × the date's day number + 1 (odd: a
 *                        date is local midnight, never the same as the instant at UTC midnight)
 */
export function timingKey(rule: BaseRule, row: RowTiming, offsets: { at(utcMs: number): number }): number | undefined {
  if (row.sendAt !== undefined && row.sendAt.length !== 0) return undefined;
  if (rule.kind === "at") return 0;
  if (rule.kind !== "after") {
    const minuteOfDay = quickMinuteOfDay(rule, row);
    return minuteOfDay < 0 ? undefined : minuteOfDay;
  }
  const value = row.after ?? "";
  const ms = quickUtcMs(value);
  if (ms === undefined) return undefined;
  const isDate = value.length === QUICK_DATE_LENGTH;
  if ("days" in rule) {
    const minuteOfDay = quickMinuteOfDay(rule, row);
    if (minuteOfDay < 0) return undefined;
    const localDay = isDate ? ms / DAY : Math.floor((ms + offsets.at(ms) * MINUTE) / DAY);
    return localDay * 1440 + minuteOfDay;
  }
  return isDate ? (2 * ms) / DAY + 1 : 2 * Math.ceil(ms / MINUTE);
}

function afterColumn(rule: Extract<BaseRule, { kind: "after" }>, zone: string, raw: string): FirstSend | TimingProblem {
  const value = reduceAfter(rule, zone, raw);
  if (typeof value !== "string") return value;
  const date = parseDate(value);
  if ("days" in rule) {
    const local = addDays({ ...date!, hour: rule.hour, minute: rule.minute }, rule.days);
    return fromLocal(zone, local);
  }
  const start = date ? zonedInstant(zone, { ...date, hour: 0, minute: 0 }).utcMs : (parseInstant(value) as number);
  return fromInstant(zone, start + rule.hours * HOUR);
}

/** The scheduled time of `step` given step 1 as requested (before missed-time or quiet-time moves). */
export function stepFromFirst(zone: string, first: FirstSend, step: Step): ScheduledTime {
  if (step.hours)
    return scheduledTime(zone, first.utcMs + step.hours * HOUR, foldOfInstant(zone, first.utcMs + step.hours * HOUR));
  if (!step.days) return scheduledTime(zone, first.utcMs, first.fold);
  const { utcMs, fold } = zonedInstant(zone, addDays(first.local, step.days));
  return scheduledTime(zone, utcMs, fold);
}

/** The local wall-clock time step k asked for: what next-day repeats a day later. */
export function requestedLocal(zone: string, first: FirstSend, step: Step, time: ScheduledTime): LocalTime {
  return step.hours ? localTimeOf(zone, time.utcMs) : addDays(first.local, step.days ?? 0);
}

const hhmm = (hour: number, minute: number) => `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`;

/** The rule in words, for summaries: "2026-12-01 09:00 local", "last_login +30d at 10:00 local", … */
export function describeRule(rule: BaseRule): string {
  switch (rule.kind) {
    case "date": {
      const d = rule.date;
      return `${d.year}-${String(d.month).padStart(2, "0")}-${String(d.day).padStart(2, "0")} ${hhmm(rule.hour, rule.minute)} local`;
    }
    case "at":
      return `${new Date(rule.utcMs).toISOString().replace(".000Z", "Z")} for everyone`;
    case "after":
      return "days" in rule
        ? `${rule.column} +${rule.days}d at ${hhmm(rule.hour, rule.minute)} local`
        : `${rule.column} +${rule.hours}h`;
    case "every":
      return describeRecurrence(rule, rule.until);
  }
}
