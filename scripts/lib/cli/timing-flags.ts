/**
 * The timing and audience flags of launch-campaign and size-window, parsed once into the core's typed values:
 * the base rule (--date/--hour/--minute, --after, --at), quiet time (--quiet-hours, --quiet-days, --quiet) and
 * variants (--variant, --holdout). Every problem is one UsageError line naming the flag and what is allowed.
 */
import { SES_NAME } from "../../../infra/rules/naming";
import { Audience, BASIS_POINTS, MAX_VARIANTS, MIN_VARIANTS, Variant, VARIANT_NAME, VARIANT_PLACEHOLDER } from "../recipients/audience";
import type { Recurrence } from "../../../infra/rules/plan-row";
import { QUIET_POLICIES, QuietPolicy, QuietTime, WEEKDAY_NAMES } from "../../../infra/rules/quiet-time";
import { BaseRule, parseDate, parseInstant } from "../../../infra/rules/send-rules";
import { UsageError } from "../../../infra/rules/errors";

export const TIMING_FLAGS = {
  after: { type: "string" },
  at: { type: "string" },
  every: { type: "string" },
  until: { type: "string" },
  "quiet-hours": { type: "string" },
  "quiet-days": { type: "string" },
  quiet: { type: "string" },
  variant: { type: "string", multiple: true },
  holdout: { type: "string" },
} as const;

/** The help text of these flags, shared by launch-campaign and size-window. */
export const TIMING_FLAGS_HELP = `Send time, exactly one rule (times are local to each recipient's zone):
  --date D --hour H [--minute M]  that local date and time; a row's send_hour / send_minute columns replace H / M
                          (best hour per recipient: --date 2026-12-01 --hour 9 with a send_hour column)
  --after COLUMN:+Nd --hour H [--minute M]
                          N days after the date in the row's COLUMN, at H:M (win-back 30 days after the last login:
                          --after last_login:+30d --hour 10); COLUMN holds a date YYYY-MM-DD or an ISO instant
                          with Z or an offset (2026-10-02T18:30:00Z), whose local date counts
  --after COLUMN:+Nh      N hours after COLUMN's instant (a date means local midnight); --after cart_at:+2h
  --at INSTANT            one instant for everyone, with Z or an offset (the eve of a Black Friday sale that opens
                          on 2026-11-27 at 09:00 New York time: --at 2026-11-26T09:00-05:00)
  --every daily|weekdays|weekly:MON[,THU...]|monthly:D --until YYYY-MM-DD --hour H [--minute M]
                          a recurring send: one schedule per recipient, at H:M local on those days, from the launch
                          (now + fan-out + margin) to the end of --until in the recipient's zone (a weekly digest:
                          --every weekly:MON --until 2027-06-30 --hour 9); monthly:29-31 sends nothing in months
                          without that day; one step only, no send_at column values, no --quiet-days (choose the
                          days instead), and an hour inside --quiet-hours is refused (a row's send_hour inside them
                          rejects the row: quiet-hours)
  A row's send_at column (local YYYY-MM-DDTHH:MM) replaces the rule for that row. A bad send_at, send_hour or
  send_minute rejects the row (invalid-send-time), a bad or empty COLUMN value too (invalid-date). Seconds round
  up to the next minute. Later steps count from step 1's time before quiet time moves it.
Quiet time, in each recipient's zone, applied after the missed-time policy:
  --quiet-hours HH:MM-HH:MM  e.g. 21:00-08:00 (start inclusive, end exclusive, may wrap midnight)
  --quiet-days DAY,...    whole days: MON,TUE,WED,THU,FRI,SAT,SUN
  --quiet delay|skip      delay a quiet send to the first minute that is not quiet (default), or skip it; a row
                          left without any send is rejected (quiet-hours)
Variants and holdout (a recipient's bucket: the first 8 bytes of sha256("CAMPAIGN:ID") as a big-endian number,
mod 10,000; variants take consecutive ranges of basis points in the order given, the holdout the last range):
  --variant NAME:PERCENT[:TEMPLATE]  2-8 variants (NAME: 1-32 of A-Z a-z 0-9 _ -; PERCENT: up to 2 decimals);
                          TEMPLATE replaces --template for step 1, {variant} in any template name is replaced
  --holdout PERCENT       recipients not sent (listed in holdout.csv); with variants, all percents sum to 100
                          (A/B test with a 10% holdout: --variant A:45 --variant B:45 --holdout 10)`;

