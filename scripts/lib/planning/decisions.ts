/**
 * Step 2 of planning, shared by the launcher and size-window: a recipient's zone, and what happens to each step's
 * send in it. Per step the stages run in order — base rule (the campaign's rule or the row's send_at, then the
 * step's offset from step 1 as requested) → missed-time policy (a step moved to the next day takes the later steps
 * with it) → quiet time over the send's whole flexible window — then the steps are checked against each other with
 * infra/core/timing/promises.ts (a send within MIN_GAP_MINUTES of, or before, an earlier step kept is not planned).
 *
 * The result depends only on the zone and on the row's timing values the rule reads (none under most rules), so each
 * distinct combination is computed once, with the notes a row with it gets, and shared by every row that has it:
 * per-row work is a cache lookup. The common forms of those values are keyed by a number per zone (send-rules.ts
 * timingKey: no string is built per row); any other form by its text.
 *
 * Its parts: the shapes it takes and gives (decision-types.ts); a row's zone, as written or inferred
 * (zone-inference.ts); one step's decision and its note (step-outcomes.ts); rule `every` (recurring-steps.ts); a row
 * of several zones (several-zones.ts). PlannedSends (planned-sends.ts) counts the planned rows' sends for the window.
 */
import {
  BaseRule,
  describeRule,
  firstSend,
  reduceAfter,
  requestedLocal,
  RowTiming,
  SEND_AT_COLUMN,
  stepFromFirst,
  timingKey,
} from "../../../infra/core/timing/send-rules";
import {
  addDays,
  LocalTime,
  ScheduledTime,
  scheduledTime,
  Step,
  writable,
  zonedInstant,
} from "../../../infra/core/timing/send-time";
import { endOfQuietWindow } from "../../../infra/core/timing/promises";
import { missedFate } from "./missed";
import { NO_NOTES, ResolvedRawZone, RowPlace, SharedSteps, StepDecision, ZoneDecisions } from "./decision-types";
import { gapNote, nothingLeft, separateSteps, stepDecision, stepNote } from "./step-outcomes";
import { RowZoneResolver } from "./zone-inference";
import { RecurringSteps } from "./recurring-steps";
import { SeveralZones } from "./several-zones";

const NO_ROW_VALUES: RowTiming = {};
const MAX_CACHED = 200_000;
const NO_PLACE: RowPlace = {};
const MAX_SPELLINGS = 8;

export class SendDecider extends RowZoneResolver {
  /** Steps across candidate zones, by the first candidate's steps (shared), then the others'. */
  private readonly across = new Map<SharedSteps, { plans: SharedSteps[]; result: SharedSteps }[]>();
  private readonly cache = new Map<string, SharedSteps>();
  private readonly recurringSteps = new RecurringSteps(this.rules);
  private readonly severalZones = new SeveralZones(this.rules);

  /**
   * The row's zone (as written, or undefined when the file has no timezone column), its steps' sends and notes. Rows
   * whose values have a common form are answered by one lookup of a number (send-rules.ts timingKey: equal keys in
   * one zone mean equal first sends, and so equal decisions, whatever the values' text); others by their text.
   * `shiftDays`: every step that many days later at the same local time (a warm-up's move, ramp.ts), the row decided
   * again: it is not counted again.
   */
  decide(
    rawZone: string | undefined,
    timing: RowTiming = NO_ROW_VALUES,
    place: RowPlace = NO_PLACE,
    shiftDays = 0,
  ): ZoneDecisions {
    let z = this.resolve(rawZone);
    // (A row with a usable zone reads nothing else: no coordinates parsed, no string built.)
    if (z.status === "defaulted") z = this.inferred(z, place);
    if (!shiftDays) z.rows++;
    // (One field order for every answer, like stepDecision's.)
    if (z.reject) return rejected(z, z.reject, undefined);
    if (z.candidates) return this.answer(z, this.sharedAcross(z.candidates, timing, shiftDays));
    if (shiftDays) return this.answer(z, this.shared(z.zone, timing, shiftDays));
    const keyed = z.byTimingKey;
    const key = keyed && timingKey(this.rules.rule, timing, keyed.offsets);
    if (key === undefined) return this.answer(z, this.shared(z.zone, timing));
    let answer = keyed!.answers.get(key);
    if (answer === undefined) {
      answer = this.answer(z, this.shared(z.zone, timing));
      if (this.keyedEntries >= MAX_CACHED) {
        for (const k of this.keyed) k.answers.clear();
        this.keyedEntries = 0;
      }
      keyed!.answers.set(key, answer);
      this.keyedEntries++;
    }
    return answer;
  }

