/**
 * Rule `every`: a recurring send's one step in a zone (its cron schedule, its start and end, the occurrences its window
 * is sized on), and the nights a clock change brings quiet time into its window, which refuse the plan
 * (recurringQuietRefusal).
 */

import { cronExpression, Recurrence, RecurringTime } from "../../../infra/core/plan/schedule-expression";
import { scheduler } from "../../../infra/core/plan/quotas";
import { InternalError, UsageError } from "../../../infra/core/errors";
import { describeQuietTime, QuietTime } from "../../../infra/core/timing/quiet-time";
import { MIN_GAP_MINUTES, quietEveryNight, quietOccurrences } from "../../../infra/core/timing/promises";
import {
  nextOccurrence,
  occurrences,
  occurrencesAcross,
  offsetChanges,
  recurringEndMs,
  shortestGapMinutes,
  sizingSpanDays,
} from "../../../infra/core/timing/recurrence";
import { BaseRule, rowHourAndMinute, RowTiming, SEND_AT_COLUMN } from "../../../infra/core/timing/send-rules";
import { localTimeOf, ScheduledTime, wallClock } from "../../../infra/core/timing/send-time";
import { NO_NOTES, RecurringSend, SendRules, SharedSteps } from "./decision-types";
import { p2, stepDecision } from "./step-outcomes";

/**
 * The largest flexible window a recurring send may have: one occurrence invoked at the end of its window and the next
 * at the start of its own must stay MIN_GAP_MINUTES apart (and the last wanted one before its EndDate).
 */
export function maxRecurringWindowMinutes(r: Recurrence): number {
  return Math.min(scheduler.flexibleWindowMinutes.max, shortestGapMinutes(r) - MIN_GAP_MINUTES);
}

/** A recurring send's step in each zone, and the quiet nights its occurrences meet (for SendDecider, rule `every`). */
export class RecurringSteps {
  /** Per zone, its offset changes over the recurring schedules' span (rule `every` with quiet time). */
  private readonly offsetChanges = new Map<string, { fromMs: number; toMs: number; at: number[] }>();
  private readonly quietNights = new Map<string, QuietNight>();

  constructor(readonly rules: SendRules) {}

  /**
   * A recurring send in `zone`: one cron schedule from the start to an EndDate after --until's last occurrence and its
   * window, before the next one (recurrence.ts recurringEndMs). A row's send_at
   * (a one-time time) cannot be recurring: the row is rejected. A recurring time in quiet hours would be quiet at every
   * occurrence: the step is skipped (the row then rejected), whatever the quiet policy.
   */
  recurring(zone: string, timing: RowTiming): SharedSteps {
    const rule = this.rules.rule as Extract<BaseRule, { kind: "every" }>;
    const step = this.rules.steps[0];
    if (this.rules.steps.length !== 1) throw new InternalError("a recurring send has one step");
    if (timing.sendAt !== undefined)
      return {
        reason: "invalid-send-time",
        text: `${SEND_AT_COLUMN} "${timing.sendAt}" is a one-time send time; recurring sends (--every) take the hour from send_hour/send_minute`,
      };
    const hm = rowHourAndMinute(rule, timing);
    if ("reason" in hm) return hm;
    const time = { recurrence: rule.recurrence, ...hm };
    const startMs = this.rules.recurringStartMs;
    if (startMs === undefined) throw new InternalError("a recurring send needs its start");
    const endMs = recurringEndMs(time, zone, rule.until);
    const q = this.rules.quiet;
    const at = `${String(hm.hour).padStart(2, "0")}:${String(hm.minute).padStart(2, "0")}`;
    // Quiet time covers the window: every minute of [hh:mm, hh:mm + window) must be free (the same at each occurrence).
    const window = this.rules.windowMinutes ?? 1;
    if (q && quietEveryNight(q, hm.hour * 60 + hm.minute, window)) {
      const decision = stepDecision(step, "planned", "skipped", undefined, `${at} local`);
      return {
        steps: [decision],
        notes: [`step 1 at ${at} local, every occurrence in quiet time (${describeQuietTime(q)}): not planned`],
      };
    }
    const sized = occurrences(
      time,
      zone,
      startMs,
      Math.min(endMs, startMs + sizingSpanDays(rule.recurrence) * 86_400_000),
    );
    const first = sized[0] ?? nextOccurrence(time, zone, startMs, endMs);
    if (q) this.noteQuietNights(q, zone, time, startMs, endMs, window);
    if (first === undefined)
      return { steps: [stepDecision(step, "skipped", "none", undefined, `${at} local`)], notes: NO_NOTES };
    const recurring: RecurringSend = {
      expression: cronExpression(time),
      startDate: new Date(startMs).toISOString(),
      endDate: new Date(endMs).toISOString(),
      endMs,
      sized: sized.length ? sized : [first],
    };
    // The schedule is evaluated in the zone (never UTC); send_at is the first occurrence's wall clock there.
    const t: ScheduledTime = {
      utcMs: first,
      utc: new Date(first).toISOString(),
      send_at: wallClock(zone, first),
      timezone: zone,
      fold: "exact",
    };
    return { steps: [stepDecision(step, "planned", "none", t, undefined, undefined, recurring)], notes: NO_NOTES };
  }

