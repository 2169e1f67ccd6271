/**
 * The flags size-window and launch-campaign share, validated here into typed values the core takes: when the
 * campaign sends (one base rule: --date/--hour/--minute, --after or --at; --step, --default-timezone; quiet time and
 * variants, parsed in timing-flags.ts), the rate its sends must hold (--tps, or --invocation-tps and --ses-rate),
 * and --now. Every message names the flag and what is allowed.
 */
import { RAMP_PRESETS } from "../planning/ramp";
import { SES_NAME } from "../../../infra/core/plan/naming";
import { FANOUT_HEADROOM, fanOutCreateRate, recurringSends, scheduler } from "../../../infra/core/plan/quotas";
import { Audience, VARIANT_PLACEHOLDER } from "../recipients/audience";
import { AMBIGUOUS_ZONE_POLICIES, AmbiguousZonePolicy } from "../planning/decision-types";
import { maxRecurringWindowMinutes } from "../planning/recurring-steps";
import { MIN_GAP_MINUTES, sameStepOffset } from "../../../infra/core/timing/promises";
import { inQuietHours, QuietTime } from "../../../infra/core/timing/quiet-time";
import { CSV_ENCODINGS, CsvEncoding } from "../recipients/recipients";
import { BaseRule } from "../../../infra/core/timing/send-rules";
import { canonicalZone, Step } from "../../../infra/core/timing/send-time";
import {
  INFER_SOURCES,
  InferSource,
  parseZoneAliases,
  ZoneAliases,
  zoneNameProblem,
} from "../../../infra/core/zones/zone-names";
import { EffectiveTps } from "../planning/window";
import { count } from "../text/format";
import { choice, int, listOf, positive } from "./parsers";
import { nowFlag } from "./common-flags";
import { SMS_PACE_FLAGS } from "./sms-flags";
import {
  audienceFromFlags,
  baseRuleFromFlags,
  BaseRuleFlagValues,
  checkTemplates,
  quietTimeFromFlags,
  SEND_TIME_GROUP,
  SEND_TIME_RULE,
  TIMING_FLAGS,
} from "./timing-flags";
import { UsageError } from "../../../infra/core/errors";

/** The raw values of the timing flags (strings as typed). */
type TimingFlagValues = BaseRuleFlagValues & {
  "quiet-hours"?: string;
  "quiet-days"?: string;
  quiet?: string;
  variant?: string[];
  holdout?: string;
};

export const SEND_TIME_FLAGS = {
  date: {
    type: "string",
    value: "YYYY-MM-DD",
    help: "that local date and time (a row's send_hour, send_minute replace H, M)",
    group: SEND_TIME_GROUP,
    oneOf: { group: SEND_TIME_RULE, form: "date" },
  },
  hour: {
    type: "string",
    value: "H",
    help: "the local send hour, 0-23",
    group: SEND_TIME_GROUP,
    with: "date",
    oneOf: { group: SEND_TIME_RULE },
  },
  minute: {
    type: "string",
    value: "M",
    help: "the local send minute, 0-59",
    defaultHelp: "0",
    group: SEND_TIME_GROUP,
    with: "date",
    oneOf: { group: SEND_TIME_RULE },
  },
  ...TIMING_FLAGS,
  step: {
    type: "string",
    value: "+Nd|+Nh[:sms][:TEMPLATE]",
    multiple: true,
    key: "steps",
    help: "a later step, N days (same local time) or hours after the first; :sms a text",
    group: SEND_TIME_GROUP,
  },
  "default-timezone": {
    type: "string",
    value: "ZONE",
    help: "the zone of rows without a known one (noted); VALUE (CST) read as ZONE",
    default: "UTC",
    group: SEND_TIME_GROUP,
  },
  ...nowFlag("what the plan is made against", SEND_TIME_GROUP),
} as const;

const LIST_GROUP = "Recipient list";

