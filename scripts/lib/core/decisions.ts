/**
 * Step 2 of planning, shared by the launcher and size-window: a recipient's zone, and what happens to each step's
 * send in it. Per step the stages run in order — base rule (the campaign's local time, then the step's offset) →
 * missed-time policy — then the steps are checked against each other (two sends of one recipient less than
 * MIN_STEP_GAP_MINUTES apart: the later step is not planned). The result depends only on the zone, so it is computed
 * once per distinct zone and cached here (the one per-zone cache), with the notes a row in that zone gets. A rule that
 * depends on the row (a per-row send time) adds a stage and a cache key.
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

/** Two steps of one recipient closer than this are a double send to the reader: the later one is not planned. */
export const MIN_STEP_GAP_MINUTES = 60;

/**
 * Sends due before `cutoffMs` are missed: skip; send-now (at the cutoff, in UTC) when late by less than the grace;
 * next-day (same local time the next day, skipped if that is still too early).
 */
export interface MissedRule {
  policy: MissedPolicy;
  graceMinutes: number;
  cutoffMs: number;
}

export type StepOutcome = "planned" | "sent-now" | "next-day" | "skipped" | "collided";

/** What happens to one step's send in one zone; `time` is absent when the step is not sent. */
export interface StepDecision {
  step: Step;
  outcome: StepOutcome;
  time?: ScheduledTime;
  /** The step this one came too close to (outcome "collided"). */
  collidedWith?: number;
  /** When a step that is not sent was due (skipped or collided), for its note. */
  due?: string;
}

export interface ZoneDecisions {
  zone: string;
  status: ZoneStatus;
  steps: StepDecision[];
  /** What a row in this zone has changed or defaulted, one line each, for the notes file. */
  notes: string[];
  /** Set when the row cannot be planned in any zone (strict zones and no usable zone). */
  reject?: { reason: "unknown-zone"; text: string };
}

export interface SendRules {
  /** Step 1's local time. */
  base: LocalTime;
  steps: Step[];
  /** For rows with a missing or unknown zone. */
  defaultZone: string;
  /** Reject rows with a missing or unknown zone instead of defaulting them. */
  strictZones?: boolean;
  /** Without one, every step is planned as computed (size-window: a launch in time misses nothing). */
  missed?: MissedRule;
}

export class SendDecider {
  private readonly zones: ZoneResolver;
  private readonly byZone = new Map<string, StepDecision[]>();
  /** The same answers by the zone as written, so a row costs one lookup (bounded). */
  private readonly byRawZone = new Map<string, ZoneDecisions>();

  constructor(readonly rules: SendRules) {
    this.zones = new ZoneResolver(rules.defaultZone);
  }

  /** The row's zone (as written, or undefined when the file has no timezone column) and its steps' sends. */
  decide(rawZone: string | undefined): ZoneDecisions {
    const key = rawZone ?? "";
    let decided = this.byRawZone.get(key);
    if (!decided) {
      decided = this.compute(rawZone);
      if (this.byRawZone.size < 100_000) this.byRawZone.set(key, decided);
    }
    return decided;
  }

  /** Each step's decision in a resolved zone, computed once per zone. */
  forZone(zone: string): StepDecision[] {
    let decisions = this.byZone.get(zone);
    if (!decisions) {
      decisions = separateSteps(this.rules.steps.map((step) => this.applyMissed(zone, step, stepTime(zone, this.rules.base, step))));
      this.byZone.set(zone, decisions);
    }
    return decisions;
  }

  private compute(rawZone: string | undefined): ZoneDecisions {
    const { zone, status } = this.zones.resolve(rawZone);
    const written = rawZone === undefined || rawZone === "" ? "no timezone" : `timezone "${rawZone}"`;
    const problem = rawZone === undefined || rawZone === "" ? written : `${written} is not an IANA zone`;
    if (status === "defaulted" && this.rules.strictZones)
      return { zone, status, steps: [], notes: [], reject: { reason: "unknown-zone", text: `${problem} (strict zones: no default)` } };
    const notes: string[] = [];
    // (A file without a timezone column sends everyone in the default zone: nothing to note per row.)
    if (status === "defaulted" && rawZone !== undefined) notes.push(`${problem}: sent in ${zone}, the default zone`);
    if (status === "canonicalised") notes.push(`${written} read as ${zone}`);
    const steps = this.forZone(zone);
    for (const d of steps) {
      const note = stepNote(d, steps);
      if (note) notes.push(note);
    }
    return { zone, status, steps, notes };
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
    return { step, outcome: "skipped", due: time.utc };
  }
}

/** A later step less than MIN_STEP_GAP_MINUTES from an earlier-numbered step that is sent is not planned. */
function separateSteps(decisions: StepDecision[]): StepDecision[] {
  const gap = MIN_STEP_GAP_MINUTES * 60_000;
  const result: StepDecision[] = [];
  for (const d of decisions) {
    const clash = d.time && result.find((e) => e.time && Math.abs(e.time.utcMs - d.time!.utcMs) < gap);
    result.push(clash ? { step: d.step, outcome: "collided", collidedWith: clash.step.number, due: d.time!.utc } : d);
  }
  return result;
}

/** The note a step's outcome needs, if any. */
function stepNote(d: StepDecision, all: StepDecision[]): string | undefined {
  const n = d.step.number;
  switch (d.outcome) {
    case "skipped":
      return `step ${n} (due ${d.due}) missed: skipped`;
    case "sent-now":
      return `step ${n} missed: sent at ${d.time!.utc} instead`;
    case "next-day":
      return `step ${n} missed: moved to the next day, ${d.time!.utc}`;
    case "collided": {
      const other = all.find((e) => e.step.number === d.collidedWith)!;
      return `step ${n} not planned: ${d.due} is within ${MIN_STEP_GAP_MINUTES} minutes of step ${d.collidedWith} (${other.time!.utc})`;
    }
    default:
      return undefined;
  }
}
