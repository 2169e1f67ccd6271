/**
 * Legal hours for one recipient (docs/sms.md): which jurisdictions of the chosen presets apply, from the state or
 * province of their NANP area code (area-codes.ts), and the first instant at or after a planned one that every
 * candidate allows: in every zone the recipient may be in, under every jurisdiction that may be theirs (never early,
 * never late in any: the intersection of the windows). A send outside them moves to that instant or is skipped, as
 * quiet time's policies say (quiet-time.ts QuietPolicy). Pure: no I/O.
 *
 * Quiet time (quiet-time.ts) is one set of hours for every day and whole quiet days; legal hours differ by weekday
 * (Texas's Sunday, Canada's weekend), which one QuietTime cannot say, so the search is here, on quiet time's clock
 * functions (send-time.ts, and its DST gap rule).
 */
import { gapEnd, QuietPolicy } from "../timing/quiet-time";
import { addDays, LocalTime, localTimeOf, zonedInstant } from "../timing/send-time";
import { AREA_CODE_SUBDIVISIONS } from "./area-codes";
import {
  describeHours,
  intersectHours,
  jurisdiction,
  Jurisdiction,
  LEGAL_HOURS_PRESETS,
  LegalHoursPreset,
  presetJurisdictions,
  WeekHours,
} from "./legal-hours";

/** The hours a recipient may be texted in one of their zones: every applicable jurisdiction's, intersected. */
export interface LegalCandidate {
  zone: string;
  hours: WeekHours;
  /** The jurisdictions intersected (ids). */
  jurisdictions: readonly string[];
}

const SUBDIVISIONS_BY_AREA_CODE = new Map<string, readonly string[]>();
for (const [list, codes] of Object.entries(AREA_CODE_SUBDIVISIONS))
  for (const code of codes.split(" ")) SUBDIVISIONS_BY_AREA_CODE.set(code, Object.freeze(list.split(" ")));

/** The states or provinces ("US-NJ", or a country alone, "CA") of a +1 number's area code, or undefined. */
export function areaCodeSubdivisions(e164: string): readonly string[] | undefined {
  const m = /^\+1([2-9]\d{2})\d{7}$/.exec(e164);
  return m ? SUBDIVISIONS_BY_AREA_CODE.get(m[1]) : undefined;
}

/**
 * The jurisdictions of `presets` that may be a recipient's, from their E.164 number: for a number whose area code
 * the map places, its country's own rule and each of its states' (all of them for an area code of several), and
 * nothing from a preset of another country; for any other recipient (no number, another country's, an area code the
 * map does not place), every jurisdiction of every preset: where they are is unknown, so the strictest.
 */
export function applicableJurisdictions(presets: readonly LegalHoursPreset[], e164?: string): Jurisdiction[] {
  const subdivisions = e164 === undefined ? undefined : areaCodeSubdivisions(e164);
  const out = new Map<string, Jurisdiction>();
  for (const preset of presets) {
    const country = LEGAL_HOURS_PRESETS[preset];
    const all = presetJurisdictions(preset);
    if (subdivisions === undefined) {
      for (const j of all) out.set(j.id, j);
      continue;
    }
    for (const sub of subdivisions) {
      if (sub !== country && !sub.startsWith(`${country}-`)) continue;
      // A country alone (an area code the data places in no one province) takes all of its country's rules.
      for (const j of sub === country ? all : [jurisdiction(country), jurisdiction(sub)]) if (j) out.set(j.id, j);
    }
  }
  return [...out.values()];
}

/**
 * One candidate per zone: the applicable jurisdictions' hours intersected; none when no jurisdiction applies. A
 * recipient has at least one zone (theirs, or the campaign's default): without one there is no local time to hold.
 */
export function legalCandidates(
  presets: readonly LegalHoursPreset[],
  zones: readonly string[],
  e164?: string,
): LegalCandidate[] {
  const rules = applicableJurisdictions(presets, e164);
  if (rules.length === 0) return [];
  if (zones.length === 0) throw new Error("legal hours need the recipient's zone: none was given");
  const hours = intersectHours(rules.map((j) => j.hours));
  const ids = rules.map((j) => j.id);
  return zones.map((zone) => ({ zone, hours, jurisdictions: ids }));
}

const DAY_MS = 86_400_000;
/** How far nextLegalInstant looks by default: a week and a day (every table's week has an open day). */
export const LEGAL_SEARCH_BOUND_MS = 8 * DAY_MS;

