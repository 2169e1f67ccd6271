/**
 * Journeys' core: what one event means for one subscriber — the schedules to create (trigger) or delete (exit) —
 * decided with the launcher's send-time rules (zones, DST gap and overlap, schedule names, the SES target).
 * Pure: the deployed handler and scripts/enrol.ts both call it, then do the AWS calls (infra/handlers/enrolment.ts).
 * A trigger is named by its id (triggerId: the event's `id`, else `at.<trigger time>`), under which its enrolment is
 * claimed once in the occurrence ledger (enrolmentClaim), so a duplicate of the trigger creates nothing.
 *
 * Step time: `+Nh` = trigger + N hours; `+Nd` = the trigger's local wall-clock time N days later, or with `at` that
 * local date at HH:MM (a time in a DST gap moves forward by the gap, a repeated one takes the earlier). A time not at
 * least one minute after the trigger moves to the next day (with `at`) or to trigger + 1 minute. Minutes round up.
 * Then quiet time (quietHours, quietDays in the subscriber's zone) delays a step until its whole flexible window is
 * free, as the launcher's `--quiet delay` does. Then the promises every path keeps (infra/core/timing/promises.ts): a step
 * due before it can be created (now + CREATE_LEAD_MS) is sent at once when it is at most the journey's
 * lateGraceMinutes late, reported `late` when later (late, not lost); a step within MIN_GAP_MINUTES of, or before, an
 * earlier step kept is dropped and listed (never two at once, in order).
 */
