/**
 * A row whose data admits several zones (docs/send-rules.md, "Several zones"): the plans of its steps in each zone
 * combined into one (the same in all of them, or never early and never quiet in any), or the row refused
 * `ambiguous-zone`.
 */
import { endOfQuietAcross } from "../../../infra/core/timing/promises";
import { localTimeOf, scheduledTime, zonedInstant } from "../../../infra/core/timing/send-time";
import { cachedOffsetMinutes } from "../../../infra/core/timing/zone-offsets";
import { NO_NOTES, SendRules, SharedSteps, StepDecision } from "./decision-types";
import { separateSteps, stepDecision, stepNote } from "./step-outcomes";

/** What SendDecider.sharedAcross computes once for each list of the zones' plans it has not seen. */
export class SeveralZones {
  constructor(readonly rules: SendRules) {}

  combine(zones: readonly string[], plans: SharedSteps[]): SharedSteps {
    for (const p of plans) if ("reason" in p) return p;
    const each = plans as Extract<SharedSteps, { steps: StepDecision[] }>[];
    const named = zones.join(", ");
    const agree = each.every((p) => sameInstants(p.steps, each[0].steps));
    if (agree) return { ...each[0], answers: undefined, zone: zones[0] };
    if (this.rules.ambiguousZone === "skip")
      return {
        reason: "ambiguous-zone",
        text: `its data admits several zones (${named}) whose sends differ (--ambiguous-zone skip): give the row a timezone`,
      };
    if (this.rules.rule.kind === "every")
      return {
        reason: "ambiguous-zone",
        text: `a recurring send is one cron time in one zone, and its zones ${named} differ: give the row a timezone`,
      };
    const latest = zones.findIndex((zone, i) => behindAll(zone, zones, each[i].steps, each));
    if (latest < 0)
      return {
        reason: "ambiguous-zone",
        text: `none of its zones ${named} has the latest send for every step: give the row a timezone`,
      };
    const zone = zones[latest];
    const moved = each[latest].steps.map((d) => this.quietAcross(zones, zone, d));
    if (moved.every((d, k) => d === each[latest].steps[k])) return { ...each[latest], answers: undefined, zone };
    const steps = separateSteps(moved);
    const notes = steps.map((d) => stepNote(d, steps)).filter((n): n is string => n !== undefined);
    return { steps, notes: notes.length ? notes : NO_NOTES, zone };
  }

  /**
   * `d` (planned in `zone`) moved out of quiet time in every zone of `zones` (promises.ts endOfQuietAcross), or
   * skipped: under the skip policy, or when their quiet times leave it no time.
   */
  private quietAcross(zones: readonly string[], zone: string, d: StepDecision): StepDecision {
    const q = this.rules.quiet;
    if (!q || !d.time) return d;
    const end = endOfQuietAcross(q, zones, d.time.utcMs, this.rules.windowMinutes ?? 1);
    if (end === undefined) return d;
    const due = d.due ?? d.time.utc;
    if (end === null || q.policy === "skip")
      return stepDecision(d.step, d.outcome, "skipped", undefined, due, undefined, undefined, d.movedWith);
    const fold = zonedInstant(zone, localTimeOf(zone, end)).fold === "overlap" ? "overlap" : "exact";
    return stepDecision(
      d.step,
      d.outcome,
      "delayed",
      scheduledTime(zone, end, fold),
      due,
      undefined,
      undefined,
      d.movedWith,
    );
  }
}

/** Whether two zones' plans of a row send every step at the same instant (or neither sends it). */
function sameInstants(a: StepDecision[], b: StepDecision[]): boolean {
  return a.every(
    (d, k) => d.time?.utcMs === b[k].time?.utcMs && d.recurring?.expression === b[k].recurring?.expression,
  );
}

/**
 * Whether `zone`'s clock is behind (or level with) every other zone's at each step's send: then a local time comes
 * there last, and its plan is the never-early one. Compared by offset, not by the plans' instants, which the missed-time
 * policy may have moved a day in one zone and not another.
 */
function behindAll(zone: string, zones: readonly string[], own: StepDecision[], each: { steps: StepDecision[] }[]) {
  return own.every((d, k) => {
    const t = d.time?.utcMs ?? each.find((p) => p.steps[k].time)?.steps[k].time!.utcMs;
    if (t === undefined) return true;
    const offset = cachedOffsetMinutes(zone, t);
    return zones.every((other) => cachedOffsetMinutes(other, t) >= offset);
  });
}