const weekday = (t: LocalTime) => new Date(Date.UTC(t.year, t.month - 1, t.day)).getUTCDay();

/** Whether one candidate allows the instant: its zone's local minute in that weekday's window. */
export function allows(c: LegalCandidate, utcMs: number): boolean {
  const t = localTimeOf(c.zone, utcMs);
  const w = c.hours[weekday(t)];
  const minute = t.hour * 60 + t.minute;
  return w !== null && minute >= w.start && minute < w.end;
}

/** The first instant at or after `utcMs` one candidate allows, or null when none within a week. */
function nextOpen(c: LegalCandidate, utcMs: number): number | null {
  if (allows(c, utcMs)) return utcMs;
  const now = localTimeOf(c.zone, utcMs);
  for (let d = 0; d <= 7; d++) {
    const date = addDays(now, d);
    const w = c.hours[weekday(date)];
    if (!w) continue;
    const open = zonedInstant(c.zone, { ...date, hour: Math.floor(w.start / 60), minute: w.start % 60 });
    // A window that opens in a DST gap opens when the clock jumps past it.
    const at = open.fold === "gap" ? gapEnd(c.zone, open.utcMs) : open.utcMs;
    if (at > utcMs && allows(c, at)) return at;
  }
  return null;
}

/**
 * The first instant at or after `utcMs` every candidate allows: `utcMs` itself when they all do (or there are
 * none); null when no such instant comes within `boundMs` (their zones' windows do not meet). Each move goes to the
 * latest of the candidates' next openings: every instant before it is outside the window of the candidate it is
 * from, so no earlier instant is allowed by all.
 */
export function nextLegalInstant(
  utcMs: number,
  candidates: readonly LegalCandidate[],
  boundMs = LEGAL_SEARCH_BOUND_MS,
): number | null {
  let t = utcMs;
  for (let moves = 0; moves <= candidates.length * 16; moves++) {
    let latest = t;
    for (const c of candidates) {
      const open = nextOpen(c, t);
      if (open === null) return null;
      latest = Math.max(latest, open);
    }
    if (latest - utcMs > boundMs) return null;
    if (latest === t) return t;
    t = latest;
  }
  return null;
}

/** What legal hours do to one planned send: kept, moved to the next allowed instant, or skipped (with why). */
export type LegalOutcome = { utcMs: number; moved: boolean } | { skipped: string };

/** A planned send under legal hours, with quiet time's policies: `delay` moves it, `skip` skips it. */
export function applyLegalHours(
  utcMs: number,
  candidates: readonly LegalCandidate[],
  policy: QuietPolicy,
  boundMs = LEGAL_SEARCH_BOUND_MS,
): LegalOutcome {
  if (candidates.every((c) => allows(c, utcMs))) return { utcMs, moved: false };
  const where = candidates.map((c) => `${c.zone} ${describeHours(c.hours)}`).join("; ");
  if (policy === "skip") return { skipped: `outside legal hours (${where}) and the policy is skip` };
  const next = nextLegalInstant(utcMs, candidates, boundMs);
  if (next === null) return { skipped: `legal hours (${where}) leave no time within ${boundMs / DAY_MS} days` };
  return { utcMs: next, moved: true };
}

/** The strictest same-subject limit of the candidates (Florida, Oklahoma, Maryland: 3 in 24 h), or undefined. */
export function sameSubjectLimit(presets: readonly LegalHoursPreset[], e164?: string): number | undefined {
  const limits = applicableJurisdictions(presets, e164)
    .map((j) => j.sameSubjectPer24h)
    .filter((n): n is number => n !== undefined);
  return limits.length ? Math.min(...limits) : undefined;
}

/**
 * When the legal window holding `utcMs` first closes in one of `candidates` (each zone's end of that day's window; a
 * candidate closed that day closes at `utcMs`). The planner's `until` and a journey text's Until both come from here.
 */
export function legalWindowClose(utcMs: number, candidates: readonly LegalCandidate[]): number {
  let close = Infinity;
  for (const c of candidates) {
    const t = localTimeOf(c.zone, utcMs);
    const w = c.hours[new Date(Date.UTC(t.year, t.month - 1, t.day)).getUTCDay()];
    if (!w) return utcMs;
    const day = w.end >= 1440 ? addDays(t, 1) : t;
    const end = w.end % 1440;
    close = Math.min(close, zonedInstant(c.zone, { ...day, hour: Math.floor(end / 60), minute: end % 60 }).utcMs);
  }
  return close;
}