import { Journey, JourneyStep, lateGraceMinutes, STEP_AFTER } from "./journeys-definition";
import {
  CREATE_LEAD_MS,
  droppedSends,
  endOfQuietAcross,
  endOfQuietWindow,
  longestFreeMinutes,
  MIN_GAP_MINUTES,
} from "../timing/promises";
import { campaignGroupName, scheduleName } from "../plan/naming";
import { ses } from "../plan/quotas";
import { atExpression } from "../plan/plan-row";
import {
  createScheduleRequest,
  CreateScheduleRequest,
  DeleteScheduleRequest,
  ScheduleTarget,
} from "../plan/schedule-request";
import { describeQuietTime, QuietTime, WEEKDAY_NAMES } from "../timing/quiet-time";
import { readCoordinates } from "../zones/coordinates";
import { readPhone } from "../zones/phone";
import { readPostal } from "../zones/postal";
import {
  addDays,
  canonicalZone,
  Fold,
  LocalTime,
  localTimeOf,
  scheduledTime,
  ScheduledTime,
  writable,
  ResolvedZone,
  ZoneResolver,
  ZoneStatus,
  zonedInstant,
} from "../timing/send-time";
import { zoneNameProblem } from "../zones/zone-names";
import { parseInstant } from "../timing/send-rules";
import { isEmailAddress } from "../send/email";
import { enrolmentKey, LEDGER_TTL_DAYS } from "../send/ledger";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The longest event id kept as it is in an enrolment key (EventBridge's are 36-character UUIDs). */
const MAX_TRIGGER_ID_CHARS = 256;

/** Recipient fields that steer sending; every other field is personalization (template data). */
const CONTROL_FIELDS = ["id", "email", "timezone"];
const STEP_KEY = "step";

export type EventKind = "trigger" | "exit";

/** What the rule target hands the enrolment handler: the journey, which of its rules matched, and the event. */
export interface JourneyInvocation {
  journey: string;
  kind: EventKind;
  event: JourneyEvent;
}

/** An EventBridge event as delivered; `detail.recipient` is the subscriber. */
export interface JourneyEvent {
  id?: string;
  source?: string;
  "detail-type"?: string;
  time?: string;
  detail?: { recipient?: Record<string, unknown> } & Record<string, unknown>;
}

/** How schedules are made: the stack's SES target and flexible window. */
export interface EnrolmentSettings {
  target: ScheduleTarget;
  windowMinutes: number;
}

export type RejectReason =
  | "invalid-event"
  | "missing-id"
  | "missing-email"
  | "invalid-email"
  | "too-large"
  | "reserved-field"
  /** detail.recipient.timezone names several zones (`CST`: US Central, China, Cuba; zone-abbreviations.ts). */
  | "ambiguous-zone"
  /** No usable timezone, and latitude/longitude that are not decimal degrees in range, or one without the other. */
  | "invalid-coordinates"
  /** No usable timezone, and a postal_code not in its country's form (postal.ts). */
  | "invalid-postal-code"
  /** No usable timezone, and a phone that libphonenumber does not take as valid (phone.ts). */
  | "invalid-phone"
  /** A backlog CSV's own checks (scripts/enrol.ts). */
  | "duplicate-id"
  | "duplicate-email"
  | "wrong-field-count";

/** One step of one subscriber: its schedule, or why it is not created. */
export interface PlannedStep {
  step: number;
  schedule: string;
  template: string;
  utc: string;
  send_at: string;
  timezone: string;
  /**
   * planned: to create (`late` set when it was due before it could be created and is sent at once, in UTC);
   * passed: a backlog's step due before the run (an earlier run may have sent it), never created again;
   * late: due more than the journey's lateGraceMinutes before it could be created: not sent, reported;
   * dropped: within MIN_GAP_MINUTES of, or before, an earlier step kept: not created (`note` says which).
   */
  status: "planned" | "passed" | "late" | "dropped";
  /** When a step sent late was due (ISO, UTC). */
  late?: string;
  /** Why a step is dropped, or moved. */
  note?: string;
  request?: CreateScheduleRequest;
}

/** How `decide` treats steps due before they can be created. */
export interface DueRule {
  /**
   * A backlog (enrol --recipients): such steps are `passed`, never sent late: a re-run with the same trigger time
   * must not send again what an earlier run created and Scheduler has sent since.
   */
  backlog?: boolean;
}

type Rejection = { outcome: "rejected"; journey: string; recipient?: string; reason: RejectReason; message: string };

/** The recipient is named by its schedule-name stem: the id when it is a valid name, else a hash (never an address). */
export type Decision =
  | {
      outcome: "enrol";
      journey: string;
      recipient: string;
      /** The trigger's id in the ledger (triggerId). */
      trigger: string;
      zone: string;
      zoneStatus: ZoneStatus;
      steps: PlannedStep[];
    }
  | { outcome: "exit"; journey: string; recipient: string; deletes: DeleteScheduleRequest[] }
  | Rejection;

/** The recipient's stem in schedule names, safe to log: `<id>` or `h.<hash>`. */
export function recipientStem(id: string): string {
  return scheduleName(id, 1).replace(/-1$/, "");
}

/**
 * What `event` means for `journey`: the CreateSchedule requests of a trigger, the DeleteSchedule requests of an exit,
 * or why the subscriber is rejected. `now` decides which steps have passed.
 */
export function decide(
  journey: Journey,
  kind: EventKind,
  event: JourneyEvent,
  settings: EnrolmentSettings,
  now: number,
  due: DueRule = {},
): Decision {
  const reject = (reason: RejectReason, message: string, recipient?: string): Rejection => ({
    outcome: "rejected",
    journey: journey.name,
    ...(recipient === undefined ? {} : { recipient }),
    reason,
    message,
  });
  const recipient = event?.detail?.recipient;
  if (recipient === null || typeof recipient !== "object" || Array.isArray(recipient))
    return reject("invalid-event", "the event has no detail.recipient object");
  // A JSON number past 2^53 has lost digits when parsed: two subscribers could share one id, and their schedules.
  if (typeof recipient.id === "number" && Number.isInteger(recipient.id) && !Number.isSafeInteger(recipient.id))
    return reject(
      "invalid-event",
      `detail.recipient.id ${recipient.id} is a number past 2^53, digits may be lost: send the id as a string`,
    );
  const id = typeof recipient.id === "number" && Number.isInteger(recipient.id) ? String(recipient.id) : recipient.id;
  if (typeof id !== "string" || id.trim() === "")
    return reject("missing-id", "detail.recipient.id is missing (a string)");
  const stem = recipientStem(id);
  if (kind === "exit") {
    const GroupName = campaignGroupName(journey.name);
    const deletes = journey.steps.map((_, k) => ({ Name: scheduleName(id, k + 1), GroupName }));
    return { outcome: "exit", journey: journey.name, recipient: stem, deletes };
  }
  // As EventBridge writes it; Date.parse would read a time without an offset in the machine's zone, and "1" as a year.
  const triggerMs = typeof event.time === "string" ? parseInstant(event.time) : undefined;
  if (typeof triggerMs !== "number")
    return reject(
      "invalid-event",
      typeof event.time === "string"
        ? `the event's time ${JSON.stringify(event.time)} is not an ISO 8601 instant with Z or an offset`
        : "the event has no time (an ISO 8601 instant)",
      stem,
    );
  const trigger = triggerId(event, triggerMs);
  if (trigger === undefined)
    return reject(
      "invalid-event",
      `the event's id must be a string of 1 to ${MAX_TRIGGER_ID_CHARS} printable characters (EventBridge sets one), or absent`,
      stem,
    );
  const email = typeof recipient.email === "string" ? recipient.email.trim() : "";
  if (email === "") return reject("missing-email", "detail.recipient.email is missing", stem);
  if (!isEmailAddress(email) || email.length > 254)
    return reject("invalid-email", "detail.recipient.email is not a valid address", stem);
  if (recipient[STEP_KEY] !== undefined)
    return reject(
      "reserved-field",
      `detail.recipient.${STEP_KEY} is reserved: sendtime adds the step number to the template data; rename it`,
      stem,
    );
  const resolved = subscriberZone(journey, recipient);
  if ("problem" in resolved) return reject(resolved.reason, `detail.recipient.${resolved.problem}`, stem);
  if (resolved.status === "ambiguous")
    return reject(
      "ambiguous-zone",
      `detail.recipient.timezone ${JSON.stringify(recipient.timezone)} is ambiguous (${resolved.reading!.candidates!.join(", ")}): give an IANA zone`,
      stem,
    );
  const data = personalization(recipient);
  if (
    journey.steps.some(
      (_, k) => JSON.stringify({ ...data, [STEP_KEY]: String(k + 1) }).length > ses.maxTemplateDataChars,
    )
  )
    return reject("too-large", `personalization over ${ses.maxTemplateDataChars} characters`, stem);
  return enrolSteps(journey, { id, email, data, stem, trigger }, resolved, triggerMs, settings, now, due, reject);
}

/** A subscriber's zone, and the zones their data admits when several (each send then never early, never quiet). */
type SubscriberZone = ResolvedZone & { candidates?: readonly string[] };

/**
 * The subscriber's zone as the launcher reads a row's (docs/send-rules.md, "Zones"): the timezone, else the zone at
 * latitude/longitude (numbers or strings), else the zone(s) of the postal_code (with country), else of the phone,
 * else a country's one zone, else the journey's defaultTimezone.
 */
function subscriberZone(
  journey: Journey,
  recipient: Record<string, unknown>,
): SubscriberZone | { reason: RejectReason; problem: string } {
  const zones = new ZoneResolver(journey.defaultTimezone ?? "UTC");
  const timezone = typeof recipient.timezone === "string" ? recipient.timezone : undefined;
  const r = zones.resolve(timezone);
  if (r.status !== "defaulted") return r;
  const read = readCoordinates(coordinateText(recipient.latitude), coordinateText(recipient.longitude));
  if (read !== undefined && "problem" in read) return { reason: "invalid-coordinates", problem: read.problem };
  const zone = read && canonicalZone(read.zone);
  if (zone !== undefined) return { zone, status: "latlon" };
  const country = typeof recipient.country === "string" ? recipient.country : undefined;
  const postal = readPostal(placeText(recipient.postal_code), country);
  if (postal !== undefined && "problem" in postal) return { reason: "invalid-postal-code", problem: postal.problem };
  const byPostal = postal && fromZones(postal.zones, "postal");
  if (byPostal) return byPostal;
  const phone = readPhone(placeText(recipient.phone), country);
  if (phone !== undefined && "problem" in phone) return { reason: "invalid-phone", problem: phone.problem };
  return (phone && fromZones(phone.zones, "phone")) ?? zones.resolveWithCountry(timezone, country);
}

function fromZones(zones: readonly string[], status: "postal" | "phone"): SubscriberZone | undefined {
  const known = zones.map((z) => canonicalZone(z)).filter((z): z is string => z !== undefined);
  if (known.length === 0) return undefined;
  return known.length === 1 ? { zone: known[0], status } : { zone: known[0], status, candidates: known };
}

/** A postal code or phone as text: a string as is, a JSON number in decimals; anything else as JSON (refused). */
function placeText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A coordinate as text: a string as is, a JSON number in decimals (1e-7 too); anything else as JSON (refused). */
function coordinateText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value !== "number") return JSON.stringify(value);
  const text = String(value);
  return /e/i.test(text) && Number.isFinite(value) ? value.toFixed(20) : text;
}