export const BASE_RULE_HELP =
  "one send-time rule: --date YYYY-MM-DD --hour H, --after COLUMN:+Nd|+Nh, --at INSTANT, or --every … --until YYYY-MM-DD --hour H";

const EVERY_HELP = "daily, weekdays, weekly:MON[,THU...] (days MON TUE WED THU FRI SAT SUN) or monthly:D (D 1-31)";

const MAX_AFTER = { d: 3_650, h: 87_600 };

function wholeNumber(flag: string, raw: string, min: number, max: number): number {
  const n = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max)) throw new UsageError(`--${flag} ${raw}: must be a whole number from ${min} to ${max}`);
  return n;
}

/** --every's value: how the send repeats. */
export function parseEvery(raw: string): Recurrence {
  const [kind, arg, ...rest] = raw.split(":");
  const bad = () => new UsageError(`--every ${raw}: expected ${EVERY_HELP}`);
  if (rest.length) throw bad();
  if ((kind === "daily" || kind === "weekdays") && arg === undefined) return { kind };
  if (kind === "weekly" && arg) {
    const days = arg.split(",").map((name) => (WEEKDAY_NAMES as readonly string[]).indexOf(name.trim().toUpperCase()));
    if (days.some((d) => d < 0)) throw bad();
    if (new Set(days).size !== days.length) throw new UsageError(`--every ${raw}: a day is given twice`);
    return { kind, days };
  }
  if (kind === "monthly" && arg !== undefined && /^\d{1,2}$/.test(arg) && Number(arg) >= 1 && Number(arg) <= 31)
    return { kind, day: Number(arg) };
  throw bad();
}