  private answer(z: ResolvedRawZone, shared: SharedSteps): ZoneDecisions {
    if ("reason" in shared) return rejected(z, shared, z.candidates);
    const answers = (shared.answers ??= []);
    for (let i = 0; i < answers.length; i++) if (answers[i].z === z) return answers[i].decisions;
    const notes =
      z.notes.length === 0 ? shared.notes : shared.notes.length === 0 ? z.notes : [...z.notes, ...shared.notes];
    const noSendLeft = nothingLeft(shared.steps);
    const decisions: ZoneDecisions = {
      zone: shared.zone ?? z.zone,
      status: z.status,
      steps: shared.steps,
      notes,
      noSendLeft,
      reject: undefined,
      candidates: z.candidates,
      prepared: undefined,
    };
    if (answers.length < MAX_SPELLINGS) answers.push({ z, decisions });
    return decisions;
  }

  /** Each step's decision in a resolved zone for a row without timing values (what most rules read). */
  forZone(zone: string): StepDecision[] {
    const shared = this.shared(zone, NO_ROW_VALUES);
    if ("reason" in shared) throw new Error(`the send-time rule needs row values: ${shared.text}`);
    return shared.steps;
  }

  /**
   * The steps of a row whose data admits several zones (docs/send-rules.md, "Several zones"): planned in each, then
   * in the zone whose sends are the latest for every step — so each send's local time has come in all of them
   * (never early) — and moved out of quiet time in every one of them (never quiet). Under --ambiguous-zone skip, or
   * when no zone is latest for every step, or for a recurring send whose zones differ, the row is refused.
   */
  private sharedAcross(zones: readonly string[], timing: RowTiming, shiftDays = 0): SharedSteps {
    const plans = zones.map((zone) => this.shared(zone, timing, shiftDays));
    let memo = this.across.get(plans[0]);
    const hit = memo?.find((m) => m.plans.every((p, i) => p === plans[i]));
    if (hit) return hit.result;
    const result = this.severalZones.combine(zones, plans);
    if (!memo) {
      if (this.across.size >= MAX_CACHED) this.across.clear();
      this.across.set(plans[0], (memo = []));
    }
    if (memo.length < MAX_SPELLINGS) memo.push({ plans, result });
    return result;
  }

  private shared(zone: string, timing: RowTiming, shiftDays = 0): SharedSteps {
    const rule = this.rules.rule;
    // A blank send_at is no send_at (and must not key the cache); most rows of a file with the column have none.
    const sendAt =
      timing.sendAt !== undefined && timing.sendAt !== "" && timing.sendAt.trim() !== "" ? timing.sendAt : undefined;
    let after: string | undefined;
    if (rule.kind === "after" && sendAt === undefined) {
      // Distinct instants (a login time per row) mostly reduce to a few dates or minutes: key on the reduced value.
      const reduced = reduceAfter(rule, zone, timing.after ?? "");
      if (typeof reduced !== "string") return reduced;
      after = reduced;
    }
    const key = cacheKey(rule, zone, timing, sendAt, after) + (shiftDays ? `\u0000+${shiftDays}` : "");
    let hit = this.cache.get(key);
    if (hit === undefined) {
      hit = this.compute(zone, { ...timing, sendAt, after: after ?? timing.after }, shiftDays);
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(key, hit);
    }
    return hit;
  }