/**
 * What identifies one trigger of one subscriber in the ledger (enrolmentKey): the event's `id`, which EventBridge
 * keeps when it delivers an event again; for an event without one (a backlog row, a hand-written event file),
 * `at.<trigger time>`, so a run again with the same time is the same trigger. Undefined: an id that is no usable string.
 */
export function triggerId(event: JourneyEvent, triggerMs: number): string | undefined {
  const id: unknown = event.id;
  if (id === undefined) return `at.${new Date(triggerMs).toISOString()}`;
  const printable = typeof id === "string" && /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(id);
  return printable && id.length <= MAX_TRIGGER_ID_CHARS ? id : undefined;
}

/**
 * The ledger item an enrolment claims: its key, and when it may expire (epoch seconds): LEDGER_TTL_DAYS after the
 * subscriber's last step (or `now`, if later). A duplicate of the trigger delivered later still finds it, or finds
 * every step more than LEDGER_TTL_DAYS past its time, far past any lateGraceMinutes (at most a day): late, not sent.
 */
export function enrolmentClaim(d: Extract<Decision, { outcome: "enrol" }>, now: number): EnrolmentClaim {
  const last = Math.max(now, ...d.steps.map((s) => Date.parse(s.utc)));
  return {
    key: enrolmentKey(d.journey, d.recipient, d.trigger),
    expiresAt: Math.ceil((last + LEDGER_TTL_DAYS * DAY) / 1000),
  };
}

