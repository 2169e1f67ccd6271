/**
 * Every step's send time for one row, in order: base rule (or the row's send_at) → missed-time policy → quiet time.
 * The launcher and size-window both call this, so they agree on every instant.
 *
 * Per-row work is a cache lookup: a row's decisions depend only on its zone and its timing values (none under most
 * rules), so each distinct combination is computed once.
 */
import { endOfQuietTime, QuietTime } from "./quiet-time";
import { BaseRule, firstSend, reduceAfter, requestedLocal, RowTiming, stepFromFirst, TimingProblem } from "./send-rules";
import { addDays, scheduledTime, ScheduledTime, Step, zonedInstant } from "./send-time";

export type MissedPolicy = "skip" | "send-now" | "next-day";
export const MISSED_POLICIES: MissedPolicy[] = ["skip", "send-now", "next-day"];

/** Sends due before `cutoff` (now + fan-out ETA + margin) are missed and follow `policy`. */
export interface MissedTime {
  policy: MissedPolicy;
  graceMinutes: number;
  cutoff: number;
}

export interface StepDecision {
  /** When the step is sent; undefined when it is not. */
  time?: ScheduledTime;
  missed: "on-time" | "sent-now" | "next-day" | "skipped";
  quiet: "none" | "delayed" | "skipped";
  /** Free for the caller to cache per-decision work (a serialized time); decisions are shared between rows. */
  memo?: unknown;
}

const MAX_CACHED = 200_000;

export class SendTimer {
  private readonly cache = new Map<string, StepDecision[] | TimingProblem>();
  private readonly sendNowAt: number;

  constructor(
    readonly rule: BaseRule,
    readonly steps: Step[],
    readonly missed: MissedTime,
    readonly quiet?: QuietTime,
  ) {
    this.sendNowAt = Math.ceil(missed.cutoff / 60_000) * 60_000;
  }

  /** Each step's decision for a row in `zone`, or why the row has no valid send time. The result is shared. */
  decide(zone: string, row: RowTiming): StepDecision[] | TimingProblem {
    if (this.rule.kind === "after" && !row.sendAt) {
      // Distinct instants (a login time per row) mostly reduce to a few dates or minutes: key on the reduced value.
      const after = reduceAfter(this.rule, zone, row.after ?? "");
      if (typeof after !== "string") return after;
      row = { ...row, after };
    }
    const key = cacheKey(this.rule, zone, row);
    let hit = this.cache.get(key);
    if (hit === undefined) {
      hit = this.compute(zone, row);
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(key, hit);
    }
    return hit;
  }

  private compute(zone: string, row: RowTiming): StepDecision[] | TimingProblem {
    const first = firstSend(this.rule, zone, row);
    if ("reason" in first) return first;
    return this.steps.map((step) => {
      const requested = stepFromFirst(zone, first, step);
      const decision = this.afterMissedTime(zone, requested, requestedLocal(zone, first, step, requested));
      return this.afterQuietTime(zone, decision);
    });
  }

  /** skip; send-now (at the cutoff, in UTC) when late by less than the grace; next-day (same local time). */
  private afterMissedTime(zone: string, time: ScheduledTime, local: ReturnType<typeof requestedLocal>): StepDecision {
    const { policy, graceMinutes, cutoff } = this.missed;
    if (time.utcMs >= cutoff) return { time, missed: "on-time", quiet: "none" };
    if (policy === "send-now" && cutoff - time.utcMs < graceMinutes * 60_000)
      return { time: scheduledTime("UTC", this.sendNowAt, "exact"), missed: "sent-now", quiet: "none" };
    if (policy === "next-day") {
      const { utcMs, fold } = zonedInstant(zone, addDays(local, 1));
      if (utcMs >= cutoff) return { time: scheduledTime(zone, utcMs, fold), missed: "next-day", quiet: "none" };
    }
    return { missed: "skipped", quiet: "none" };
  }

  private afterQuietTime(zone: string, d: StepDecision): StepDecision {
    if (!this.quiet || !d.time) return d;
    const end = endOfQuietTime(this.quiet, zone, d.time.utcMs);
    if (!end) return d;
    if (this.quiet.policy === "skip") return { missed: d.missed, quiet: "skipped" };
    return { time: scheduledTime(zone, end.utcMs, end.fold), missed: d.missed, quiet: "delayed" };
  }
}

/** What a row's decisions depend on, given the rule: its zone and only the timing values the rule reads. */
function cacheKey(rule: BaseRule, zone: string, row: RowTiming): string {
  if (row.sendAt) return `${zone}\u0000@${row.sendAt}`;
  switch (rule.kind) {
    case "at":
      return zone;
    case "date":
      return row.sendHour || row.sendMinute ? `${zone}\u0000${row.sendHour ?? ""}\u0000${row.sendMinute ?? ""}` : zone;
    case "after":
      return "days" in rule
        ? `${zone}\u0000${row.after ?? ""}\u0000${row.sendHour ?? ""}\u0000${row.sendMinute ?? ""}`
        : `${zone}\u0000${row.after ?? ""}`;
  }
}