/** How the recipient list is read and checked (both tools, so they count the same rows). */
export const RECIPIENT_FLAGS = {
  encoding: {
    type: "string",
    // `utf-8` is how most tools spell it; `UTF8` and `Latin-1` too.
    parse: choice(CSV_ENCODINGS, (raw) => raw.toLowerCase().replace(/^(utf|latin)-/, "$1")),
    help: "how the file is encoded (invalid UTF-8 stops with line and byte)",
    default: "utf8",
    group: LIST_GROUP,
  },
  "allow-duplicate-emails": {
    type: "boolean",
    help: "shared addresses; zone: infer, reject",
    group: LIST_GROUP,
  },
  "zone-alias": {
    type: "string",
    value: "VALUE=ZONE",
    multiple: true,
    help: "read a timezone value (CST, an abbreviation the zone table cannot choose for) as this IANA zone",
    group: LIST_GROUP,
    with: "default-timezone",
  },
  "infer-zone": {
    type: "string",
    value: "none|LIST",
    parse: listOf(INFER_SOURCES),
    help: "what a row without a usable timezone takes its zone from, in order: latlon (latitude/longitude), postal (postal_code, with country), phone, country (when it has one zone)",
    default: INFER_SOURCES,
    group: LIST_GROUP,
    with: "allow-duplicate-emails",
  },
  "ambiguous-zone": {
    type: "string",
    parse: choice(AMBIGUOUS_ZONE_POLICIES),
    help: "a row whose phone or postal code admits several zones: send when the time has come in all of them, or reject it (ambiguous-zone)",
    default: "never-early",
    group: LIST_GROUP,
    with: "allow-duplicate-emails",
  },
  "strict-zones": {
    type: "boolean",
    help: "reject rows with a missing or unknown zone (unknown-zone), or one the zone table maps (EST), instead of defaulting or mapping them",
    group: LIST_GROUP,
    with: "allow-duplicate-emails",
  },
} as const;

export interface RecipientOptions {
  encoding: CsvEncoding;
  allowDuplicateEmails: boolean;
  strictZones: boolean;
  zoneAliases: ZoneAliases;
  inferZone: readonly InferSource[];
  ambiguousZone: AmbiguousZonePolicy;
}

/** The recipient flags' typed values (RECIPIENT_FLAGS: parsed and defaulted by the table) as the reader takes them. */
export function recipientOptionsFromFlags(f: {
  encoding: CsvEncoding;
  "allow-duplicate-emails": boolean;
  "strict-zones": boolean;
  "zone-alias"?: string[];
  "infer-zone": readonly InferSource[];
  "ambiguous-zone": AmbiguousZonePolicy;
}): RecipientOptions {
  return {
    encoding: f.encoding,
    allowDuplicateEmails: f["allow-duplicate-emails"],
    strictZones: f["strict-zones"],
    zoneAliases: zoneAliasesFromFlags(f["zone-alias"] ?? []),
    inferZone: f["infer-zone"],
    ambiguousZone: f["ambiguous-zone"],
  };
}

function zoneAliasesFromFlags(values: string[]): ZoneAliases {
  const aliases = parseZoneAliases(values);
  if (typeof aliases === "string") throw new UsageError(aliases);
  return aliases;
}

/** Help group of the rate and pace flags. */
export const RATE_GROUP = "Window and rate";

/** The margin a launch keeps after the fan-out's estimated end, in minutes. */
const MARGIN_MINUTES = 5;

/** How fast the fan-out creates schedules and how much margin a launch keeps: the launcher and size-window alike. */
export const PACE_FLAGS = {
  "create-tps": {
    type: "string",
    value: "C",
    help: `fan-out CreateSchedule/s (default: the stack's quota × ${FANOUT_HEADROOM}: ${count(fanOutCreateRate(scheduler.createScheduleTps))})`,
    group: RATE_GROUP,
  },
  "margin-minutes": {
    type: "string",
    value: "M",
    help: "safety margin after the fan-out's estimated end",
    defaultHelp: `${MARGIN_MINUTES}`,
    group: RATE_GROUP,
    with: "create-tps",
  },
} as const;