export interface EnrolmentClaim {
  key: string;
  expiresAt: number;
}

/** A valid trigger's steps: their times (quiet time over the window), late or not, dropped when too close or out of order. */
function enrolSteps(
  journey: Journey,
  who: { id: string; email: string; data: Record<string, string>; stem: string; trigger: string },
  resolved: { zone: string; status: ZoneStatus; candidates?: readonly string[] },
  triggerMs: number,
  settings: EnrolmentSettings,
  now: number,
  due: DueRule,
  reject: (reason: RejectReason, message: string, recipient?: string) => Rejection,
): Decision {
  const { id, email, data, stem } = who;
  const quiet = journeyQuietTime(journey);
  const candidates = resolved.candidates;
  const times = journey.steps.map((step) =>
    candidates
      ? stepTimeAcross(candidates, triggerMs, step, quiet, settings.windowMinutes)
      : journeyStepTime(resolved.zone, triggerMs, step, quiet, settings.windowMinutes),
  );
  const unwritable = times.findIndex((t) => !writable(t));
  if (unwritable >= 0)
    return reject(
      "invalid-event",
      `step ${unwritable + 1} falls after 9999-12-31, the last date a schedule can be written for`,
      stem,
    );
  const timed = times.map((time) =>
    whenCreated(time, resolved.zone, now, quiet, settings.windowMinutes, due.backlog ? 0 : lateGraceMinutes(journey)),
  );
  const dropped = droppedSends(timed.map((t) => (t.status === "planned" ? t.time.utcMs : undefined)));
  const steps = timed.map((t, k) => {
    const why = dropped[k];
    if (!why) return planStep(journey, k + 1, t, { id, email, data }, settings, due.backlog);
    const other = timed[why.with].time.utc;
    const note =
      why.reason === "too-close"
        ? `within ${MIN_GAP_MINUTES} minutes of step ${why.with + 1} (${other}): not created`
        : `before step ${why.with + 1} (${other}): steps go out in order; not created`;
    return planStep(journey, k + 1, { ...t, status: "dropped", note }, { id, email, data }, settings, due.backlog);
  });
  return {
    outcome: "enrol",
    journey: journey.name,
    recipient: stem,
    trigger: who.trigger,
    zone: resolved.zone,
    zoneStatus: resolved.status,
    steps,
  };
}

/** A step's time as it will be created, or why it is not: see the file header (late, not lost). */
interface TimedStep {
  time: ScheduledTime;
  status: "planned" | "late" | "dropped";
  late?: string;
  note?: string;
}