  private compute(zone: string, timing: RowTiming, shiftedBy = 0): SharedSteps {
    if (this.rules.rule.kind === "every") return this.recurringSteps.recurring(zone, timing);
    const first = firstSend(this.rules.rule, zone, timing);
    if ("reason" in first) return first;
    // In order: a step moved to the next day takes the later steps with it (each a day later, then checked itself).
    let shiftDays = shiftedBy;
    let movedBy: number | undefined;
    const gapNotes: (string | undefined)[] = [];
    const steps = separateSteps(
      this.rules.steps.map((step, k) => {
        let requested = stepFromFirst(zone, first, step);
        let local = requestedLocal(zone, first, step, requested);
        if (shiftDays) {
          local = addDays(local, shiftDays);
          const moved = zonedInstant(zone, local);
          requested = scheduledTime(zone, moved.utcMs, moved.fold);
        }
        let d = this.applyMissed(zone, step, requested, local);
        if (movedBy !== undefined) d = { ...d, movedWith: movedBy };
        if (d.outcome === "next-day") {
          shiftDays++;
          movedBy = step.number;
        }
        gapNotes[k] = gapNote(zone, d, d.outcome === "next-day" ? addDays(local, 1) : local);
        return this.applyQuiet(zone, d);
      }),
    );
    const late = steps.find((d) => d.time && !writable(d.time));
    if (late) {
      const source =
        timing.sendAt !== undefined ? `${SEND_AT_COLUMN} "${timing.sendAt}"` : describeRule(this.rules.rule);
      return {
        reason: timing.sendAt === undefined && this.rules.rule.kind === "after" ? "invalid-date" : "invalid-send-time",
        text: `${source}: step ${late.step.number} falls after 9999-12-31, the last date a schedule can be written for`,
      };
    }
    // A move across a DST gap is noted after the step's other note, for the steps still sent.
    const notes = steps
      .flatMap((d, k) => [stepNote(d, steps), d.time ? gapNotes[k] : undefined])
      .filter((n): n is string => n !== undefined);
    return { steps, notes: notes.length ? notes : NO_NOTES };
  }

  /** Once every row is decided: refuses (UsageError, exit 2) a plan with recurring quiet nights (RecurringSteps). */
  refuseRecurringQuietNights(windowSource: "--window-minutes" | "computed"): void {
    this.recurringSteps.refuseRecurringQuietNights(windowSource);
  }

  private applyMissed(zone: string, step: Step, time: ScheduledTime, requested: LocalTime): StepDecision {
    const m = this.rules.missed;
    const fate = m ? missedFate(zone, time.utcMs, requested, m) : undefined;
    if (!fate || fate.outcome === "on-time") return stepDecision(step, "planned", "none", time);
    if (fate.outcome === "skipped") return stepDecision(step, "skipped", "none", undefined, time.utc);
    return stepDecision(step, fate.outcome, "none", fate.time);
  }

  /**
   * Quiet time is in the recipient's zone, whatever zone the time is written in (a send-now is in UTC), and covers the
   * send's whole flexible window (promises.ts endOfQuietWindow).
   */
  private applyQuiet(zone: string, d: StepDecision): StepDecision {
    const q = this.rules.quiet;
    if (!q || !d.time) return d;
    const end = endOfQuietWindow(q, zone, d.time.utcMs, this.rules.windowMinutes ?? 1);
    if (!end) return d;
    if (q.policy === "skip")
      return stepDecision(d.step, d.outcome, "skipped", undefined, d.time.utc, undefined, undefined, d.movedWith);
    return stepDecision(
      d.step,
      d.outcome,
      "delayed",
      scheduledTime(zone, end.utcMs, end.fold),
      d.time.utc,
      undefined,
      undefined,
      d.movedWith,
    );
  }
}

/** What a row's decisions depend on, given the rule: its zone and only the timing values the rule reads. */
function cacheKey(
  rule: BaseRule,
  zone: string,
  t: RowTiming,
  sendAt: string | undefined,
  after: string | undefined,
): string {
  if (sendAt !== undefined) return `${zone}\u0000@${sendAt}`;
  switch (rule.kind) {
    case "at":
      return zone;
    case "date":
    case "every":
      return t.sendHour || t.sendMinute ? `${zone}\u0000${t.sendHour ?? ""}\u0000${t.sendMinute ?? ""}` : zone;
    case "after":
      return "days" in rule
        ? `${zone}\u0000${after}\u0000${t.sendHour ?? ""}\u0000${t.sendMinute ?? ""}`
        : `${zone}\u0000${after}`;
  }
}

/** The answer for a row that is not planned, for `reject`: no steps, in the one field order of every answer. */
function rejected(
  z: ResolvedRawZone,
  reject: NonNullable<ZoneDecisions["reject"]>,
  candidates: ZoneDecisions["candidates"],
): ZoneDecisions {
  return {
    zone: z.zone,
    status: z.status,
    steps: [],
    notes: NO_NOTES,
    noSendLeft: undefined,
    reject,
    candidates,
    prepared: undefined,
  };
}
