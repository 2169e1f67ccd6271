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
 */
import { cronExpression, Recurrence, RecurringTime } from "../../../infra/core/plan/schedule-expression";
import { describeQuietTime, QuietTime } from "../../../infra/core/timing/quiet-time";
import {
  droppedSends,
  endOfQuietAcross,
  endOfQuietWindow,
  MIN_GAP_MINUTES,
  quietEveryNight,
  quietOccurrences,
} from "../../../infra/core/timing/promises";
import {
  nextOccurrence,
  occurrences,
  occurrencesAcross,
  offsetChanges,
  recurringEndMs,
  shortestGapMinutes,
  sizingSpanDays,
} from "../../../infra/core/timing/recurrence";
import {
  BaseRule,
  describeRule,
  firstSend,
  reduceAfter,
  requestedLocal,
  rowHourAndMinute,
  RowTiming,
  SEND_AT_COLUMN,
  stepFromFirst,
  TimingProblem,
  timingKey,
} from "../../../infra/core/timing/send-rules";
import {
  addDays,
  LocalTime,
  localTimeOf,
  ScheduledTime,
  scheduledTime,
  Step,
  wallClock,
  writable,
  ZoneResolver,
  ZoneStatus,
  zonedInstant,
} from "../../../infra/core/timing/send-time";
import { InstantHistogram } from "./window";
import { missedFate, MissedRule } from "./missed";
import { UsageError } from "../../../infra/core/errors";
import { cachedOffsetMinutes, ZoneOffsets, zoneOffsets } from "../../../infra/core/timing/zone-offsets";
import {
  canonicalZone,
  countryZone,
  InferSource,
  ResolvedZone,
  ZoneAliases,
} from "../../../infra/core/zones/zone-names";
import { readCoordinates } from "../../../infra/core/zones/coordinates";
import { readPhone } from "../../../infra/core/zones/phone";
import { readPostal } from "../../../infra/core/zones/postal";
import {
  candidatesNote,
  countryNote,
  latlonNote,
  placeNote,
  rowZoneVerdict,
  topUnknownZones,
  UnknownZoneValue,
  ZoneRejectReason,
} from "./row-zones";
import { scheduler } from "../../../infra/core/plan/quotas";

/**
 * The largest flexible window a recurring send may have: one occurrence invoked at the end of its window and the next
 * at the start of its own must stay MIN_GAP_MINUTES apart (and the last wanted one before its EndDate).
 */
export function maxRecurringWindowMinutes(r: Recurrence): number {
  return Math.min(scheduler.flexibleWindowMinutes.max, shortestGapMinutes(r) - MIN_GAP_MINUTES);
}

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
   * What the planner (plan.ts) prepared for the rows with these decisions, kept with them because those rows share
   * them; undefined until then, and present on every answer so that all have one hidden class.
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

const NO_ROW_VALUES: RowTiming = {};
const NO_NOTES: string[] = [];
const MAX_CACHED = 200_000;

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
const NO_PLACE: RowPlace = {};

/** A zone as written, resolved once: the zone, its status, its note, or the strict-zones reject. */
interface ResolvedRawZone {
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
interface TimingKeyed {
  offsets: ZoneOffsets;
  answers: Map<number, ZoneDecisions>;
}

/**
 * Steps for one zone and timing values, with their notes; or the row's send-time problem. `answers` keeps the full
 * answers built from it, one per way the zone is written (usually one; at most MAX_SPELLINGS), so rows allocate
 * nothing and rows with one answer share what the planner prepares for it, even when spellings take turns.
 */
type SharedSteps =
  | {
      steps: StepDecision[];
      notes: string[];
      answers?: { z: ResolvedRawZone; decisions: ZoneDecisions }[];
      /** Across candidate zones: the zone the sends are written in. */
      zone?: string;
    }
  | TimingProblem
  | { reason: "ambiguous-zone"; text: string };
const MAX_SPELLINGS = 8;

export class SendDecider {
  private readonly zones: ZoneResolver;
  private readonly byRawZone = new Map<string, ResolvedRawZone>();
  /**
   * Rows without a usable zone, by zone as written, then by the zone at their coordinates (--infer-zone latlon) or
   * their country (--infer-zone country): the zone inferred, or theirs unchanged.
   */
  private readonly inferredBy: Record<InferSource, Map<ResolvedRawZone, Map<string, ResolvedRawZone>>> = {
    latlon: new Map(),
    postal: new Map(),
    phone: new Map(),
    country: new Map(),
  };
  private inferredSize = 0;
  private readonly infer: Record<InferSource, boolean>;
  /** Steps across candidate zones, by the first candidate's steps (shared), then the others'. */
  private readonly across = new Map<SharedSteps, { plans: SharedSteps[]; result: SharedSteps }[]>();
  private readonly cache = new Map<string, SharedSteps>();
  /** Every byTimingKey, and their entries together (bounded like the cache). */
  private readonly keyed: TimingKeyed[] = [];
  private keyedEntries = 0;
  /** Per zone, its offset changes over the recurring schedules' span (rule `every` with quiet time). */
  private readonly offsetChanges = new Map<string, { fromMs: number; toMs: number; at: number[] }>();
  private readonly quietNights = new Map<string, QuietNight>();