function whenCreated(
  time: ScheduledTime,
  zone: string,
  now: number,
  quiet: QuietTime | undefined,
  windowMinutes: number,
  graceMinutes: number,
): TimedStep {
  const earliest = now + CREATE_LEAD_MS;
  if (time.utcMs >= earliest) return { time, status: "planned" };
  // Lateness counts from the step's time: one not yet due goes at the first minute it can be created (not late).
  if (now - time.utcMs > graceMinutes * MINUTE) return { time, status: "late" };
  // Sent at once, in UTC (its own minute, rounded up); quiet time still holds for the new time.
  const at = ceilMinute(earliest);
  const end = quiet ? endOfQuietWindow(quiet, zone, at, windowMinutes) : undefined;
  const sendAt = end ? scheduledTime(zone, end.utcMs, end.fold) : scheduledTime("UTC", at, "exact");
  if (time.utcMs >= now) return { time: sendAt, status: "planned" };
  return {
    time: sendAt,
    status: "planned",
    late: time.utc,
    note: `due ${time.utc}, handled late: sent at ${sendAt.utc}`,
  };
}

/** Step `number` of one subscriber: its time and, when it is to be created, its CreateSchedule request. */
function planStep(
  journey: Journey,
  number: number,
  timed: TimedStep,
  who: { id: string; email: string; data: Record<string, string> },
  settings: EnrolmentSettings,
  backlog = false,
): PlannedStep {
  const time = timed.time;
  const step = journey.steps[number - 1];
  const row = {
    schedule_name: scheduleName(who.id, number),
    schedule_expression: atExpression(time.send_at),
    timezone: time.timezone,
    email: who.email,
    template: step.template,
    template_data: { ...who.data, [STEP_KEY]: String(number) },
    recipient_id: who.id,
    step: number,
    variant: null,
  };
  // A backlog's step due before the run may have been sent by an earlier run (its schedule deleted after sending).
  const status = backlog && timed.status === "late" ? "passed" : timed.status;
  return {
    step: number,
    schedule: row.schedule_name,
    template: step.template,
    utc: new Date(time.utcMs).toISOString(),
    send_at: time.send_at,
    timezone: time.timezone,
    status,
    ...(timed.late !== undefined ? { late: timed.late } : {}),
    ...(timed.note !== undefined ? { note: timed.note } : {}),
    ...(status === "planned"
      ? { request: createScheduleRequest(settings.target, journey.name, settings.windowMinutes, row) }
      : {}),
  };
}

/** Personalization: every recipient field but the control ones, as strings (objects as JSON). */
function personalization(recipient: Record<string, unknown>): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(recipient)) {
    if (CONTROL_FIELDS.includes(key) || value === undefined || value === null) continue;
    data[key] = typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
  }
  return data;
}

/**
 * The instant of one step for a subscriber in `zone` triggered at `triggerMs` (see the file header); quiet time is
 * checked over the schedule's flexible window of `windowMinutes`.
 */
export function journeyStepTime(
  zone: string,
  triggerMs: number,
  step: JourneyStep,
  quiet?: QuietTime,
  windowMinutes = 1,
): ScheduledTime {
  const time = stepTimeBeforeQuiet(zone, triggerMs, step);
  const end = quiet ? endOfQuietWindow(quiet, zone, time.utcMs, windowMinutes) : undefined;
  return end ? scheduledTime(zone, end.utcMs, end.fold) : time;
}

/**
 * A step's time for a subscriber whose data admits several zones: the latest of its times in each (so its local time
 * has come in all of them: never early), written in that zone, then moved out of quiet time in every one of them
 * (promises.ts endOfQuietAcross; when their quiet times leave no common free window, out of quiet time in the zone
 * written, as for a subscriber of that one zone).
 */
export function stepTimeAcross(
  zones: readonly string[],
  triggerMs: number,
  step: JourneyStep,
  quiet?: QuietTime,
  windowMinutes = 1,
): ScheduledTime {
  let latest = stepTimeBeforeQuiet(zones[0], triggerMs, step);
  let zone = zones[0];
  for (const z of zones.slice(1)) {
    const t = stepTimeBeforeQuiet(z, triggerMs, step);
    if (t.utcMs > latest.utcMs) [latest, zone] = [t, z];
  }
  const end = quiet ? endOfQuietAcross(quiet, zones, latest.utcMs, windowMinutes) : undefined;
  if (end === undefined) return latest;
  if (end === null) return journeyStepTime(zone, triggerMs, step, quiet, windowMinutes);
  const fold = zonedInstant(zone, localTimeOf(zone, end)).fold === "overlap" ? "overlap" : "exact";
  return scheduledTime(zone, end, fold);
}

