/**
 * What the SendDecider (decisions.ts) is given and what it answers: the rules (SendRules) and a row's place data
 * (RowPlace) in; per row its zone and each step's decision out (ZoneDecisions, StepDecision); and what it keeps between
 * rows (a zone as written resolved once, the steps shared by every row with the same zone and timing values).
 */
import { QuietTime } from "../../../infra/core/timing/quiet-time";
import { BaseRule, TimingProblem } from "../../../infra/core/timing/send-rules";
import { ScheduledTime, Step, ZoneStatus } from "../../../infra/core/timing/send-time";
import { ZoneOffsets } from "../../../infra/core/timing/zone-offsets";
import { InferSource, ResolvedZone, ZoneAliases } from "../../../infra/core/zones/zone-names";
import { MissedRule } from "./missed";
import { ZoneRejectReason } from "./row-zones";

export type StepOutcome = "planned" | "sent-now" | "next-day" | "skipped" | "collided" | "out-of-order";
export type QuietOutcome = "none" | "delayed" | "skipped";

/** What happens to one step's send; `time` is absent when the step is not sent. */
export interface StepDecision {
  step: Step;
  /** The missed-time outcome, or "collided" (too close to an earlier step) or "out-of-order" (before one). */
  outcome: StepOutcome;
  quiet: QuietOutcome;
  time?: ScheduledTime;
  /** The step this one came too close to or before (outcome "collided" or "out-of-order"). */
  collidedWith?: number;
  /** An earlier step that moved to the next day and took this one with it, by a day. */
  movedWith?: number;
  /** When a step that is not sent or was moved by quiet time was due, for its note. */
  due?: string;
  /** A recurring send (rule `every`): `time` is its first occurrence. */
  recurring?: RecurringSend;
  /** A text step's send (sms-legal.ts): when its legal window closes (ISO UTC), and the number's same-subject limit. */
  text?: { until: string; sameSubjectLimit?: number };
}

/** What a recurring schedule is created with, and the occurrences its flexible window is sized on. */
export interface RecurringSend {
  expression: string;
  /** CreateSchedule StartDate and EndDate, ISO 8601 in UTC. */
  startDate: string;
  endDate: string;
  endMs: number;
  /** Its occurrences in the sizing span (recurrence.ts sizingSpanDays), ascending. */
  sized: number[];
}

export interface ZoneDecisions {
  zone: string;
  status: ZoneStatus;
  steps: StepDecision[];
  /** What a row with these decisions has changed or defaulted, one line each, for the notes file. */
  notes: string[];
  /** Set when no step is sent: why (see nothingLeft). */
  noSendLeft?: "quiet-hours" | "send-time-passed";
  /** Set when the row cannot be planned: strict zones and no usable zone, or a bad send time in the row. */
  reject?: { reason: ZoneRejectReason | TimingProblem["reason"]; text: string };
  /**
   * The zones the row's data admits when it admits several (a phone's area code, a postal code that spans zones):
   * each send is at the instant its local time has come in all of them, and outside quiet time in all of them.
   */
  candidates: readonly string[] | undefined;
  /**
   * What the planner (plan-lines.ts) prepared for the rows with these decisions, kept with them because those rows
   * share them; undefined until then, and present on every answer so that all have one hidden class.
   */
  prepared: unknown;
}

export interface SendRules {
  rule: BaseRule;
  steps: Step[];
  /** For rows with a missing or unknown zone. */
  defaultZone: string;
  /** Reject rows with a missing or unknown zone, or one the zone table maps, instead of defaulting or mapping them. */
  strictZones?: boolean;
  /** `--zone-alias X=ZONE`: values read as the zone the user chose (zone-names.ts readZone). */
  zoneAliases?: ZoneAliases;
  /** What a row without a usable zone may take its zone from (--infer-zone); none when absent. */
  inferZone?: readonly InferSource[];
  /**
   * A row whose data admits several zones: sent when the time has come in all of them (never-early, the default), or
   * refused `ambiguous-zone` (skip) unless they agree on every send's instant.
   */
  ambiguousZone?: AmbiguousZonePolicy;
  /** Without one, every step is planned as computed (size-window: a launch in time misses nothing). */
  missed?: MissedRule;
  quiet?: QuietTime;
  /**
   * The flexible window quiet time is checked over (a send is quiet when any minute of [t, t + window) is): at least
   * the window the schedules are created with. @default 1
   */
  windowMinutes?: number;
  /** Rule `every`: the schedules' StartDate (the launch cutoff: now + fan-out + margin), epoch ms. */
  recurringStartMs?: number;
}

export const NO_NOTES: string[] = [];

/** What a row says of where it is, read when its timezone gives no usable zone (undefined: no such column). */
export interface RowPlace {
  country?: string;
  latitude?: string;
  longitude?: string;
  postalCode?: string;
  phone?: string;
}

export type AmbiguousZonePolicy = "never-early" | "skip";
export const AMBIGUOUS_ZONE_POLICIES: readonly AmbiguousZonePolicy[] = ["never-early", "skip"];

/** A zone as written, resolved once: the zone, its status, its note, or the strict-zones reject. */
export interface ResolvedRawZone {
  zone: string;
  status: ZoneStatus;
  notes: string[];
  reject?: ZoneDecisions["reject"];
  /** The value and how it was read, and the rows decided with it (for the summary's unknown values). */
  written: string;
  resolved: ResolvedZone;
  rows: number;
  /** Answers for rows with this zone as written, by timingKey (set when this is kept in byRawZone). */
  byTimingKey?: TimingKeyed;
  /** Several zones the row's data admits (its `zone` is the first until the steps choose; see candidates). */
  candidates?: readonly string[];
}

/** One written zone's answers keyed by send-rules.ts timingKey, and the zone's offsets that key reads. */
export interface TimingKeyed {
  offsets: ZoneOffsets;
  answers: Map<number, ZoneDecisions>;
}

/**
 * Steps for one zone and timing values, with their notes; or the row's send-time problem. `answers` keeps the full
 * answers built from it, one per way the zone is written (usually one; at most MAX_SPELLINGS), so rows allocate
 * nothing and rows with one answer share what the planner prepares for it, even when spellings take turns.
 */
export type SharedSteps =
  | {
      steps: StepDecision[];
      notes: string[];
      answers?: { z: ResolvedRawZone; decisions: ZoneDecisions }[];
      /** Across candidate zones: the zone the sends are written in. */
      zone?: string;
    }
  | TimingProblem
  | { reason: "ambiguous-zone"; text: string };
