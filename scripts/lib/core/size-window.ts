/**
 * size-window's core: streams a recipient list into a histogram of send instants and sizes the window from it.
 * Memory is per distinct zone and instant, never per row.
 */
import { Audience, AudienceSplit, HOLDOUT } from "./audience";
import { nothingLeft, PlannedSends, SendDecider } from "./decisions";
import { InputError } from "./errors";
import { QuietTime } from "./quiet-time";
import { ID_COLUMN, RejectReason, rowTiming, timingColumns, TIMEZONE_COLUMN } from "./recipient-rows";
import { openRecipientCsv } from "./recipients";
import { BaseRule } from "./send-rules";
import { Step, ZoneStatus } from "./send-time";
import { EffectiveTps, fanOutSeconds, minimumWindowMinutes } from "./window";

export interface WindowReport {
  mode: "volume" | "recipients";
  schedules: number;
  effectiveTps: number;
  effectiveTpsSource: string;
  windowMinutes: number;
  createTps: number;
  /** Seconds the fan-out needs to create every schedule at createTps. */
  fanOutSeconds: number;
  rows?: number;
  steps?: number;
  defaultTimezone?: string;
  /** Rows whose zone was missing or unknown and took the default; rows whose zone differed only in case. */
  defaulted?: number;
  canonicalised?: number;
  /** Rows the launcher would not plan for their send time (invalid-send-time, invalid-date, quiet-hours). */
  rejected?: Partial<Record<RejectReason, number>>;
  /** Rows in the holdout group (not sent). */
  heldOut?: number;
  /** Sends moved or dropped by quiet time. */
  quiet?: { delayed: number; skipped: number };
  /** Ascending. */
  instants?: { utc: string; count: number; zones: { zone: string; count: number }[] }[];
  peak?: { utc: string; count: number } | null;
  /** Highest summed send rate with the chosen window. */
  peakTps?: number;
  earliestSend?: string | null;
  latestSend?: string | null;
  /** The fan-out must finish by the earliest send: start it no later than this. */
  launchBy?: string | null;
  /** Whether a fan-out started at --now ends before the earliest send. */
  fanOutEndsBeforeFirstSend?: boolean | null;
}

export interface RecipientListRequest {
  file: string;
  /** Needed with a holdout or variants: the assignment hashes the campaign id with the recipient id. */
  campaignId?: string;
  rule: BaseRule;
  steps: Step[];
  defaultZone: string;
  quiet?: QuietTime;
  audience: Audience;
  rate: EffectiveTps;
  createTps: number;
  now: number;
}

export async function sizeRecipientList(
  r: RecipientListRequest,
): Promise<{ fits: true; report: WindowReport } | { fits: false; requiredTps: number }> {
  const csv = await openRecipientCsv(r.file);
  const zoneColumn = csv.column(TIMEZONE_COLUMN);
  const idColumn = csv.column(ID_COLUMN);
  const timing = timingColumns(r.file, csv.header, r.rule.kind === "after" ? r.rule.column : undefined);
  // The launcher's decisions, without a missed-time cutoff: a launch in time (see launchBy) misses nothing.
  const decider = new SendDecider({ rule: r.rule, steps: r.steps, defaultZone: r.defaultZone, quiet: r.quiet });
  const split = new AudienceSplit(r.campaignId ?? "", r.audience);
  if (split.active && idColumn === undefined)
    throw new InputError(`${r.file}:1: variants and the holdout are assigned from the "${ID_COLUMN}" column, which the header lacks`);
  const sends = new PlannedSends();
  const byStatus: Record<ZoneStatus, number> = { ok: 0, canonicalised: 0, defaulted: 0 };
  const rejected: Partial<Record<RejectReason, number>> = {};
  const quiet = { delayed: 0, skipped: 0 };
  let rows = 0;
  let heldOut = 0;
  for await (const rec of csv.records) {
    if (rec.fields.length !== csv.header.length) {
      throw new InputError(`${r.file}:${rec.line}: ${rec.fields.length} fields where the header has ${csv.header.length}`);
    }
    rows++;
    const decided = decider.decide(zoneColumn === undefined ? undefined : rec.fields[zoneColumn], rowTiming(rec.fields, timing));
    byStatus[decided.status]++;
    // The launcher's order: a send-time problem or no send left is a reject; then the holdout; then planned.
    const reason = decided.reject ? decided.reject.reason : nothingLeft(decided.steps);
    if (reason) rejected[reason] = (rejected[reason] ?? 0) + 1;
    if (decided.reject) continue;
    if (!reason && split.active && split.groupOfRecipient(rec.fields[idColumn!]) === HOLDOUT) {
      heldOut++;
      continue;
    }
    for (const d of decided.steps) {
      if (d.quiet === "delayed") quiet.delayed++;
      if (d.quiet === "skipped") quiet.skipped++;
    }
    if (!reason) sends.add(decided.zone, decided.steps);
  }

  const histogram = sends.instants();
  const instants = histogram.instants();
  const sized = minimumWindowMinutes(instants, r.rate.tps);
  if (!sized.fits) return { fits: false, requiredTps: sized.requiredTps };

  const schedules = histogram.total;
  const fanOut = fanOutSeconds(schedules, r.createTps);
  const iso = (ms: number) => new Date(ms).toISOString();
  const first = instants[0];
  const peak = instants.reduce<(typeof instants)[number] | undefined>((best, i) => (!best || i.count > best.count ? i : best), undefined);
  return {
    fits: true,
    report: {
      mode: "recipients",
      schedules,
      effectiveTps: r.rate.tps,
      effectiveTpsSource: r.rate.source,
      windowMinutes: sized.windowMinutes,
      createTps: r.createTps,
      fanOutSeconds: fanOut,
      rows,
      steps: r.steps.length,
      defaultTimezone: r.defaultZone,
      defaulted: byStatus.defaulted,
      canonicalised: byStatus.canonicalised,
      rejected,
      heldOut,
      quiet,
      instants: instants.map((i) => ({ utc: iso(i.utcMs), count: i.count, zones: i.zones })),
      peak: peak ? { utc: iso(peak.utcMs), count: peak.count } : null,
      peakTps: Math.round(sized.peakTps * 100) / 100,
      earliestSend: first ? iso(first.utcMs) : null,
      latestSend: instants.length ? iso(instants[instants.length - 1].utcMs) : null,
      launchBy: first ? iso(first.utcMs - fanOut * 1000) : null,
      fanOutEndsBeforeFirstSend: first ? r.now + fanOut * 1000 < first.utcMs : null,
    },
  };
}