/**
 * The first journey whose quiet time leaves no free stretch as long as the schedules' flexible window, as one line:
 * every step's window would touch quiet time wherever it starts (quiet time covers the window), so nothing could be
 * sent. Checked where the journeys meet the window: the stack program and enrol.
 */
export function quietWindowProblem(journeys: Journey[], windowMinutes: number, windowKey: string): string | undefined {
  for (const journey of journeys) {
    const quiet = journeyQuietTime(journey);
    const free = quiet ? longestFreeMinutes(quiet) : Infinity;
    if (quiet && free < windowMinutes)
      return `sendtime:journeys: journey "${journey.name}": its quiet time (${describeQuietTime(quiet)}) leaves at most ${free} free minutes in a row, shorter than ${windowKey} ${windowMinutes}: every send's window would touch quiet time; shorten the window or the quiet time`;
  }
  return undefined;
}

/** A journey's quiet time in the launcher's terms: a step due in it is delayed to its end. */
export function journeyQuietTime(journey: Journey): QuietTime | undefined {
  if (journey.quietHours === undefined && journey.quietDays === undefined) return undefined;
  const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  const [start, end] = journey.quietHours?.split("-") ?? [];
  return {
    ...(start !== undefined ? { hours: { start: minutes(start), end: minutes(end) } } : {}),
    days: (journey.quietDays ?? []).map((d) => (WEEKDAY_NAMES as readonly string[]).indexOf(d)),
    policy: "delay",
  };
}

function stepTimeBeforeQuiet(zone: string, triggerMs: number, step: JourneyStep): ScheduledTime {
  const m = STEP_AFTER.exec(step.after);
  if (!m) throw new Error(`step after "${step.after}" is not +Nh or +Nd`);
  const n = Number(m[1]);
  const earliest = triggerMs + MINUTE;
  if (m[2] === "h") return exactOrUtc(zone, ceilMinute(Math.max(triggerMs + n * HOUR, earliest)));

  const triggerLocal = localTimeOf(zone, triggerMs);
  if (step.at !== undefined) {
    const [hour, minute] = step.at.split(":").map(Number);
    let at = zonedInstant(zone, { ...addDays(triggerLocal, n), hour, minute });
    if (at.utcMs < earliest) at = zonedInstant(zone, { ...addDays(triggerLocal, n + 1), hour, minute });
    return scheduledTime(zone, at.utcMs, at.fold);
  }
  // The trigger's wall clock N days later; its seconds carry over (zone offsets are whole minutes), then round up.
  const seconds = triggerMs - Math.floor(triggerMs / MINUTE) * MINUTE;
  const later = zonedInstant(zone, addDays(triggerLocal, n));
  const utcMs = ceilMinute(later.utcMs + seconds);
  if (utcMs < earliest) return exactOrUtc(zone, ceilMinute(earliest));
  // A requested time in a gap or an overlap is written in UTC, as the launcher does.
  return later.fold === "exact" ? exactOrUtc(zone, utcMs) : scheduledTime(zone, utcMs, later.fold);
}

/** An instant found by arithmetic: local in `zone` unless its wall clock is repeated (then UTC). */
function exactOrUtc(zone: string, utcMs: number): ScheduledTime {
  const wall: LocalTime = localTimeOf(zone, utcMs);
  const back = zonedInstant(zone, wall);
  const fold: Fold = back.fold === "overlap" ? "overlap" : "exact";
  return scheduledTime(zone, utcMs, fold);
}

function ceilMinute(ms: number): number {
  return Math.ceil(ms / MINUTE) * MINUTE;
}

/**
 * Whether `zone` is an IANA zone name, exact case, of a place (for journey definitions): not an abbreviation such as
 * EST, which IANA keeps as a fixed UTC-5 (zone-names.ts).
 */
export function isIanaZone(zone: string): boolean {
  return zoneNameProblem(zone) === undefined;
}
