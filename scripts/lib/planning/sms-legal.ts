/**
 * Legal hours applied to a row's text steps (docs/sms.md, "Launching texts"): each text's instant is moved to the
 * next one every candidate allows — in every zone the row may be in, under every jurisdiction its number may be in
 * (infra/core/sms/legal-window.ts) — with room for the send's flexible window before the legal window closes, or
 * skipped (--legal-hours-miss skip). A text gets `until`, the close of the legal window holding it, and the number's
 * same-subject limit; under that limit (Florida, Oklahoma, Maryland: 3 in 24 h) the planner never plans a fourth text of
 * the campaign within 24 hours of the first of three (the sender holds it across campaigns).
 *
 * The answer depends on the row's decisions (shared, decisions.ts) and on which jurisdictions apply: rows with one
 * answer of the decider and one set of jurisdictions share one derived answer.
 */
import { QuietPolicy } from "../../../infra/core/timing/quiet-time";
import { scheduledTime } from "../../../infra/core/timing/send-time";
import { LegalHoursPreset } from "../../../infra/core/sms/legal-hours";
import {
  allows,
  applicableJurisdictions,
  LegalCandidate,
  legalCandidates,
  legalWindowClose,
  nextLegalInstant,
  sameSubjectLimit,
} from "../../../infra/core/sms/legal-window";
import { SMS_MAX_TTL_SECONDS } from "../../../infra/core/send/sms-input";
import { StepDecision, ZoneDecisions } from "./decision-types";
import { NUMBER_HOLD_SECONDS } from "../../../infra/core/send/number-limit";

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const MAX_CACHED = 100_000;

export interface LegalRules {
  presets: readonly LegalHoursPreset[];
  miss: QuietPolicy;
  /** The flexible window each send may fire in after its instant: the text must fit it before the window closes. */
  windowMinutes: number;
}

/** A row's decisions with its texts placed, and what legal hours did to them. */
export interface LegalAnswer {
  decided: ZoneDecisions;
  moved: number;
  skipped: number;
}

export function untilOf(candidates: readonly LegalCandidate[], utcMs: number): number {
  if (candidates.length === 0) return utcMs + SMS_MAX_TTL_SECONDS * 1000;
  return legalWindowClose(utcMs, candidates);
}

/**
 * The first instant at or after `utcMs` every candidate allows with `windowMs` to spare before the window closes, or
 * null within the search bound.
 */
export function legalInstant(utcMs: number, candidates: readonly LegalCandidate[], windowMs: number): number | null {
  let t: number | null = utcMs;
  for (let tries = 0; tries < 16 && t !== null; tries++) {
    t = nextLegalInstant(t, candidates);
    if (t === null || t - utcMs > 8 * DAY_MS) return null;
    const close = untilOf(candidates, t);
    if (close - t >= windowMs) return t;
    t = close;
  }
  return null;
}

export class SmsLegalHours {
  private readonly cache = new Map<ZoneDecisions, Map<string, LegalAnswer>>();
  private cached = 0;
  constructor(
    private readonly rules: LegalRules,
    /** Step indices of the text steps. */
    private readonly textSteps: ReadonlySet<number>,
  ) {}

  /** The jurisdictions (and limit) a number is under: what its answer is keyed by. */
  keyOf(e164: string): string {
    const ids = applicableJurisdictions(this.rules.presets, e164).map((j) => j.id);
    return ids.sort().join(" ");
  }

  /** The row's decisions with its texts under legal hours; `e164` the row's number. */
  apply(decided: ZoneDecisions, e164: string): LegalAnswer {
    const key = this.keyOf(e164);
    let byKey = this.cache.get(decided);
    const hit = byKey?.get(key);
    if (hit) return hit;
    const answer = this.compute(decided, e164);
    if (this.cached >= MAX_CACHED) {
      this.cache.clear();
      this.cached = 0;
    }
    if (!byKey) this.cache.set(decided, (byKey = new Map()));
    byKey.set(key, answer);
    this.cached++;
    return answer;
  }