/** The fan-out rate and margin; `stackCreateScheduleTps` is the stack's quota when known. */
export function paceFromFlags(
  f: { "create-tps"?: string; "margin-minutes"?: string },
  stackCreateScheduleTps: number = scheduler.createScheduleTps,
): { createTps: number; marginMinutes: number } {
  return {
    createTps:
      f["create-tps"] === undefined
        ? fanOutCreateRate(stackCreateScheduleTps)
        : positive().parse(f["create-tps"], "create-tps"),
    marginMinutes:
      f["margin-minutes"] === undefined ? MARGIN_MINUTES : int(0, 1_440).parse(f["margin-minutes"], "margin-minutes"),
  };
}

export const RATE_FLAGS = {
  tps: {
    type: "string",
    value: "T",
    help: "sends/s held (or the lower of the two quotas); texts: the pool's message parts/s",
    group: RATE_GROUP,
    oneOf: { group: "rate", form: "tps" },
  },
  "invocation-tps": {
    type: "string",
    value: "T",
    help: "Scheduler invocation quota",
    defaultHelp: `${scheduler.invocationTps}`,
    group: RATE_GROUP,
    with: "tps",
    oneOf: { group: "rate", form: "quotas" },
  },
  "ses-rate": {
    type: "string",
    value: "R",
    help: "SES maximum send rate (a launch's default: the account's MaxSendRate)",
    group: RATE_GROUP,
    with: "tps",
    oneOf: { group: "rate", form: "quotas" },
  },
  ramp: {
    type: "string",
    value: "new-identity|FILE",
    path: true,
    words: Object.keys(RAMP_PRESETS),
    help: "a cap of sends per UTC day, the rest moved on (FILE: a cap a line, the last repeating)",
    group: RATE_GROUP,
  },
  ...SMS_PACE_FLAGS,
} as const;

/** When a campaign sends, and to whom: the base rule, every step, the default zone, quiet time and variants. */
export interface CampaignTiming {
  rule: BaseRule;
  steps: Step[];
  defaultZone: string;
  quiet?: QuietTime;
  audience: Audience;
}

/** The send-time flags, checked. `template` (launcher) is step 1's and the default of later steps. */
export function timingFromFlags(
  f: TimingFlagValues & { step?: string[]; "default-timezone"?: string; now?: number; channel?: Step["channel"] },
  template?: string,
): CampaignTiming {
  const rule = baseRuleFromFlags(f);
  if (rule.kind === "every") checkRecurring(f, rule, nowFromFlag(f.now));
  if (rule.kind === "every" && f.channel === "sms")
    throw new UsageError(`--channel sms does not apply to --every ${f.every}: a text is a one-time send`);
  const steps: Step[] = [{ number: 1, days: 0, template, ...(f.channel === "sms" ? { channel: "sms" as const } : {}) }];
  const raws = ["the first send"];
  for (const raw of f.step ?? []) {
    const step = parseStepFlag(raw, steps.length + 1);
    const same = steps.findIndex((s) => sameStepOffset(s, step));
    if (same !== -1)
      throw new UsageError(
        `--step ${raw}: the same offset as step ${same + 1} (${raws[same]}): two sends to each recipient at one instant`,
      );
    steps.push({ ...step, template: step.template ?? template });
    raws.push(raw);
  }
  const rawZone = f["default-timezone"] ?? "UTC";
  // A name differing only in case is re-cased, as ever; an abbreviation (EST: IANA's fixed UTC-5) is refused.
  const defaultZone = canonicalZone(rawZone);
  const problem = zoneNameProblem(defaultZone ?? rawZone);
  if (problem) throw new UsageError(`--default-timezone ${rawZone}: ${problem}`);
  const audience = audienceFromFlags(f);
  if (template !== undefined)
    checkTemplates(audience, [
      { flag: "--template", template },
      ...(f.step ?? []).map((raw, k) => ({ flag: `--step ${raw}`, template: steps[k + 1].template })),
    ]);
  return { rule, steps, defaultZone: defaultZone!, quiet: quietTimeFromFlags(f), audience };
}

