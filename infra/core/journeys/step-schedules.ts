/**
 * A valid trigger's steps as schedules: each step's time (step-times.ts), then the promises every path keeps
 * (infra/core/timing/promises.ts): a step due before it can be created (now + CREATE_LEAD_MS) is sent at once when it
 * is at most the journey's lateGraceMinutes late, reported `late` when later (late, not lost); a step within
 * MIN_GAP_MINUTES of, or before, an earlier step kept is dropped and listed (never two at once, in order). A step to
 * create gets its CreateSchedule request.
 */
import { Journey, lateGraceMinutes } from "./journeys-definition";
import { Decision, DueRule, EnrolmentSettings, PlannedStep, RejectReason, Rejection } from "./journey-types";
import { ceilMinute, journeyQuietTime, journeyStepTime, MINUTE, stepTimeAcross } from "./step-times";
import { CREATE_LEAD_MS, droppedSends, endOfQuietWindow, MIN_GAP_MINUTES } from "../timing/promises";
import { scheduleName } from "../plan/naming";
import { atExpression } from "../plan/schedule-expression";
import { createScheduleRequest } from "../plan/schedule-request";
import { QuietTime } from "../timing/quiet-time";
import { scheduledTime, ScheduledTime, writable, ZoneStatus } from "../timing/send-time";

export const STEP_KEY = "step";

/** A valid trigger's steps: their times (quiet time over the window), late or not, dropped when too close or out of order. */
export function enrolSteps(
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