  private compute(decided: ZoneDecisions, e164: string): LegalAnswer {
    const zones = decided.candidates ?? [decided.zone];
    const candidates = this.rules.presets.length ? legalCandidates(this.rules.presets, zones, e164) : [];
    const limit = this.rules.presets.length ? sameSubjectLimit(this.rules.presets, e164) : undefined;
    const notes: string[] = [];
    let moved = 0;
    let skipped = 0;
    const kept: number[] = [];
    const steps = decided.steps.map((d, k): StepDecision => {
      if (!this.textSteps.has(k) || !d.time) return d;
      const placed = this.place(d, candidates, limit, kept);
      if ("skipped" in placed) {
        skipped++;
        notes.push(`step ${d.step.number} (text) not sent: ${placed.skipped}`);
        return { ...d, time: undefined, due: d.time.utc };
      }
      kept.push(placed.utcMs);
      const until = new Date(untilOf(candidates, placed.utcMs)).toISOString();
      const text = { until, ...(limit === undefined ? {} : { sameSubjectLimit: limit }) };
      if (placed.utcMs === d.time.utcMs) return { ...d, text };
      moved++;
      const time = scheduledTime(d.time.timezone, placed.utcMs, "exact");
      notes.push(`step ${d.step.number} (text) moved from ${d.time.utc} to ${time.utc}: ${placed.why}`);
      return { ...d, time, due: d.time.utc, text };
    });
    const out: ZoneDecisions = {
      ...decided,
      steps,
      notes: notes.length ? [...decided.notes, ...notes] : decided.notes,
      prepared: undefined,
    };
    return { decided: out, moved, skipped };
  }

  /** Where one text goes: its instant (why moved), or why it is skipped. */
  private place(
    d: StepDecision,
    candidates: readonly LegalCandidate[],
    limit: number | undefined,
    kept: readonly number[],
  ): { utcMs: number; why: string } | { skipped: string } {
    const where = candidates.map((c) => `${c.zone} ${c.jurisdictions.join("+")}`).join("; ");
    const windowMs = this.rules.windowMinutes * MINUTE_MS;
    const holdMs = NUMBER_HOLD_SECONDS * 1000 + windowMs;
    let t = d.time!.utcMs;
    let why = `outside legal hours (${where}) with its ${this.rules.windowMinutes}-minute window`;
    for (let round = 0; round < 8; round++) {
      // Under a same-subject limit: the text waits until fewer than `limit` texts of the campaign are in its 24 h,
      // counted as the sender counts them (NUMBER_HOLD_SECONDS: 24 h and the longest a text leaves after admission)
      // and with the window between them, since each may fire anywhere in its own.
      const inDay = limit === undefined ? [] : kept.filter((k) => k > t - holdMs && k <= t).sort((a, b) => a - b);
      if (limit !== undefined && inDay.length >= limit) {
        if (this.rules.miss === "skip")
          return { skipped: `a ${limit + 1}th text within 24 hours to this number (same-subject limit ${limit})` };
        t = inDay[inDay.length - limit] + holdMs;
        why = `the same-subject limit (${limit} texts in 24 hours to this number)`;
        continue;
      }
      if (candidates.length === 0 || allowsWindow(candidates, t, windowMs)) return { utcMs: t, why };
      if (this.rules.miss === "skip") return { skipped: `${why}, and --legal-hours-miss is skip` };
      const next = legalInstant(t, candidates, windowMs);
      if (next === null) return { skipped: `legal hours (${where}) leave no time within 8 days` };
      t = next;
    }
    return { skipped: `no instant within 8 days meets legal hours and the same-subject limit` };
  }
}

/** Whether every candidate allows `utcMs` and its window closes `windowMs` or more after it. */
function allowsWindow(candidates: readonly LegalCandidate[], utcMs: number, windowMs: number): boolean {
  return candidates.every((c) => allows(c, utcMs)) && untilOf(candidates, utcMs) - utcMs >= windowMs;
}