const DAY_MS = 86_400_000;

/**
 * What a recurring send cannot be combined with, and a --until it cannot reach: each refused with one line naming the
 * flag. The recurring time is the same local time at every occurrence, so quiet hours are checked once, here.
 */
function checkRecurring(
  f: TimingFlagValues & { step?: string[] },
  rule: Extract<BaseRule, { kind: "every" }>,
  now: number,
): void {
  const every = `--every ${f.every}`;
  if (f.step?.length)
    throw new UsageError(
      `--step ${f.step[0]} does not apply to ${every}: a recurring send is one message per occurrence (launch another recurring campaign for another message)`,
    );
  if (f["quiet-days"] !== undefined)
    throw new UsageError(
      `--quiet-days ${f["quiet-days"]} does not apply to ${every}: choose the days to send instead (--every weekly:MON,TUE,...)`,
    );
  const quiet = quietTimeFromFlags(f);
  const at = `${String(rule.hour).padStart(2, "0")}:${String(rule.minute).padStart(2, "0")}`;
  if (quiet?.hours && inQuietHours(quiet, rule.hour * 60 + rule.minute))
    throw new UsageError(
      `--hour/--minute ${at} is inside --quiet-hours ${f["quiet-hours"]}: every occurrence of ${every} would be quiet`,
    );
  const { year, month, day } = rule.until;
  const untilMs = Date.UTC(year, month - 1, day);
  // Local midnight after --until comes last at UTC-12: past that, the date has ended in every zone.
  if (untilMs + DAY_MS + 12 * 3_600_000 <= now)
    throw new UsageError(
      `--until ${f.until}: that date has ended in every time zone (now is ${new Date(now).toISOString()})`,
    );
  if (year > scheduler.cronYears.max)
    throw new UsageError(
      `--until ${f.until}: EventBridge Scheduler's cron expressions end with the year ${scheduler.cronYears.max}`,
    );
  if (untilMs > now + recurringSends.maxYears * 365.25 * DAY_MS)
    throw new UsageError(
      `--until ${f.until}: more than ${recurringSends.maxYears} years ahead; each recipient's schedule holds one of the Region's schedules until then (launch again later instead)`,
    );
}

const STEP_FLAG = /^\+(\d{1,3})([dh])(?::(.*))?$/;

/**
 * `+3d`, `+3d:followup`, `+12h:reminder`: offsets from step 1, optionally the step's SES template; `+1d:sms:NAME` a
 * text from templates/NAME/sms.txt (an SMS step names its template), `+1d:email:NAME` an email said so.
 */
export function parseStepFlag(raw: string, number: number): Step {
  const m = STEP_FLAG.exec(raw);
  const channel = /^(sms|email)(?::|$)/.exec(m?.[3] ?? "")?.[1] as Step["channel"] | undefined;
  const template = channel ? m![3].slice(channel.length + 1) || undefined : m?.[3];
  // `{variant}` is checked once the variants are known (checkTemplates).
  if (
    !m ||
    Number(m[1]) === 0 ||
    (template !== undefined && !SES_NAME.test(template.split(VARIANT_PLACEHOLDER).join("v")))
  )
    throw new UsageError(
      `--step ${raw}: expected +Nd or +Nh (N from 1 to 999, from the first send), optionally :TEMPLATE or :sms:TEMPLATE (1–64 of A-Z a-z 0-9 _ -)`,
    );
  if (channel === "sms" && template === undefined)
    throw new UsageError(
      `--step ${raw}: a text step names its template: +${m[1]}${m[2]}:sms:TEMPLATE (templates/TEMPLATE/sms.txt)`,
    );
  return {
    number,
    [m[2] === "d" ? "days" : "hours"]: Number(m[1]),
    template,
    ...(channel === "sms" ? { channel } : {}),
  };
}