/** Exactly one base rule from --date/--hour/--minute, --after, --at and --every/--until. */
export function baseRuleFromFlags(f: {
  date?: string;
  hour?: string;
  minute?: string;
  after?: string;
  at?: string;
  every?: string;
  until?: string;
}): BaseRule {
  if (f.until !== undefined && f.every === undefined) throw new UsageError(`--until ${f.until} goes with --every (a recurring send)`);
  const given = (["date", "after", "at", "every"] as const).filter((k) => f[k] !== undefined);
  if (given.length === 0) throw new UsageError(`give ${BASE_RULE_HELP}`);
  if (given.length > 1) throw new UsageError(`--${given[0]} and --${given[1]} are two send-time rules: give ${BASE_RULE_HELP}`);
  const hourAndMinute = (what: string) => {
    if (f.hour === undefined) throw new UsageError(`${what} needs --hour H (the local send time, 0-23)`);
    return { hour: wholeNumber("hour", f.hour, 0, 23), minute: f.minute === undefined ? 0 : wholeNumber("minute", f.minute, 0, 59) };
  };
  const noHour = (what: string, why: string) => {
    const flag = f.hour !== undefined ? "--hour" : f.minute !== undefined ? "--minute" : undefined;
    if (flag) throw new UsageError(`${flag} does not apply to ${what}: ${why}`);
  };

  if (f.every !== undefined) {
    const recurrence = parseEvery(f.every);
    if (f.until === undefined) throw new UsageError(`--every ${f.every} needs --until YYYY-MM-DD: the last local date with a send`);
    const until = parseDate(f.until);
    if (!until) throw new UsageError(`--until ${f.until}: ${/^\d{4}-\d{2}-\d{2}$/.test(f.until) ? "no such date" : "expected YYYY-MM-DD"}`);
    return { kind: "every", recurrence, until, ...hourAndMinute(`--every ${f.every}`) };
  }
  if (f.date !== undefined) {
    const date = parseDate(f.date);
    if (!date) throw new UsageError(`--date ${f.date}: ${/^\d{4}-\d{2}-\d{2}$/.test(f.date) ? "no such date" : "expected YYYY-MM-DD"}`);
    return { kind: "date", date, ...hourAndMinute(`--date ${f.date}`) };
  }
  if (f.at !== undefined) {
    noHour(`--at`, "the instant is the send time");
    const utcMs = parseInstant(f.at);
    if (typeof utcMs !== "number")
      throw new UsageError(
        `--at ${f.at}: expected an ISO instant with Z or an offset, e.g. 2026-11-26T14:00:00Z or 2026-11-26T09:00-05:00${utcMs === "no-offset" ? " (a time without an offset is ambiguous)" : ""}`,
      );
    return { kind: "at", utcMs };
  }
  const m = /^([^:]+):\+(\d{1,5})([dh])$/.exec(f.after!);
  const n = m ? Number(m[2]) : NaN;
  if (!m || m[1].trim() !== m[1] || n > MAX_AFTER[m[3] as "d" | "h"])
    throw new UsageError(
      `--after ${f.after}: expected COLUMN:+Nd (N days later, 0-${MAX_AFTER.d}, at --hour) or COLUMN:+Nh (N hours later, 0-${MAX_AFTER.h})`,
    );
  if (m[3] === "h") {
    noHour(`--after ${f.after}`, "it sends N hours after the column's time");
    return { kind: "after", column: m[1], hours: n };
  }
  return { kind: "after", column: m[1], days: n, ...hourAndMinute(`--after ${f.after}`) };
}

function clockMinute(raw: string): number | undefined {
  const m = /^(\d{2}):(\d{2})$/.exec(raw);
  return m && Number(m[1]) <= 23 && Number(m[2]) <= 59 ? Number(m[1]) * 60 + Number(m[2]) : undefined;
}

/** --quiet-hours HH:MM-HH:MM, --quiet-days MON,…,SUN, --quiet delay|skip; undefined when there is no quiet time. */
export function quietTimeFromFlags(f: { "quiet-hours"?: string; "quiet-days"?: string; quiet?: string }): QuietTime | undefined {
  const policy = (f.quiet ?? "delay") as QuietPolicy;
  if (!QUIET_POLICIES.includes(policy)) throw new UsageError(`--quiet ${f.quiet}: one of ${QUIET_POLICIES.join(", ")}`);
  if (f["quiet-hours"] === undefined && f["quiet-days"] === undefined) {
    if (f.quiet !== undefined) throw new UsageError(`--quiet ${f.quiet} needs --quiet-hours or --quiet-days`);
    return undefined;
  }
  let hours: QuietTime["hours"];
  const rawHours = f["quiet-hours"];
  if (rawHours !== undefined) {
    const [start, end] = rawHours.split("-").map(clockMinute);
    if (rawHours.split("-").length !== 2 || start === undefined || end === undefined)
      throw new UsageError(`--quiet-hours ${rawHours}: expected HH:MM-HH:MM in the recipient's zone, e.g. 21:00-08:00`);
    if (start === end) throw new UsageError(`--quiet-hours ${rawHours}: start and end are the same; quiet whole days are --quiet-days`);
    hours = { start, end };
  }
  const days: number[] = [];
  const rawDays = f["quiet-days"];
  if (rawDays !== undefined) {
    for (const name of rawDays.split(",")) {
      const day = (WEEKDAY_NAMES as readonly string[]).indexOf(name.trim().toUpperCase());
      if (day < 0) throw new UsageError(`--quiet-days ${rawDays}: unknown day "${name}"; days are MON,TUE,WED,THU,FRI,SAT,SUN`);
      if (!days.includes(day)) days.push(day);
    }
    if (days.length === 7) throw new UsageError(`--quiet-days ${rawDays}: every day is quiet, nothing could be sent`);
  }
  return { hours, days: days.sort(), policy };
}

