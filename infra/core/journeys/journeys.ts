/**
 * Journeys' core: what one event means for one subscriber — the schedules to create (trigger) or delete (exit) —
 * decided with the launcher's send-time rules (zones, DST gap and overlap, schedule names, the SES target).
 * Pure: the deployed handler and scripts/enrol.ts both call it, then do the AWS calls (infra/handlers/enrolment.ts).
 * A trigger is named by its id (triggerId: the event's `id`, else `at.<trigger time>`), under which its enrolment is
 * claimed once in the occurrence ledger (enrolmentClaim), so a duplicate of the trigger creates nothing.
 * The subscriber's zone is subscriber-zone.ts's, each step's time step-times.ts's, and the steps' promises and
 * requests step-schedules.ts's.
 */
import { Journey } from "./journeys-definition";
import {
  Decision,
  DueRule,
  EnrolmentClaim,
  EnrolmentSettings,
  EventKind,
  JourneyEvent,
  RejectReason,
  Rejection,
} from "./journey-types";
import { enrolSteps, STEP_KEY } from "./step-schedules";
import { stepChannel, subscriberPhone } from "./sms-steps";
import { subscriberZone } from "./subscriber-zone";
import { campaignGroupName, scheduleName } from "../plan/naming";
import { ses } from "../plan/quotas";
import { parseInstant } from "../timing/send-rules";
import { isEmailAddress } from "../send/email";
import { enrolmentKey, LEDGER_TTL_DAYS } from "../send/ledger";

const DAY = 86_400_000;
/** The longest event id kept as it is in an enrolment key (EventBridge's are 36-character UUIDs). */
const MAX_TRIGGER_ID_CHARS = 256;

/** Recipient fields that steer sending; every other field is personalization (template data). */
const CONTROL_FIELDS = ["id", "email", "timezone"];

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
  const email = subscriberEmail(journey, recipient);
  if (typeof email !== "string") return reject(email.reason, email.message, stem);
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
  const phone = journey.steps.some((s) => stepChannel(s) === "sms") ? subscriberPhone(recipient) : undefined;
  const who = { id, email, data, stem, trigger, ...(phone ? { phone } : {}) };
  return enrolSteps(journey, who, resolved, triggerMs, settings, now, due, reject);
}

/**
 * The subscriber's address, or why they are rejected; "" for a journey of texts only, which needs none (an SMS step
 * without a valid phone is skipped, never sent as an email).
 */
function subscriberEmail(
  journey: Journey,
  recipient: Record<string, unknown>,
): string | { reason: RejectReason; message: string } {
  if (!journey.steps.some((s) => stepChannel(s) === "email")) return "";
  const email = typeof recipient.email === "string" ? recipient.email.trim() : "";
  if (email === "") return { reason: "missing-email", message: "detail.recipient.email is missing" };
  if (!isEmailAddress(email) || email.length > 254)
    return { reason: "invalid-email", message: "detail.recipient.email is not a valid address" };
  return email;
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

/** Personalization: every recipient field but the control ones, as strings (objects as JSON). */
function personalization(recipient: Record<string, unknown>): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(recipient)) {
    if (CONTROL_FIELDS.includes(key) || value === undefined || value === null) continue;
    data[key] = typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
  }
  return data;
}
