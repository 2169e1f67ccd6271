/**
 * Step 2 of planning, shared by the launcher and size-window: a recipient's zone, and what happens to each step's
 * send in it. Per step the stages run in order — base rule (the campaign's local time, then the step's offset) →
 * missed-time policy — and the result depends only on the zone, so it is computed once per distinct zone and cached
 * here (the one per-zone cache). A rule that depends on the row (a per-row send time) adds a stage and a cache key.
 */
import {
  addDays,
  LocalTime,
  localTimeOf,
  ScheduledTime,
  scheduledTime,
  Step,
  stepTime,
  ZoneResolver,
  ZoneStatus,
  zonedInstant,
} from "./send-time";

export type MissedPolicy = "skip" | "send-now" | "next-day";
export const MISSED_POLICIES: MissedPolicy[] = ["skip", "send-now", "next-day"];

/**
 * Sends due before `cutoffMs` are missed: skip; send-now (at the cutoff, in UTC) when late by less than the grace;
 * next-day (same local time the next day, skipped if that is still too early).
 */
export interface MissedRule {
  policy: MissedPolicy;
  graceMinutes: number;
  cutoffMs: number;
}

export type StepOutcome = "planned" | "sent-now" | "next-day" | "skipped";

/** What happens to one step's send in one zone; `time` is absent when the step is skipped. */
export interface StepDecision {
  step: Step;
  outcome: StepOutcome;
  time?: ScheduledTime;
}

export interface ZoneDecisions {
  zone: string;
  status: ZoneStatus;
  steps: StepDecision[];
}

export interface SendRules {
  /** Step 1's local time. */
  base: LocalTime;
  steps: Step[];
  /** For rows with a missing or unknown zone. */
  defaultZone: string;
  /** Without one, every step is planned as computed (size-window: a launch in time misses nothing). */
  missed?: MissedRule;
}

export class SendDecider {
  private readonly zones: ZoneResolver;
  private readonly byZone = new Map<string, StepDecision[]>();
  /** The same answers by the zone as written, so a row costs one lookup (bounded like the resolver's cache). */
  private readonly byRawZone = new Map<string, ZoneDecisions>();

  constructor(readonly rules: SendRules) {
    this.zones = new ZoneResolver(rules.defaultZone);
  }

  /** The row's zone (as written, or undefined when the file has no timezone column) and its steps' sends. */
  decide(rawZone: string | undefined): ZoneDecisions {
    const key = rawZone ?? "";
    let decided = this.byRawZone.get(key);
    if (!decided) {
      const { zone, status } = this.zones.resolve(rawZone);
      decided = { zone, status, steps: this.forZone(zone) };
      if (this.byRawZone.size < 100_000) this.byRawZone.set(key, decided);
    }
    return decided;
  }

  /** Each step's decision in a resolved zone, computed once per zone. */
  forZone(zone: string): StepDecision[] {
    let decisions = this.byZone.get(zone);
    if (!decisions) {
      decisions = this.rules.steps.map((step) => this.applyMissed(zone, step, stepTime(zone, this.rules.base, step)));
      this.byZone.set(zone, decisions);
    }
    return decisions;
  }

  private applyMissed(zone: string, step: Step, time: ScheduledTime): StepDecision {
    const m = this.rules.missed;
    if (!m || time.utcMs >= m.cutoffMs) return { step, outcome: "planned", time };
    if (m.policy === "send-now" && m.cutoffMs - time.utcMs < m.graceMinutes * 60_000) {
      const sendNowAt = Math.ceil(m.cutoffMs / 60_000) * 60_000;
      return { step, outcome: "sent-now", time: scheduledTime("UTC", sendNowAt, "exact") };
    }
    if (m.policy === "next-day") {
      const requested = step.hours ? localTimeOf(zone, time.utcMs) : addDays(this.rules.base, step.days ?? 0);
      const { utcMs, fold } = zonedInstant(zone, addDays(requested, 1));
      if (utcMs >= m.cutoffMs) return { step, outcome: "next-day", time: scheduledTime(zone, utcMs, fold) };
    }
    return { step, outcome: "skipped" };
  }
}