  /**
   * Quiet time covers the window on the nights the zone's clock changes too: the occurrences between the schedule's
   * start and end whose window runs across a change into quiet time are kept for recurringQuietRefusal (the plan is
   * refused: one cron time cannot move one night's send).
   */
  private noteQuietNights(
    q: QuietTime,
    zone: string,
    time: RecurringTime,
    startMs: number,
    endMs: number,
    window: number,
  ): void {
    let changes = this.offsetChanges.get(zone);
    if (changes === undefined || changes.fromMs > startMs || changes.toMs < endMs) {
      changes = { fromMs: startMs, toMs: endMs, at: offsetChanges(zone, startMs, endMs) };
      this.offsetChanges.set(zone, changes);
    }
    const across = occurrencesAcross(time, zone, changes.at, startMs, endMs, window);
    for (const o of quietOccurrences(q, zone, across, window)) {
      const { year, month, day } = localTimeOf(zone, o.utcMs);
      const date = `${year}-${p2(month)}-${p2(day)}`;
      const at = `${p2(time.hour)}:${p2(time.minute)}`;
      this.quietNights.set(`${zone} ${date} ${at}`, { zone, date, at, utcMs: o.utcMs, freeMinutes: o.freeMinutes });
    }
  }

  /** The recurring occurrences whose window reaches quiet time on a night the clock changes, by date (noteQuietNights). */
  recurringQuietNights(): QuietNight[] {
    return [...this.quietNights.values()].sort((a, b) => a.utcMs - b.utcMs || (a.zone < b.zone ? -1 : 1));
  }

  /** Once every row is decided: refuses (UsageError, exit 2) a plan with recurringQuietNights (recurringQuietRefusal). */
  refuseRecurringQuietNights(windowSource: "--window-minutes" | "computed"): void {
    const q = this.rules.quiet;
    const refusal =
      q && recurringQuietRefusal(q, this.rules.windowMinutes ?? 1, this.recurringQuietNights(), windowSource);
    if (refusal) throw new UsageError(refusal);
  }
}

/** A recurring send's occurrence whose window reaches quiet time on a night its zone's clock changes. */
export interface QuietNight {
  zone: string;
  /** Its local date, YYYY-MM-DD, and local time, HH:MM. */
  date: string;
  at: string;
  utcMs: number;
  /** The longest window that keeps quiet time out of this occurrence's. */
  freeMinutes: number;
}

const MAX_NIGHTS_NAMED = 8;

/**
 * Why a recurring plan whose window reaches quiet time on some night a clock changes is refused (exit 2), naming the
 * zones and dates and the longest window that holds on all of them; undefined when there is none. One cron time
 * cannot move one night's send, and a shorter window chosen here would no longer be the one the sends were sized or
 * asked for: the user chooses.
 */
export function recurringQuietRefusal(
  q: QuietTime,
  windowMinutes: number,
  nights: readonly QuietNight[],
  source: "--window-minutes" | "computed",
): string | undefined {
  if (nights.length === 0) return undefined;
  const named = nights
    .slice(0, MAX_NIGHTS_NAMED)
    .map((n) => `${n.zone} on ${n.date} (${n.at}, ${n.freeMinutes} minutes free)`)
    .join(", ");
  const more = nights.length > MAX_NIGHTS_NAMED ? ` and ${nights.length - MAX_NIGHTS_NAMED} more` : "";
  const max = Math.min(...nights.map((n) => n.freeMinutes));
  const fix =
    source === "--window-minutes"
      ? `give --window-minutes ${max} or less, or another --hour`
      : `it needs a window of ${max} minutes or less (launch-campaign --window-minutes ${max}, with a send rate that fits it), or another --hour`;
  const those = nights.length === 1 ? "that night" : "those nights";
  return `quiet time (${describeQuietTime(q)}) falls inside the ${windowMinutes}-minute window of a recurring send on a night the clock changes: ${named}${more}; one cron time cannot keep it out on ${those}: ${fix}`;
}
