/**
 * The timing and audience flags of launch-campaign and size-window, parsed once into the core's typed values:
 * the base rule (--date/--hour/--minute, --after, --at), quiet time (--quiet-hours, --quiet-days, --quiet),
 * variants (--variant, --holdout) and the missed-time policy (--missed, --grace-minutes; redrive's too). Every problem is one UsageError line naming the flag and what is allowed.
 */
import { SES_NAME } from "../../../infra/core/plan/naming";
import {
  Audience,
  BASIS_POINTS,
  MAX_VARIANTS,
  MIN_VARIANTS,
  Variant,
  VARIANT_NAME,
  VARIANT_PLACEHOLDER,
  variantKey,
} from "../recipients/audience";
import type { Recurrence } from "../../../infra/core/plan/schedule-expression";
import { QUIET_POLICIES, QuietPolicy, QuietTime, WEEKDAY_NAMES } from "../../../infra/core/timing/quiet-time";
import { BaseRule, parseDate } from "../../../infra/core/timing/send-rules";
import { UsageError } from "../../../infra/core/errors";
import { GRACE_MINUTES, MISSED_POLICIES, MissedPolicy } from "../planning/missed";
import { int } from "./parsers";
import { AT } from "./common-flags";

/** Help groups the campaign commands share. */
export const SEND_TIME_GROUP = "Send time (one rule; local to each recipient's zone; a row's send_at replaces it)";
export const AUDIENCE_GROUP = "Quiet time and audience";
/** The flags' group (Flag.oneOf) of the one send-time rule: a rule given on the command line replaces a file's. */
export const SEND_TIME_RULE = "send-time rule";

export const TIMING_FLAGS = {
  after: {
    type: "string",
    value: "COLUMN:+Nd|+Nh",
    help: "N days (at --hour) or N hours after the date or instant in the row's COLUMN",
    group: SEND_TIME_GROUP,
    oneOf: { group: SEND_TIME_RULE, form: "after" },
  },
  at: {
    ...AT,
    note: "the send time of everyone",
    group: SEND_TIME_GROUP,
    oneOf: { group: SEND_TIME_RULE, form: "at" },
  },
  every: {
    type: "string",
    value: "daily|weekdays|weekly:DAYS|monthly:D",
    help: "recurring, at --hour, to the end of --until",
    group: SEND_TIME_GROUP,
    oneOf: { group: SEND_TIME_RULE, form: "every" },
  },
  until: {
    type: "string",
    value: "YYYY-MM-DD",
    help: "the last local date of a recurring send",
    group: SEND_TIME_GROUP,
    with: "every",
    oneOf: { group: SEND_TIME_RULE },
  },
  "quiet-hours": {
    type: "string",
    value: "HH:MM-HH:MM",
    help: "quiet time in the recipient's zone (21:00-08:00; end exclusive)",
    group: AUDIENCE_GROUP,
  },
  "quiet-days": {
    type: "string",
    value: "MON,...",
    help: "quiet whole days",
    group: AUDIENCE_GROUP,
    with: "quiet-hours",
  },
  quiet: {
    type: "string",
    value: "delay|skip",
    help: "delay a quiet send to the first minute that is not quiet, or skip it",
    defaultHelp: "delay",
    group: AUDIENCE_GROUP,
  },
  variant: {
    type: "string",
    value: "NAME:PERCENT[:TEMPLATE]",
    multiple: true,
    key: "variants",
    help: "2-8 variants; TEMPLATE: the variant's step-1 template",
    group: AUDIENCE_GROUP,
  },
  holdout: {
    type: "string",
    value: "PERCENT",
    help: "recipients held out, not sent; with variants the percents sum to 100",
    group: AUDIENCE_GROUP,
  },
} as const;

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

/** The raw values of the base rule's flags (strings as typed). */
export type BaseRuleFlagValues = {
  date?: string;
  hour?: string;
  minute?: string;
  after?: string;
  at?: string | number;
  every?: string;
  until?: string;
};