/**
 * --now as epoch milliseconds (default: the current time). Only an instant that means the same on every machine:
 * ISO 8601 with `Z` or an offset (a time without one would be read in the machine's zone).
 */
export function nowFromFlag(now: number | undefined): number {
  return now ?? Date.now();
}

export function rateFromFlags(f: { tps?: string; "invocation-tps"?: string; "ses-rate"?: string }): EffectiveTps {
  if (f.tps !== undefined && (f["invocation-tps"] !== undefined || f["ses-rate"] !== undefined)) {
    throw new UsageError("--tps replaces --invocation-tps and --ses-rate: give one or the others");
  }
  const optional = (name: string, raw: string | undefined) =>
    raw === undefined ? undefined : positive().parse(raw, name);
  return effectiveTps({
    tps: optional("tps", f.tps),
    invocationTps: optional("invocation-tps", f["invocation-tps"]),
    sesRate: optional("ses-rate", f["ses-rate"]),
  });
}

/** The rate sends may reach: an explicit TPS, or the lower of the invocation quota and the SES sending rate. */
export function effectiveTps(o: { tps?: number; invocationTps?: number; sesRate?: number }): EffectiveTps {
  if (o.tps !== undefined) return { tps: o.tps, source: "--tps" };
  const invocation = o.invocationTps ?? scheduler.invocationTps;
  const invocationSource =
    o.invocationTps === undefined
      ? "Scheduler invocation quota, default"
      : "Scheduler invocation quota, --invocation-tps";
  if (o.sesRate !== undefined && o.sesRate < invocation)
    return { tps: o.sesRate, source: "SES maximum send rate, --ses-rate" };
  return { tps: invocation, source: invocationSource };
}

/**
 * The two rates a bulk plan's window holds (--bulk): its emails, at --tps or else --ses-rate (without it, as without
 * --bulk, the invocation quota is assumed: SES's rate is not known here), and its schedules' invocations, at --tps or
 * else the Scheduler invocation quota (--invocation-tps, default 1,000/s).
 */
export function bulkRatesFromFlags(f: { tps?: string; "invocation-tps"?: string; "ses-rate"?: string }): {
  emails: EffectiveTps;
  invocations: EffectiveTps;
} {
  const all = rateFromFlags(f); // checks --tps against the others
  if (all.source === "--tps") return { emails: all, invocations: all };
  const given = f["invocation-tps"] === undefined ? undefined : positive().parse(f["invocation-tps"], "invocation-tps");
  const invocations = effectiveTps({ invocationTps: given });
  // An invocation sends up to 50 emails: the emails are held to SES's rate alone.
  const emails =
    f["ses-rate"] === undefined
      ? { tps: invocations.tps, source: `${invocations.source}; SES rate not given (--ses-rate), assumed the same` }
      : { tps: positive().parse(f["ses-rate"], "ses-rate"), source: "SES maximum send rate, --ses-rate" };
  return { emails, invocations };
}

/**
 * A recurring send whose flexible window could put two of a recipient's occurrences less than MIN_GAP_MINUTES
 * apart (or its last wanted one past its EndDate): why it is refused, naming the flags, or undefined when it fits.
 */
export function recurringWindowRefusal(
  rule: BaseRule,
  every: string | undefined,
  windowMinutes: number,
  source: "--window-minutes" | "computed",
): string | undefined {
  if (rule.kind !== "every") return undefined;
  const max = maxRecurringWindowMinutes(rule.recurrence);
  if (windowMinutes <= max) return undefined;
  const fix =
    source === "--window-minutes"
      ? `give --window-minutes ${max} or less`
      : `raise the send rate (--tps, or --invocation-tps and --ses-rate) so a smaller window holds the sends, or split the campaign`;
  return `a flexible window of ${count(windowMinutes)} minutes (${source}) is too long for --every ${every}: two occurrences of one recipient could be sent less than ${MIN_GAP_MINUTES} minutes apart; at most ${count(max)} minutes: ${fix}`;
}