/** Basis points of a percent with at most 2 decimals, exactly (no floating point). */
function basisPoints(flag: string, raw: string, what: string): number {
  const m = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(raw);
  const bp = m ? Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0")) : NaN;
  if (!(bp > 0 && bp < BASIS_POINTS))
    throw new UsageError(`${flag}: ${what} must be a percent above 0 and below 100 with at most 2 decimals (e.g. 12.5)`);
  return bp;
}

/** --variant NAME:PERCENT[:TEMPLATE] (2–8) and --holdout PERCENT; variants and holdout sum to 100. */
export function audienceFromFlags(f: { variant?: string[]; holdout?: string }): Audience {
  const holdoutBasisPoints = f.holdout === undefined ? 0 : basisPoints(`--holdout ${f.holdout}`, f.holdout, "the holdout");
  const variants: Variant[] = (f.variant ?? []).map((raw) => {
    const [name, percent, template, ...rest] = raw.split(":");
    if (percent === undefined || rest.length) throw new UsageError(`--variant ${raw}: expected NAME:PERCENT or NAME:PERCENT:TEMPLATE`);
    if (!VARIANT_NAME.test(name)) throw new UsageError(`--variant ${raw}: the name must be 1-32 of A-Z a-z 0-9 _ -`);
    const variant: Variant = { name, basisPoints: basisPoints(`--variant ${raw}`, percent, "the share") };
    if (template !== undefined) variant.template = template;
    return variant;
  });
  if (variants.length === 0) return { variants, holdoutBasisPoints };
  if (variants.length < MIN_VARIANTS || variants.length > MAX_VARIANTS)
    throw new UsageError(`--variant: give ${MIN_VARIANTS} to ${MAX_VARIANTS} variants (got ${variants.length})`);
  const dup = variants.find((v, i) => variants.findIndex((w) => w.name === v.name) !== i);
  if (dup) throw new UsageError(`--variant ${dup.name}: the name is given twice`);
  const sum = variants.reduce((s, v) => s + v.basisPoints, holdoutBasisPoints);
  if (sum !== BASIS_POINTS) {
    const parts = variants.map((v) => String(v.basisPoints / 100));
    if (holdoutBasisPoints) parts.push(`holdout ${holdoutBasisPoints / 100}`);
    throw new UsageError(`--variant/--holdout: the percents must sum to 100 (${parts.join(" + ")} = ${sum / 100})`);
  }
  return { variants, holdoutBasisPoints };
}

/**
 * Checks every template name the campaign can use: `templates[k]` is step k's own template (step 0: --template),
 * undefined when the step has none. `{variant}` needs variants; each name, with the variant's name in it, must be
 * an SES template name. Returns nothing; throws a UsageError naming the flag.
 */
export function checkTemplates(audience: Audience, templates: { flag: string; template?: string }[]): void {
  const check = (flag: string, template: string, names = audience.variants.map((v) => v.name)) => {
    const resolved = template.includes(VARIANT_PLACEHOLDER) ? names.map((n) => template.split(VARIANT_PLACEHOLDER).join(n)) : [template];
    if (template.includes(VARIANT_PLACEHOLDER) && names.length === 0)
      throw new UsageError(`${flag}: ${VARIANT_PLACEHOLDER} in a template name needs --variant`);
    const bad = resolved.find((t) => !SES_NAME.test(t));
    if (bad !== undefined) throw new UsageError(`${flag}: "${bad}" is not an SES template name (1-64 of A-Z a-z 0-9 _ -)`);
  };
  for (const { flag, template } of templates) if (template !== undefined) check(flag, template);
  for (const v of audience.variants) if (v.template !== undefined) check(`--variant ${v.name}`, v.template, [v.name]);
}