/** Exactly one base rule from --date/--hour/--minute, --after, --at and --every/--until. */
export function baseRuleFromFlags(f: BaseRuleFlagValues): BaseRule {
  if (f.until !== undefined && f.every === undefined)
    throw new UsageError(`--until ${f.until} goes with --every (a recurring send)`);
  const given = (["date", "after", "at", "every"] as const).filter((k) => f[k] !== undefined);
  if (given.length === 0) throw new UsageError(`give ${BASE_RULE_HELP}`);
  if (given.length > 1)
    throw new UsageError(`--${given[0]} and --${given[1]} are two send-time rules: give ${BASE_RULE_HELP}`);
  const hourAndMinute = (what: string) => {
    if (f.hour === undefined) throw new UsageError(`${what} needs --hour H (the local send time, 0-23)`);
    return {
      hour: wholeNumber("hour", f.hour, 0, 23),
      minute: f.minute === undefined ? 0 : wholeNumber("minute", f.minute, 0, 59),
    };
  };
  const noHour = (what: string, why: string) => {
    const flag = f.hour !== undefined ? "--hour" : f.minute !== undefined ? "--minute" : undefined;
    if (flag) throw new UsageError(`${flag} does not apply to ${what}: ${why}`);
  };

  if (f.every !== undefined) {
    const recurrence = parseEvery(f.every);
    if (f.until === undefined)
      throw new UsageError(`--every ${f.every} needs --until YYYY-MM-DD: the last local date with a send`);
    const until = parseDate(f.until);
    if (!until)
      throw new UsageError(
        `--until ${f.until}: ${/^\d{4}-\d{2}-\d{2}$/.test(f.until) ? "no such date" : "expected YYYY-MM-DD"}`,
      );
    return { kind: "every", recurrence, until, ...hourAndMinute(`--every ${f.every}`) };
  }
  if (f.date !== undefined) {
    const date = parseDate(f.date);
    if (!date)
      throw new UsageError(
        `--date ${f.date}: ${/^\d{4}-\d{2}-\d{2}$/.test(f.date) ? "no such date" : "expected YYYY-MM-DD"}`,
      );
    return { kind: "date", date, ...hourAndMinute(`--date ${f.date}`) };
  }
  if (f.at !== undefined) {
    noHour(`--at`, "the instant is the send time");
    // Parsed by the table (a number); text from a caller that has not parsed it goes through the same parser.
    return { kind: "at", utcMs: typeof f.at === "number" ? f.at : AT.parse.parse(f.at, "at") };
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
export function quietTimeFromFlags(f: {
  "quiet-hours"?: string;
  "quiet-days"?: string;
  quiet?: string;
}): QuietTime | undefined {
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
    if (start === end)
      throw new UsageError(`--quiet-hours ${rawHours}: start and end are the same; quiet whole days are --quiet-days`);
    hours = { start, end };
  }
  const days: number[] = [];
  const rawDays = f["quiet-days"];
  if (rawDays !== undefined) {
    for (const name of rawDays.split(",")) {
      const day = (WEEKDAY_NAMES as readonly string[]).indexOf(name.trim().toUpperCase());
      if (day < 0)
        throw new UsageError(`--quiet-days ${rawDays}: unknown day "${name}"; days are MON,TUE,WED,THU,FRI,SAT,SUN`);
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
    throw new UsageError(
      `${flag}: ${what} must be a percent above 0 and below 100 with at most 2 decimals (e.g. 12.5)`,
    );
  return bp;
}

/** --variant NAME:PERCENT[:TEMPLATE] (2–8) and --holdout PERCENT; variants and holdout sum to 100. */
export function audienceFromFlags(f: { variant?: string[]; holdout?: string }): Audience {
  const holdoutBasisPoints =
    f.holdout === undefined ? 0 : basisPoints(`--holdout ${f.holdout}`, f.holdout, "the holdout");
  const variants: Variant[] = (f.variant ?? []).map((raw) => {
    const [name, percent, template, ...rest] = raw.split(":");
    if (percent === undefined || rest.length)
      throw new UsageError(`--variant ${raw}: expected NAME:PERCENT or NAME:PERCENT:TEMPLATE`);
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
  const cased = variants.findIndex(
    (v, i) => variants.findIndex((w) => variantKey(w.name) === variantKey(v.name)) !== i,
  );
  if (cased !== -1) {
    const first = variants.find((w) => variantKey(w.name) === variantKey(variants[cased].name))!;
    throw new UsageError(
      `--variant ${variants[cased].name}: differs from variant ${first.name} only in case; give variants names that differ in more than case`,
    );
  }
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
    const resolved = template.includes(VARIANT_PLACEHOLDER)
      ? names.map((n) => template.split(VARIANT_PLACEHOLDER).join(n))
      : [template];
    if (template.includes(VARIANT_PLACEHOLDER) && names.length === 0)
      throw new UsageError(`${flag}: ${VARIANT_PLACEHOLDER} in a template name needs --variant`);
    const bad = resolved.find((t) => !SES_NAME.test(t));
    if (bad !== undefined)
      throw new UsageError(`${flag}: "${bad}" is not an SES template name (1-64 of A-Z a-z 0-9 _ -)`);
  };
  for (const { flag, template } of templates) if (template !== undefined) check(flag, template);
  for (const v of audience.variants) if (v.template !== undefined) check(`--variant ${v.name}`, v.template, [v.name]);
}

/** --missed's value, the missed-time policy; undefined when it is not given. */
export function missedPolicyFlag(raw: string | undefined): MissedPolicy | undefined {
  if (raw === undefined) return undefined;
  if (!(MISSED_POLICIES as readonly string[]).includes(raw))
    throw new UsageError(`--missed ${raw}: one of ${MISSED_POLICIES.join(", ")}`);
  return raw as MissedPolicy;
}

/** --grace-minutes: how late send-now may send (the launcher's default when it is not given). */
export function graceMinutesFlag(raw: string | undefined): number {
  return raw === undefined
    ? GRACE_MINUTES.default
    : int(GRACE_MINUTES.min, GRACE_MINUTES.max).parse(raw, "grace-minutes");
}
