/**
 * Journey definitions: per-subscriber sequences started by an event (signed up → welcome now, tips 3 days later at
 * 09:00 their time) and stopped by another (upgraded). Read from stack config `sendtime:journeys` (a JSON list) and,
 * for scripts/enrol.ts, from a file with the same list. Pure: no Pulumi, no AWS SDK.
 *
 * A journey: {name, trigger: {source, detailType}, exit?: {source, detailType},
 *             steps: [{after: "+Nh" | "+Nd", at?: "HH:MM", template, channel?: "email" | "sms",
 *                      legalHours?: "us" | "ca" | "us,ca" | "none", maxSegments?}], defaultTimezone?,
 *             quietHours?: "HH:MM-HH:MM", quietDays?: "SAT,SUN" | ["SAT", "SUN"], lateGraceMinutes?, maxSegments?}
 * A step of channel `sms` texts templates/<template>/sms.txt to the subscriber's phone (sms-steps.ts).
 * Two steps with equal offsets (`+0h` twice, `+24h` and `+1d`, the same `after` and `at`) are refused
 * (infra/core/timing/promises.ts: never two at once).
 * Its schedules live in group `campaign-<name>`, so every IAM scope stays `campaign-*`.
 */
import { WEEKDAY_NAMES } from "../timing/quiet-time";
import { DEFAULT_LATE_GRACE_MINUTES, equalStepOffsets, StepOffset } from "../timing/promises";
import { campaignIdProblem, SES_NAME } from "../plan/naming";
import { InputError } from "../errors";
import { CHANNELS, Channel } from "../send/sms-input";
import { LEGAL_HOURS_PRESETS, LegalHoursPreset } from "../sms/legal-hours";

/** A bad journey definition: one line naming the journey and the field. */
export class JourneyDefinitionError extends InputError {}

export interface EventMatch {
  /** The event's `source`, e.g. `com.example.app`. */
  source: string;
  /** The event's `detail-type`, e.g. `UserSignedUp`. */
  detailType: string;
}

export interface JourneyStep {
  /** `+Nh`: N hours after the trigger; `+Nd`: the trigger's local date N days later (at `at`, or at the trigger's local time). */
  after: string;
  /** Local time `HH:MM` for a `+Nd` step. */
  at?: string;
  /** The SES template this step sends; for an SMS step, the folder of its `sms.txt` (templates/<template>/sms.txt). */
  template: string;
  /** `sms`: a text to the subscriber's phone instead of an email. @default "email" */
  channel?: Channel;
  /**
   * SMS steps only: the legal hours that hold the text (docs/sms.md), resolved per subscriber from their zone and
   * their number's area code; a step outside them moves to the next legal instant. @default none
   */
  legalHours?: LegalHoursPreset[];
  /** SMS steps only: the most message parts the rendered text may take. @default the journey's maxSegments, else 3 */
  maxSegments?: number;
}

export interface Journey {
  name: string;
  trigger: EventMatch;
  exit?: EventMatch;
  steps: JourneyStep[];
  /** Zone of a subscriber whose event has no (or an unknown) zone. @default "UTC" */
  defaultTimezone?: string;
  /** Local quiet hours, start inclusive, end exclusive, may wrap midnight: a step due then waits for their end. */
  quietHours?: string;
  /** Whole local days without sends (MON … SUN), upper case; a step due then waits for the next day that is not. */
  quietDays?: string[];
  /**
   * Late, not lost: a step handled up to this many minutes after its time (a slow or retried delivery) is sent at
   * once; a later one is reported late (a metric and an alarm) and not sent. 0–1440.
   * @default 60 (DEFAULT_LATE_GRACE_MINUTES)
   */
  lateGraceMinutes?: number;
  /** The most message parts an SMS step's text may take, unless the step says. 1–10. @default 3 */
  maxSegments?: number;
}

/** A journey's late grace, in minutes: its setting or the default. */
export function lateGraceMinutes(journey: Journey): number {
  return journey.lateGraceMinutes ?? DEFAULT_LATE_GRACE_MINUTES;
}

