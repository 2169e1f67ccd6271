/**
 * The schedule expressions a plan's rows carry, written and read back: `at(<send_at>)` for a one-time row and
 * `cron(M H …)` for a recurring one (in the row's `timezone`), and the `send_at` wall-clock time itself.
 */

/** A wall-clock time as `send_at` writes it; `month` is 1–12. */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

/** Seconds are accepted and ignored: Scheduler's `at()` has minute precision, and the planner always writes `:00`. */
const SEND_AT = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):\d\d$/;
const AT_EXPRESSION = /^at\((.*)\)$/;

/** The wall-clock time of a `send_at` value, or undefined when it is not one. */
export function parseSendAt(sendAt: string): WallClock | undefined {
  const m = SEND_AT.exec(sendAt);
  if (!m) return undefined;
  const [year, month, day, hour, minute] = m.slice(1).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59) return undefined;
  return { year, month, day, hour, minute };
}

/** The Scheduler expression of a one-time schedule: `at(YYYY-MM-DDTHH:MM:SS)`. */
export function atExpression(sendAt: string): string {
  return `at(${sendAt})`;
}

/** The wall-clock time of an `at(...)` expression, or undefined (a rate or cron schedule, or garbage). */
export function parseAtExpression(expression: string | undefined): WallClock | undefined {
  const m = AT_EXPRESSION.exec(expression ?? "");
  return m ? parseSendAt(m[1]) : undefined;
}

/** Day names as cron writes them, indexed like Date#getUTCDay (0 = Sunday; cron's 1–7 are SUN–SAT). */
export const CRON_DAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] as const;

/** How a recurring schedule repeats. Weekdays are 0 = Sunday … 6 = Saturday; a monthly day is 1–31. */
export type Recurrence =
  { kind: "daily" } | { kind: "weekdays" } | { kind: "weekly"; days: number[] } | { kind: "monthly"; day: number };

/** A recurring schedule: the days it repeats on, at a local hour and minute in its zone. */
export interface RecurringTime {
  recurrence: Recurrence;
  hour: number;
  minute: number;
}

/** A set of days (0 = Sunday) in the week's order Monday first, each once: how cron and summaries list them. */
export const daysMondayFirst = (days: readonly number[]) =>
  [...new Set(days)].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7));

/**
 * `r` said one way per kind: `weekly` is given the names of its days (`dayNames`, 0 = Sunday) Monday first, and
 * `monthly` its day of the month. Cron and summaries say a recurrence through it.
 */
export function sayRecurrence(
  r: Recurrence,
  dayNames: readonly string[],
  say: { daily: string; weekdays: string; weekly: (days: string[]) => string; monthly: (day: number) => string },
): string {
  if (r.kind === "weekly") return say.weekly(daysMondayFirst(r.days).map((d) => dayNames[d]));
  return r.kind === "monthly" ? say.monthly(r.day) : say[r.kind];
}

/**
 * The Scheduler expression of a recurring schedule, one of four shapes (fields: minute hour day-of-month month
 * day-of-week year): `cron(M H * * ? *)` daily, `cron(M H ? * MON-FRI *)` weekdays, `cron(M H ? * MON,THU *)`
 * weekly, `cron(M H D * ? *)` monthly (a month without day D has no send: cron's rule).
 */
export function cronExpression(t: RecurringTime): string {
  const fields = sayRecurrence(t.recurrence, CRON_DAY_NAMES, {
    daily: "* * ? *",
    weekdays: "? * MON-FRI *",
    weekly: (days) => `? * ${days.join(",")} *`,
    monthly: (day) => `${day} * ? *`,
  });
  return `cron(${t.minute} ${t.hour} ${fields})`;
}

const CRON = /^cron\((\d{1,2}) (\d{1,2}) (\S+) \* (\S+) \*\)$/;

/** The recurring time of a cron expression of cronExpression's four shapes, or undefined (anything else). */
export function parseCronExpression(expression: string | undefined): RecurringTime | undefined {
  const m = CRON.exec(expression ?? "");
  if (!m) return undefined;
  const [minute, hour] = [Number(m[1]), Number(m[2])];
  if (minute > 59 || hour > 23) return undefined;
  const [dayOfMonth, dayOfWeek] = [m[3], m[4]];
  let recurrence: Recurrence | undefined;
  if (dayOfMonth === "*" && dayOfWeek === "?") recurrence = { kind: "daily" };
  else if (dayOfMonth === "?" && dayOfWeek === "MON-FRI") recurrence = { kind: "weekdays" };
  else if (dayOfMonth === "?") {
    const days = dayOfWeek.split(",").map((n) => (CRON_DAY_NAMES as readonly string[]).indexOf(n));
    if (days.length && days.every((d) => d >= 0) && new Set(days).size === days.length)
      recurrence = { kind: "weekly", days };
  } else if (dayOfWeek === "?" && /^\d{1,2}$/.test(dayOfMonth) && Number(dayOfMonth) >= 1 && Number(dayOfMonth) <= 31)
    recurrence = { kind: "monthly", day: Number(dayOfMonth) };
  return recurrence && { recurrence, hour, minute };
}
