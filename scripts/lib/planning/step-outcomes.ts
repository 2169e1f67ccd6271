/**
 * One step's decision as every part of the decider makes it (stepDecision: one hidden class), the steps of a row kept
 * apart and in order (separateSteps), the notes their outcomes leave, and why a row has no send left.
 */
import { droppedSends, MIN_GAP_MINUTES } from "../../../infra/core/timing/promises";
import { LocalTime, localTimeOf, ScheduledTime, Step } from "../../../infra/core/timing/send-time";
import { QuietOutcome, RecurringSend, StepDecision, StepOutcome } from "./decision-types";

export const p2 = (n: number) => String(n).padStart(2, "0");

/**
 * A StepDecision with every field present, always in this order: all of them share one hidden class, so the code that
 * reads them per row (the plan lines, the counts) stays monomorphic whichever outcomes a list mixes.
 */
export function stepDecision(
  step: Step,
  outcome: StepOutcome,
  quiet: QuietOutcome,
  time?: ScheduledTime,
  due?: string,
  collidedWith?: number,
  recurring?: RecurringSend,
  movedWith?: number,
): StepDecision {
  return { step, outcome, quiet, time, collidedWith, due, recurring, movedWith };
}

/** Never two at once, in order (promises.ts droppedSends): a step too close to or before an earlier one kept is not planned. */
export function separateSteps(decisions: StepDecision[]): StepDecision[] {
  const dropped = droppedSends(decisions.map((d) => d.time?.utcMs));
  return decisions.map((d, k) => {
    const why = dropped[k];
    if (!why) return d;
    const outcome = why.reason === "too-close" ? "collided" : "out-of-order";
    return stepDecision(
      d.step,
      outcome,
      d.quiet,
      undefined,
      d.time!.utc,
      decisions[why.with].step.number,
      undefined,
      d.movedWith,
    );
  });
}

/**
 * The note of a step whose local time `asked` does not exist in `zone` (a DST gap): it was moved forward by the gap,
 * so it is sent later on the clock than asked (02:30 asked, 03:30 EDT). Undefined for any other step.
 */
export function gapNote(zone: string, d: StepDecision, asked: LocalTime): string | undefined {
  if (d.time?.fold !== "gap") return undefined;
  const to = localTimeOf(zone, d.time.utcMs);
  const date = `${asked.year}-${p2(asked.month)}-${p2(asked.day)}`;
  return `step ${d.step.number} at ${date} ${p2(asked.hour)}:${p2(asked.minute)} local does not exist in ${zone} (the clock skips it): moved forward to ${p2(to.hour)}:${p2(to.minute)} local, ${d.time.utc}`;
}

/** The note a step's outcome needs, if any. */
export function stepNote(d: StepDecision, all: StepDecision[]): string | undefined {
  const n = d.step.number;
  if (d.quiet === "skipped") return `step ${n} (due ${d.due}) in quiet time: skipped`;
  switch (d.outcome) {
    case "skipped":
      return `step ${n} (due ${d.due}) missed: skipped`;
    case "sent-now":
      return `step ${n} missed: sent at ${d.time!.utc} instead${d.quiet === "delayed" ? ", delayed by quiet time" : ""}`;
    case "next-day":
      return `step ${n} missed: moved to the next day, ${d.time!.utc}${d.quiet === "delayed" ? " after quiet time" : ""}`;
    case "collided": {
      const other = all.find((e) => e.step.number === d.collidedWith)!;
      return `step ${n} not planned: ${d.due} is within ${MIN_GAP_MINUTES} minutes of step ${d.collidedWith} (${other.time!.utc})`;
    }
    case "out-of-order": {
      const other = all.find((e) => e.step.number === d.collidedWith)!;
      return `step ${n} not planned: ${d.due} is before step ${d.collidedWith} (${other.time!.utc}); steps go out in order`;
    }
    default:
      if (d.movedWith !== undefined)
        return `step ${n} moved to the next day with step ${d.movedWith}: ${d.time!.utc}${d.quiet === "delayed" ? " after quiet time" : ""}`;
      return d.quiet === "delayed" ? `step ${n} (due ${d.due}) in quiet time: delayed to ${d.time!.utc}` : undefined;
  }
}

/**
 * Why a row has no send left, if it has none: quiet time skipped a send that was not missed ("quiet-hours"), or
 * every send was missed ("send-time-passed").
 */
export function nothingLeft(steps: StepDecision[]): "quiet-hours" | "send-time-passed" | undefined {
  if (steps.some((s) => s.time)) return undefined;
  return steps.some((s) => s.quiet === "skipped") ? "quiet-hours" : "send-time-passed";
}