/** A journey step's offset in the promises' terms. */
export function journeyStepOffset(step: JourneyStep): StepOffset {
  const m = STEP_AFTER.exec(step.after);
  if (!m) throw new Error(`step after "${step.after}" is not +Nh or +Nd`);
  return { [m[2] === "h" ? "hours" : "days"]: Number(m[1]), ...(step.at !== undefined ? { at: step.at } : {}) };
}

const MAX_LATE_GRACE_MINUTES = 1_440;

/**
 * The metric of journey steps not sent because they were handled after their grace (the handler writes it in
 * Embedded Metric Format; infra/alarms.ts alarms on it per journey).
 */
export const LATE_STEPS_METRIC = { namespace: "sendtime/journeys", name: "LateSteps", dimension: "journey" } as const;
/** The metric of triggers delivered again after they enrolled the subscriber: nothing created (the handler writes it). */
export const DUPLICATE_TRIGGERS_METRIC = { ...LATE_STEPS_METRIC, name: "DuplicateTriggers" } as const;

const QUIET_HOURS = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$/;

/** The step offsets journeys accept: `+0h`…`+999h`, `+0d`…`+999d`. */
export const STEP_AFTER = /^\+(\d{1,3})([hd])$/;
const AT = /^([01]\d|2[0-3]):([0-5]\d)$/;
/**
 * A journey's name names its EventBridge rules, `journeys-<name>-trigger` and `-exit`, which Pulumi suffixes with `-`
 * and 7 hex digits; a rule name is at most 64 characters.
 */
export const MAX_JOURNEY_NAME = 64 - "journeys-".length - "-trigger".length - 8;

/** EventBridge `source` and `detail-type`: non-empty, at most 256 and 128 characters (PutEvents). */
const MAX_SOURCE = 256;
const MAX_DETAIL_TYPE = 128;
const MAX_STEPS = 20;
const JOURNEY_KEYS = [
  "name",
  "trigger",
  "exit",
  "steps",
  "defaultTimezone",
  "quietHours",
  "quietDays",
  "lateGraceMinutes",
  "maxSegments",
];
const STEP_KEYS = ["after", "at", "template", "channel", "legalHours", "maxSegments"];
/** Message parts an SMS step may be limited to (10 parts of GSM-7 are 1,530 characters). */
export const MAX_SEGMENTS_LIMIT = 10;

/**
 * Validates a list of journeys. `where` prefixes every message (`sendtime:journeys`, a file name); `isZone` tells
 * whether a defaultTimezone is an IANA name (the caller's zone database: infra has none of its own).
 */
export function parseJourneys(
  value: unknown,
  where: string,
  isZone: (zone: string) => boolean = () => true,
): Journey[] {
  if (!Array.isArray(value))
    throw new JourneyDefinitionError(`${where}: expected a list of journeys, got ${describe(value)}`);
  const names = new Set<string>();
  return value.map((raw, i) => {
    const label = typeof raw?.name === "string" ? `journey "${raw.name}"` : `journey ${i + 1}`;
    const fail = (field: string, problem: string): never => {
      throw new JourneyDefinitionError(`${where}: ${label}: ${field} ${problem}`);
    };
    const journey = parseJourney(raw, fail, isZone);
    if (names.has(journey.name)) fail("name", `"${journey.name}" is used by another journey: names must be unique`);
    names.add(journey.name);
    return journey;
  });
}

type Fail = (field: string, problem: string) => never;

