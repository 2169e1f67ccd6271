/**
 * size-window's core: streams a recipient list into a histogram of send instants and sizes the window from it.
 * Memory is per distinct zone and instant, never per row.
 */
import { SendDecider } from "./decisions";
import { InputError } from "./errors";
import { openRecipientCsv } from "./recipients";
import { LocalTime, Step, ZoneStatus } from "./send-time";
import { EffectiveTps, fanOutSeconds, InstantHistogram, minimumWindowMinutes } from "./window";

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
  /** Step 1's local time. */
  base: LocalTime;
  steps: Step[];
  defaultZone: string;
  rate: EffectiveTps;
  createTps: number;
  now: number;
}

export async function sizeRecipientList(
  r: RecipientListRequest,
): Promise<{ fits: true; report: WindowReport } | { fits: false; requiredTps: number }> {
  const csv = await openRecipientCsv(r.file);
  const tzColumn = csv.column("timezone");
  const decider = new SendDecider({ base: r.base, steps: r.steps, defaultZone: r.defaultZone });
  const rowsByZone = new Map<string, number>();
  const byStatus: Record<ZoneStatus, number> = { ok: 0, canonicalised: 0, defaulted: 0 };
  let rows = 0;
  for await (const rec of csv.records) {
    if (rec.fields.length !== csv.header.length) {
      throw new InputError(`${r.file}:${rec.line}: ${rec.fields.length} fields where the header has ${csv.header.length}`);
    }
    const { zone, status } = decider.decide(tzColumn === undefined ? undefined : rec.fields[tzColumn]);
    byStatus[status]++;
    rowsByZone.set(zone, (rowsByZone.get(zone) ?? 0) + 1);
    rows++;
  }

  const histogram = new InstantHistogram();
  for (const [zone, count] of rowsByZone) for (const d of decider.forZone(zone)) if (d.time) histogram.add(d.time.utcMs, zone, count);
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