  constructor(readonly rules: SendRules) {
    this.zones = new ZoneResolver(rules.defaultZone, rules.zoneAliases);
    const sources = rules.inferZone ?? [];
    this.infer = { latlon: false, postal: false, phone: false, country: false };
    for (const source of sources) this.infer[source] = true;
  }

  /**
   * The row's zone (as written, or undefined when the file has no timezone column), its steps' sends and notes. Rows
   * whose values have a common form are answered by one lookup of a number (send-rules.ts timingKey: equal keys in
   * one zone mean equal first sends, and so equal decisions, whatever the values' text); others by their text.
   */
  decide(rawZone: string | undefined, timing: RowTiming = NO_ROW_VALUES, place: RowPlace = NO_PLACE): ZoneDecisions {
    let z = this.resolve(rawZone);
    // (A row with a usable zone reads nothing else: no coordinates parsed, no string built.)
    if (z.status === "defaulted") z = this.inferred(z, place);
    z.rows++;
    // (One field order for every answer, like stepDecision's.)
    if (z.reject)
      return {
        zone: z.zone,
        status: z.status,
        steps: [],
        notes: NO_NOTES,
        noSendLeft: undefined,
        reject: z.reject,
        candidates: undefined,
        prepared: undefined,
      };
    if (z.candidates) return this.answer(z, this.sharedAcross(z.candidates, timing));
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
    if ("reason" in shared)
      return {
        zone: z.zone,
        status: z.status,
        steps: [],
        notes: NO_NOTES,
        noSendLeft: undefined,
        reject: shared,
        candidates: z.candidates,
        prepared: undefined,
      };
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

  private resolve(rawZone: string | undefined): ResolvedRawZone {
    const key = rawZone ?? "";
    let r = this.byRawZone.get(key);
    if (!r) {
      const resolved = this.zones.resolve(rawZone);
      const { zone, status } = resolved;
      const { notes, reject } = rowZoneVerdict(rawZone, resolved, this.rules.strictZones === true);
      r = { zone, status, notes, reject, written: key, resolved, rows: 0, byTimingKey: undefined };
      if (this.byRawZone.size < 100_000) {
        this.byRawZone.set(key, r);
        if (!reject) this.keyed.push((r.byTimingKey = { offsets: zoneOffsets(zone), answers: new Map() }));
      }
    }
    return r;
  }

  /**
   * A row without a usable zone: the zone at its coordinates, else its postal code's, else its phone number's, else
   * its country's one zone (the order of docs/send-rules.md, each as --infer-zone allows). Coordinates, a postal code
   * or a phone number that is not one refuses the row (it would otherwise be sent at a guess); a source that knows
   * no zone for the value passes the row to the next. Otherwise `z`.
   */
  private inferred(z: ResolvedRawZone, place: RowPlace): ResolvedRawZone {
    const infer = this.infer;
    if (infer.latlon && (place.latitude !== undefined || place.longitude !== undefined)) {
      const read = readCoordinates(place.latitude, place.longitude);
      if (read !== undefined && "problem" in read) return refused(z, "invalid-coordinates", read.problem);
      const r = read === undefined ? z : this.fromData(z, "latlon", read.zone);
      if (r !== z) return r;
    }
    if (infer.postal && place.postalCode !== undefined) {
      const read = readPostal(place.postalCode, place.country);
      if (read !== undefined && "problem" in read) return refused(z, "invalid-postal-code", read.problem);
      const r = read === undefined ? z : this.fromZones(z, "postal", read.zones, place.postalCode);
      if (r !== z) return r;
    }
    if (infer.phone && place.phone !== undefined) {
      const read = readPhone(place.phone, place.country);
      if (read !== undefined && "problem" in read) return refused(z, "invalid-phone", read.problem);
      const r = read === undefined ? z : this.fromZones(z, "phone", read.zones, place.phone);
      if (r !== z) return r;
    }
    return infer.country && place.country !== undefined ? this.fromData(z, "country", place.country) : z;
  }

  /** One zone: as fromData; several: the entry of `z`'s rows with these candidates; none: `z`. */
  private fromZones(
    z: ResolvedRawZone,
    source: "postal" | "phone",
    zones: readonly string[],
    written: string,
  ): ResolvedRawZone {
    if (zones.length === 0) return z;
    if (zones.length === 1) return this.fromData(z, source, zones[0]);
    const keys = this.keysOf(z, source);
    const key = zones.join(" ");
    let r = keys.get(key);
    if (!r) {
      const candidates = zones.map((c) => canonicalZone(c)).filter((c): c is string => c !== undefined);
      if (candidates.length < 2) return candidates.length ? this.fromData(z, source, candidates[0]) : z;
      const notes = [candidatesNote(z.written, source, written, candidates)];
      const resolved = { zone: candidates[0], status: source };
      r = { zone: candidates[0], status: source, notes, written: z.written, resolved, rows: 0, candidates };
      if (this.inferredSize < 100_000) {
        keys.set(key, r);
        this.inferredSize++;
      }
    }
    return r;
  }

  private keysOf(z: ResolvedRawZone, source: InferSource): Map<string, ResolvedRawZone> {
    // Keyed by the written zone's own entry, then the zone looked up or the country: no string built per row.
    const bySource = this.inferredBy[source];
    let keys = bySource.get(z);
    if (!keys) bySource.set(z, (keys = new Map()));
    return keys;
  }

  /** The entry of `z`'s rows whose data's zone or country is `key`: its zone (noted); otherwise `z` itself. */
  private fromData(z: ResolvedRawZone, source: InferSource, key: string): ResolvedRawZone {
    const keys = this.keysOf(z, source);
    let r = keys.get(key);
    if (!r) {
      // (A zone a data set knows and our IANA list does not could not be scheduled: not taken.)
      const zone = source === "country" ? countryZone(key) : canonicalZone(key);
      if (zone === undefined) r = z;
      else {
        const resolved = { zone, status: source };
        const notes = [
          source === "latlon"
            ? latlonNote(z.written, zone)
            : source === "country"
              ? countryNote(z.written, zone, key)
              : placeNote(z.written, source, zone),
        ];
        const byTimingKey = { offsets: zoneOffsets(zone), answers: new Map() };
        r = { zone, status: source, notes, reject: undefined, written: z.written, resolved, rows: 0, byTimingKey };
      }
      if (this.inferredSize < 100_000) {
        keys.set(key, r);
        this.inferredSize++;
        if (r !== z) this.keyed.push(r.byTimingKey!);
      }
    }
    return r;
  }

  /**
   * The steps of a row whose data admits several zones (docs/send-rules.md, "Several zones"): planned in each, then
   * in the zone whose sends are the latest for every step — so each send's local time has come in all of them
   * (never early) — and moved out of quiet time in every one of them (never quiet). Under --ambiguous-zone skip, or
   * when no zone is latest for every step, or for a recurring send whose zones differ, the row is refused.
   */
  private sharedAcross(zones: readonly string[], timing: RowTiming): SharedSteps {
    const plans = zones.map((zone) => this.shared(zone, timing));
    let memo = this.across.get(plans[0]);
    const hit = memo?.find((m) => m.plans.every((p, i) => p === plans[i]));
    if (hit) return hit.result;
    const result = this.combine(zones, plans);
    if (!memo) {
      if (this.across.size >= MAX_CACHED) this.across.clear();
      this.across.set(plans[0], (memo = []));
    }
    if (memo.length < MAX_SPELLINGS) memo.push({ plans, result });
    return result;
  }

  private combine(zones: readonly string[], plans: SharedSteps[]): SharedSteps {
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

  /** The most frequent values of the timezone column that are not IANA names, with what each is read as. */
  unknownZones(): UnknownZoneValue[] {
    const inferred = Object.values(this.inferredBy)
      .flatMap((byZone) => [...byZone.values()].flatMap((m) => [...m.values()]))
      .filter((r) => r.status !== "defaulted");
    return topUnknownZones([...this.byRawZone.values(), ...inferred]);
  }

  private shared(zone: string, timing: RowTiming): SharedSteps {
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
    const key = cacheKey(rule, zone, timing, sendAt, after);
    let hit = this.cache.get(key);
    if (hit === undefined) {
      hit = this.compute(zone, { ...timing, sendAt, after: after ?? timing.after });
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(key, hit);
    }
    return hit;
  }

  private compute(zone: string, timing: RowTiming): SharedSteps {
    if (this.rules.rule.kind === "every") return this.recurring(zone, timing);
    const first = firstSend(this.rules.rule, zone, timing);
    if ("reason" in first) return first;
    // In order: a step moved to the next day takes the later steps with it (each a day later, then checked itself).
    let shiftDays = 0;
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

  /**
   * A recurring send in `zone`: one cron schedule from the start to an EndDate after --until's last occurrence and its
   * window, before the next one (recurrence.ts recurringEndMs). A row's send_at
   * (a one-time time) cannot be recurring: the row is rejected. A recurring time in quiet hours would be quiet at every
   * occurrence: the step is skipped (the row then rejected), whatever the quiet policy.
   */
  private recurring(zone: string, timing: RowTiming): SharedSteps {
    const rule = this.rules.rule as Extract<BaseRule, { kind: "every" }>;
    const step = this.rules.steps[0];
    if (this.rules.steps.length !== 1) throw new Error("internal: a recurring send has one step");
    if (timing.sendAt !== undefined)
      return {
        reason: "invalid-send-time",
        text: `${SEND_AT_COLUMN} "${timing.sendAt}" is a one-time send time; recurring sends (--every) take the hour from send_hour/send_minute`,
      };
    const hm = rowHourAndMinute(rule, timing);
    if ("reason" in hm) return hm;
    const time = { recurrence: rule.recurrence, ...hm };
    const startMs = this.rules.recurringStartMs;
    if (startMs === undefined) throw new Error("internal: a recurring send needs its start");
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

const p2 = (n: number) => String(n).padStart(2, "0");
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

/** A row refused for its place data: `z`'s entry with the reason (not kept: rare, and the text is the row's). */
function refused(z: ResolvedRawZone, reason: ZoneRejectReason, text: string): ResolvedRawZone {
  return { ...z, notes: [], reject: { reason, text }, rows: 0, byTimingKey: undefined, candidates: undefined };
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

/**
 * A StepDecision with every field present, always in this order: all of them share one hidden class, so the code that
 * reads them per row (the plan lines, the counts) stays monomorphic whichever outcomes a list mixes.
 */
function stepDecision(
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
function separateSteps(decisions: StepDecision[]): StepDecision[] {
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
function gapNote(zone: string, d: StepDecision, asked: LocalTime): string | undefined {
  if (d.time?.fold !== "gap") return undefined;
  const to = localTimeOf(zone, d.time.utcMs);
  const date = `${asked.year}-${p2(asked.month)}-${p2(asked.day)}`;
  return `step ${d.step.number} at ${date} ${p2(asked.hour)}:${p2(asked.minute)} local does not exist in ${zone} (the clock skips it): moved forward to ${p2(to.hour)}:${p2(to.minute)} local, ${d.time.utc}`;
}

/** The note a step's outcome needs, if any. */
function stepNote(d: StepDecision, all: StepDecision[]): string | undefined {
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

/**
 * The send instants of planned rows, for the window. Rows that share a decision list (same zone and timing values)
 * are counted together and added to the histogram in bulk, not once per row and step; the pending counts are bounded
 * for lists with a send time per row.
 */
export class PlannedSends {
  private readonly histogram = new InstantHistogram();
  /** Schedules planned (a recurring schedule is one, however many of its occurrences the histogram holds). */
  schedules = 0;
  private pending: PendingSends[] = [];
  private static readonly MAX_PENDING = 50_000;

  /**
   * Counts `rows` rows. The count goes to the entry the list itself points to when it is this one's, still pending, for
   * the same zone (rows share lists: no lookup per row, which with thousands of lists missed the CPU's caches);
   * otherwise to a new entry the list then points to. Each add counts in exactly one of this one's pending entries.
   */
  add(zone: string, decisions: StepDecision[], rows = 1): void {
    const list = decisions as CountedList;
    const entry = list[PENDING];
    if (entry !== undefined && entry.owner === this && entry.live && entry.zone === zone) {
      entry.count += rows;
      return;
    }
    if (this.pending.length >= PlannedSends.MAX_PENDING) this.flush();
    const fresh: PendingSends = { owner: this, live: true, zone, count: rows, decisions };
    list[PENDING] = fresh;
    this.pending.push(fresh);
  }

  /** Every planned send so far. */
  instants(): InstantHistogram {
    this.flush();
    return this.histogram;
  }

  private flush(): void {
    for (const entry of this.pending) {
      entry.live = false;
      const { decisions, zone, count } = entry;
      for (const d of decisions) {
        if (!d.time) continue;
        this.schedules += count;
        if (d.recurring) for (const utcMs of d.recurring.sized) this.histogram.add(utcMs, zone, count);
        else this.histogram.add(d.time.utcMs, zone, count);
      }
    }
    this.pending = [];
  }
}

/** Rows counted by a PlannedSends for one decision list and zone, not yet in its histogram. */
interface PendingSends {
  owner: PlannedSends;
  live: boolean;
  zone: string;
  count: number;
  decisions: StepDecision[];
}
const PENDING = Symbol("pending sends");
type CountedList = StepDecision[] & { [PENDING]?: PendingSends };

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