function parseJourney(raw: any, fail: Fail, isZone: (zone: string) => boolean): Journey {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    fail("", `must be an object, got ${describe(raw)}`);
  for (const key of Object.keys(raw))
    if (!JOURNEY_KEYS.includes(key)) fail(key, `is not a journey field (allowed: ${JOURNEY_KEYS.join(", ")})`);
  if (typeof raw.name !== "string") fail("name", `is required: 1–${MAX_JOURNEY_NAME} characters of 0-9 a-z A-Z - _ .`);
  if (raw.name.length > MAX_JOURNEY_NAME)
    fail(
      "name",
      `is ${raw.name.length} characters: at most ${MAX_JOURNEY_NAME} (the EventBridge rule journeys-<name>-trigger, with Pulumi's 8-character suffix, must fit in 64)`,
    );
  if (campaignIdProblem(raw.name))
    fail("name", `"${raw.name}" must be 1–${MAX_JOURNEY_NAME} characters of 0-9 a-z A-Z - _ .`);
  const trigger = parseMatch(raw.trigger, "trigger", fail);
  const exit = raw.exit === undefined ? undefined : parseMatch(raw.exit, "exit", fail);
  if (exit && exit.source === trigger.source && exit.detailType === trigger.detailType)
    fail("exit", "matches the same events as trigger");
  if (!Array.isArray(raw.steps) || raw.steps.length === 0 || raw.steps.length > MAX_STEPS)
    fail("steps", `must be a list of 1 to ${MAX_STEPS} steps, got ${describe(raw.steps)}`);
  const steps: JourneyStep[] = raw.steps.map((s: any, k: number) => parseStep(s, `steps[${k}]`, fail));
  const equal = equalStepOffsets(steps.map(journeyStepOffset));
  if (equal) {
    const [i, j] = equal;
    const written = (s: JourneyStep) => `${s.after}${s.at !== undefined ? ` at ${s.at}` : ""}`;
    fail(
      `steps[${j}]`,
      `(${written(steps[j])}) has the same offset as steps[${i}] (${written(steps[i])}): two sends to each subscriber at one instant; remove one or change its offset`,
    );
  }
  let grace: number | undefined;
  if (raw.lateGraceMinutes !== undefined) {
    if (
      !Number.isInteger(raw.lateGraceMinutes) ||
      raw.lateGraceMinutes < 0 ||
      raw.lateGraceMinutes > MAX_LATE_GRACE_MINUTES
    )
      fail(
        "lateGraceMinutes",
        `${JSON.stringify(raw.lateGraceMinutes)} is not valid: a whole number of minutes from 0 to ${MAX_LATE_GRACE_MINUTES} (default ${DEFAULT_LATE_GRACE_MINUTES})`,
      );
    grace = raw.lateGraceMinutes;
  }
  let defaultTimezone: string | undefined;
  if (raw.defaultTimezone !== undefined) {
    if (typeof raw.defaultTimezone !== "string" || !isZone(raw.defaultTimezone))
      fail(
        "defaultTimezone",
        `${JSON.stringify(raw.defaultTimezone)} is not an IANA time zone name (e.g. America/New_York)`,
      );
    defaultTimezone = raw.defaultTimezone;
  }
  const quiet = parseQuiet(raw, fail);
  const maxSegments =
    raw.maxSegments === undefined ? undefined : parseMaxSegments(raw.maxSegments, "maxSegments", fail);
  return {
    name: raw.name,
    trigger,
    ...(exit ? { exit } : {}),
    steps,
    ...(defaultTimezone ? { defaultTimezone } : {}),
    ...quiet,
    ...(grace !== undefined ? { lateGraceMinutes: grace } : {}),
    ...(maxSegments !== undefined ? { maxSegments } : {}),
  };
}

