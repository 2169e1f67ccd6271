/**
 * A valid trigger's steps as schedules: each step's time (step-times.ts), then the promises every path keeps
 * (infra/core/timing/promises.ts): a step due before it can be created (now + CREATE_LEAD_MS) is sent at once when it
 * is at most the journey's lateGraceMinutes late, reported `late` when later (late, not lost); a step within
 * MIN_GAP_MINUTES of, or before, an earlier step kept is dropped and listed (never two at once, in order). A step to
 * create gets its CreateSchedule request. An SMS step (sms-steps.ts) is first moved into legal hours and its text
 * rendered, or skipped with why (no valid phone, too long, no legal time), before the promises are checked.
 */
import { Journey, lateGraceMinutes } from "./journeys-definition";
import { Decision, DueRule, EnrolmentSettings, PlannedStep, RejectReason, Rejection } from "./journey-types";
import { ceilMinute, journeyQuietTime, journeyStepTime, MINUTE, stepTimeAcross } from "./step-times";
import { CREATE_LEAD_MS, droppedSends, endOfQuietAcross, endOfQuietWindow, MIN_GAP_MINUTES } from "../timing/promises";
import { scheduleName } from "../plan/naming";
import { atExpression } from "../plan/schedule-expression";
import { createScheduleRequest, senderScheduleRequest } from "../plan/schedule-request";
import { QuietTime } from "../timing/quiet-time";
import { localTimeOf, scheduledTime, ScheduledTime, writable, zonedInstant, ZoneStatus } from "../timing/send-time";
import { smsSenderInput } from "../send/sms-input";
import { renderSmsText, smsStepTiming, stepMaxSegments } from "./sms-steps";

export const STEP_KEY = "step";

/** Who a step goes to: the id, address (empty when the journey has only SMS steps), data, name stem, trigger, phone. */
export interface StepSubscriber {
  id: string;
  email: string;
  data: Record<string, string>;
  stem: string;
  trigger: string;
  /** For SMS steps: the E.164 number, or why there is none; absent when the journey has no SMS step. */
  phone?: { e164: string } | { problem: string };
}

/** A valid trigger's steps: their times (quiet time over the window), late or not, dropped when too close or out of order. */
export function enrolSteps(
  journey: Journey,
  who: StepSubscriber,
  resolved: { zone: string; status: ZoneStatus; candidates?: readonly string[] },
  triggerMs: number,
  settings: EnrolmentSettings,
  now: number,
  due: DueRule,
  reject: (reason: RejectReason, message: string, recipient?: string) => Rejection,
): Decision {
  const { id, email, data, stem } = who;
  const subscriber = { id, email, data };
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
  const timed = times
    .map((time) =>
      whenCreated(time, resolved.zone, now, quiet, settings.windowMinutes, due.backlog ? 0 : lateGraceMinutes(journey)),
    )
    .map((t, k) => (journey.steps[k].channel === "sms" ? smsStep(journey, k, t, who, resolved, settings, quiet) : t));
  const dropped = droppedSends(timed.map((t) => (t.status === "planned" ? t.time.utcMs : undefined)));
  const steps = timed.map((t, k) => {
    const why = dropped[k];
    if (!why) return planStep(journey, k + 1, t, subscriber, settings, due.backlog);
    const other = timed[why.with].time.utc;
    const note =
      why.reason === "too-close"
        ? `within ${MIN_GAP_MINUTES} minutes of step ${why.with + 1} (${other}): not created`
        : `before step ${why.with + 1} (${other}): steps go out in order; not created`;
    return planStep(journey, k + 1, { ...t, status: "dropped", note }, subscriber, settings, due.backlog);
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
  status: "planned" | "late" | "dropped" | "skipped";
  late?: string;
  note?: string;
  /** An SMS step's text, moved into legal hours: what its schedule's input carries. */
  text?: { phone: string; body: string; segments: number; until: string; sameSubjectLimit?: number };
}

/**
 * A planned SMS step for this subscriber: its text rendered and its time moved into legal hours (sms-steps.ts), or
 * skipped with why. A step not planned (late) stays as it is.
 */
function smsStep(
  journey: Journey,
  k: number,
  t: TimedStep,
  who: StepSubscriber,
  resolved: { zone: string; candidates?: readonly string[] },
  settings: EnrolmentSettings,
  quiet: QuietTime | undefined,
): TimedStep {
  if (t.status !== "planned") return t;
  const step = journey.steps[k];
  const skip = (why: string): TimedStep => ({ ...t, status: "skipped", note: `${why}: not sent` });
  if (!who.phone || "problem" in who.phone) return skip(who.phone?.problem ?? "no phone");
  const template = settings.sms?.templates[step.template];
  if (template === undefined) return skip(`no SMS template ${step.template} in the function's settings`);
  const text = renderSmsText(
    step.template,
    template,
    { ...who.data, [STEP_KEY]: String(k + 1) },
    stepMaxSegments(journey, step),
  );
  if ("problem" in text) return skip(text.problem);
  const zones = resolved.candidates ?? [resolved.zone];
  const window = settings.windowMinutes;
  const unquiet = (ms: number) => (quiet ? (endOfQuietAcross(quiet, zones, ms, window) ?? undefined) : undefined);
  const timing = smsStepTiming(step, zones, who.phone.e164, t.time.utcMs, window, unquiet);
  if ("skipped" in timing) return skip(timing.skipped);
  const zone = resolved.zone;
  const fold = zonedInstant(zone, localTimeOf(zone, timing.utcMs)).fold === "overlap" ? "overlap" : "exact";
  const time = timing.moved ? scheduledTime(zone, timing.utcMs, fold) : t.time;
  const moved = timing.moved && `outside legal hours (${step.legalHours?.join(",")}): moved to ${time.utc}`;
  return {
    ...t,
    time,
    ...(moved ? { note: t.note ? `${t.note}; ${moved}` : moved } : {}),
    text: {
      phone: who.phone.e164,
      body: text.body,
      segments: text.segments,
      until: new Date(timing.until).toISOString(),
      ...(timing.sameSubjectLimit === undefined ? {} : { sameSubjectLimit: timing.sameSubjectLimit }),
    },
  };
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
  const sms = timed.text;
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
    ...(step.channel === "sms" ? { channel: "sms" as const } : {}),
    ...(sms ? { segments: sms.segments, until: sms.until } : {}),
    ...(status !== "planned"
      ? {}
      : sms
        ? { request: smsRequest(journey.name, number, sms, row, settings) }
        : { request: createScheduleRequest(settings.target, journey.name, settings.windowMinutes, row) }),
  };
}

/** An SMS step's schedule: the one sender with the text's input (sms-input.ts), the stack's MessageType. */
function smsRequest(
  journeyName: string,
  number: number,
  sms: NonNullable<TimedStep["text"]>,
  row: { schedule_name: string; schedule_expression: string; timezone: string; recipient_id: string },
  settings: EnrolmentSettings,
) {
  const entry = {
    phone: sms.phone,
    body: sms.body,
    until: sms.until,
    recipient_id: row.recipient_id,
    ...(sms.sameSubjectLimit === undefined ? {} : { same_subject_limit: sms.sameSubjectLimit }),
  };
  const input = smsSenderInput(journeyName, { step: number, variant: null }, [entry], settings.sms?.messageType);
  return senderScheduleRequest(settings.target, journeyName, settings.windowMinutes, row, input);
}