function parseQuiet(raw: any, fail: Fail): Pick<Journey, "quietHours" | "quietDays"> {
  const out: Pick<Journey, "quietHours" | "quietDays"> = {};
  if (raw.quietHours !== undefined) {
    const m = typeof raw.quietHours === "string" ? QUIET_HOURS.exec(raw.quietHours) : null;
    if (!m)
      fail(
        "quietHours",
        `${JSON.stringify(raw.quietHours)} is not valid: HH:MM-HH:MM in the subscriber's zone (e.g. 21:00-08:00)`,
      );
    if (m![1] === m![3] && m![2] === m![4])
      fail("quietHours", `${raw.quietHours} starts and ends at the same minute; whole days are quietDays`);
    out.quietHours = raw.quietHours;
  }
  if (raw.quietDays !== undefined) {
    const list = typeof raw.quietDays === "string" ? raw.quietDays.split(",") : raw.quietDays;
    const names = Array.isArray(list)
      ? list.map((d: unknown) => (typeof d === "string" ? d.trim().toUpperCase() : ""))
      : [];
    if (!names.length || names.some((d: string) => !(WEEKDAY_NAMES as readonly string[]).includes(d)))
      fail(
        "quietDays",
        `${JSON.stringify(raw.quietDays)} is not valid: day names ${WEEKDAY_NAMES.join(",")} (e.g. "SAT,SUN")`,
      );
    const unique = [...new Set<string>(names)];
    if (unique.length === 7) fail("quietDays", "makes every day quiet: nothing would ever be sent");
    out.quietDays = unique;
  }
  return out;
}

function parseMatch(raw: any, field: string, fail: Fail): EventMatch {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    fail(field, `must be {source, detailType}, got ${describe(raw)}`);
  for (const key of Object.keys(raw))
    if (!["source", "detailType"].includes(key)) fail(`${field}.${key}`, "is not a field (source, detailType)");
  if (typeof raw.source !== "string" || raw.source.trim() === "" || raw.source.length > MAX_SOURCE)
    fail(`${field}.source`, `must be the event's source, 1–${MAX_SOURCE} characters (e.g. com.example.app)`);
  if (typeof raw.detailType !== "string" || raw.detailType.trim() === "" || raw.detailType.length > MAX_DETAIL_TYPE)
    fail(`${field}.detailType`, `must be the event's detail-type, 1–${MAX_DETAIL_TYPE} characters (e.g. UserSignedUp)`);
  return { source: raw.source, detailType: raw.detailType };
}

function parseStep(raw: any, field: string, fail: Fail): JourneyStep {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    fail(field, `must be {after, at?, template, channel?}, got ${describe(raw)}`);
  for (const key of Object.keys(raw))
    if (!STEP_KEYS.includes(key)) fail(`${field}.${key}`, `is not a step field (${STEP_KEYS.join(", ")})`);
  const m = typeof raw.after === "string" ? STEP_AFTER.exec(raw.after) : null;
  if (!m)
    fail(`${field}.after`, `${JSON.stringify(raw.after)} is not valid: +Nh or +Nd, N from 0 to 999 (e.g. +0h, +3d)`);
  if (raw.at !== undefined) {
    if (m![2] !== "d")
      fail(`${field}.at`, `goes with a +Nd step only (${raw.after} is a number of hours after the trigger)`);
    if (typeof raw.at !== "string" || !AT.test(raw.at))
      fail(`${field}.at`, `${JSON.stringify(raw.at)} is not valid: local time HH:MM (00:00–23:59)`);
  }
  if (typeof raw.template !== "string" || !SES_NAME.test(raw.template))
    fail(
      `${field}.template`,
      `${JSON.stringify(raw.template)} is not valid: an SES template name, 1–64 of A-Z a-z 0-9 _ -`,
    );
  return {
    after: raw.after,
    ...(raw.at !== undefined ? { at: raw.at } : {}),
    template: raw.template,
    ...parseChannel(raw, field, fail),
  };
}

/** A step's channel and, for an SMS step, its legal hours and segment limit (refused on an email step). */
function parseChannel(
  raw: any,
  field: string,
  fail: Fail,
): Pick<JourneyStep, "channel" | "legalHours" | "maxSegments"> {
  if (raw.channel !== undefined && !(CHANNELS as readonly unknown[]).includes(raw.channel))
    fail(`${field}.channel`, `${JSON.stringify(raw.channel)} is not valid: ${CHANNELS.join(" or ")} (default email)`);
  const channel: Channel = raw.channel ?? "email";
  if (channel === "email") {
    for (const key of ["legalHours", "maxSegments"])
      if (raw[key] !== undefined) fail(`${field}.${key}`, `goes with channel: sms only (this step is an email)`);
    return raw.channel === undefined ? {} : { channel };
  }
  const out: Pick<JourneyStep, "channel" | "legalHours" | "maxSegments"> = { channel };
  if (raw.legalHours !== undefined) {
    const presets = parseLegalHours(raw.legalHours);
    if (!presets)
      fail(
        `${field}.legalHours`,
        `${JSON.stringify(raw.legalHours)} is not valid: us, ca, "us,ca" or none (the legal hours' presets, docs/sms.md)`,
      );
    if (presets!.length) out.legalHours = presets!;
  }
  if (raw.maxSegments !== undefined) out.maxSegments = parseMaxSegments(raw.maxSegments, `${field}.maxSegments`, fail);
  return out;
}

/** `us`, `ca`, `us,ca`, `["us", "ca"]` or `none` (no presets), or undefined when it is none of these. */
function parseLegalHours(value: unknown): LegalHoursPreset[] | undefined {
  const list = typeof value === "string" ? value.split(",") : Array.isArray(value) ? value : undefined;
  if (!list || list.length === 0 || list.some((p) => typeof p !== "string")) return undefined;
  const names = (list as string[]).map((p) => p.trim().toLowerCase());
  if (names.length === 1 && names[0] === "none") return [];
  if (names.some((p) => !(p in LEGAL_HOURS_PRESETS))) return undefined;
  return [...new Set(names)] as LegalHoursPreset[];
}

function parseMaxSegments(value: unknown, field: string, fail: Fail): number {
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > MAX_SEGMENTS_LIMIT)
    fail(
      field,
      `${JSON.stringify(value)} is not valid: a whole number of message parts from 1 to ${MAX_SEGMENTS_LIMIT} (default 3)`,
    );
  return value as number;
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (Array.isArray(v)) return `a list of ${v.length}`;
  return v === null ? "null" : typeof v === "object" ? "an object" : JSON.stringify(v);
}

/** EventBridge event bus names: 1–256 of A-Z a-z 0-9 . _ - / (a partner bus name has slashes). */
export const EVENT_BUS_NAME = /^[/.\-_A-Za-z0-9]{1,256}$/;

/**
 * The function's environment holds the journeys as JSON, and Lambda allows 4 KB (bytes) of environment in all; the
 * rest (the SES target settings) needs about 1 KB.
 */
export const MAX_JOURNEYS_JSON = 3_000;

/** The stack config keys parseJourneyConfig reads. */
export const JOURNEY_CONFIG_KEYS = ["journeys", "eventBusName"] as const;

/** Stack config: `sendtime:journeys` (a list, JSON) and `sendtime:eventBusName`. `get` returns a key's raw string. */
export function parseJourneyConfig(
  get: (key: string) => string | undefined,
  isZone: (zone: string) => boolean,
): { journeys: Journey[]; eventBusName: string } {
  const bus = get("eventBusName")?.trim() || "default";
  if (!EVENT_BUS_NAME.test(bus))
    throw new JourneyDefinitionError(
      `sendtime:eventBusName = "${bus}" is not valid: an event bus name, 1–256 of A-Z a-z 0-9 . _ - /`,
    );
  const raw = get("journeys");
  if (raw === undefined || raw.trim() === "") return { journeys: [], eventBusName: bus };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    throw new JourneyDefinitionError(
      `sendtime:journeys is not valid JSON (${(e as Error).message}): give a list of journeys`,
    );
  }
  const journeys = parseJourneys(value, "sendtime:journeys", isZone);
  // In bytes, as Lambda counts its environment: a character outside ASCII is 2 to 4 of them.
  const size = Buffer.byteLength(JSON.stringify(journeys), "utf8");
  if (size > MAX_JOURNEYS_JSON)
    throw new JourneyDefinitionError(
      `sendtime:journeys is ${size} bytes as JSON, over ${MAX_JOURNEYS_JSON}: the enrolment function's environment (4 KB in all) cannot hold it; shorten the journeys or split them across stacks`,
    );
  return { journeys, eventBusName: bus };
}
