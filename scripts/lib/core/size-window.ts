/**
 * size-window's core: streams a recipient list into a histogram of send instants and sizes the window from it.
 * Memory is per distinct zone and instant, never per row.
 */
import { UsageError } from "../cli/run";
import { openRecipientCsv } from "./recipients";
import { CampaignClock, campaignSteps, canonicalZone, parseLocalTime, ZoneResolver, ZoneStatus } from "./send-time";
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
  date: string;
  hour: number;
  minute: number;
  stepFlags: string[];
  defaultTimezone: string;
  rate: EffectiveTps;
  createTps: number;
  now: number;
}

export async function sizeRecipientList(
  r: RecipientListRequest,
): Promise<{ fits: true; report: WindowReport } | { fits: false; requiredTps: number }> {
  const base = parseLocalTime(r.date, r.hour, r.minute);
  if (typeof base === "string") throw new UsageError(base);
  const steps = campaignSteps(undefined, r.stepFlags);
  if (typeof steps === "string") throw new UsageError(steps);
  const defaultZone = canonicalZone(r.defaultTimezone);
  if (!defaultZone) throw new UsageError(`--default-timezone ${r.defaultTimezone}: not an IANA time zone name (e.g. America/New_York)`);

  const csv = await openRecipientCsv(r.file);
  const tzColumn = csv.column("timezone");
  const resolver = new ZoneResolver(defaultZone);
  const rowsByZone = new Map<string, number>();
  const byStatus: Record<ZoneStatus, number> = { ok: 0, canonicalised: 0, defaulted: 0 };
  let rows = 0;
  for await (const rec of csv.records) {
    if (rec.fields.length !== csv.header.length) {
      throw new UsageError(`${r.file}:${rec.line}: ${rec.fields.length} fields where the header has ${csv.header.length}`);
    }
    const { zone, status } = resolver.resolve(tzColumn === undefined ? undefined : rec.fields[tzColumn]);
    byStatus[status]++;
    rowsByZone.set(zone, (rowsByZone.get(zone) ?? 0) + 1);
    rows++;
  }

  const clock = new CampaignClock(base, steps);
  const histogram = new InstantHistogram();
  for (const [zone, count] of rowsByZone) for (const t of clock.timesFor(zone)) histogram.add(t.utcMs, zone, count);
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
      steps: steps.length,
      defaultTimezone: defaultZone,
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

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return [h ? `${h} h` : "", m ? `${m} min` : "", s && !h ? `${s} s` : ""].filter(Boolean).join(" ");
}

const n = (x: number) => x.toLocaleString("en-US");
const utcLabel = (iso: string) => iso.slice(0, 16).replace("T", " ");

/** The human-readable report. */
export function formatReport(r: WindowReport): string {
  const out: string[] = [];
  if (r.mode === "recipients") {
    const notes = [
      r.defaulted ? `${n(r.defaulted!)} without a known zone → ${r.defaultTimezone}` : "",
      r.canonicalised ? `${n(r.canonicalised!)} zone name${r.canonicalised === 1 ? "" : "s"} re-cased` : "",
    ].filter(Boolean);
    out.push(
      `Recipients: ${n(r.rows!)} rows${notes.length ? ` (${notes.join(", ")})` : ""} × ${r.steps} step${r.steps === 1 ? "" : "s"} = ${n(r.schedules)} schedules`,
    );
    if (r.instants!.length) {
      out.push("", "Send instants (UTC)");
      const widest = Math.max(...r.instants!.map((i) => i.count));
      for (const i of r.instants!) {
        const names =
          i.zones
            .slice(0, 2)
            .map((z) => z.zone)
            .join(", ") + (i.zones.length > 2 ? ` +${i.zones.length - 2}` : "");
        const bar = "█".repeat(Math.max(1, Math.round((i.count / widest) * 30)));
        out.push(`  ${utcLabel(i.utc)}  ${n(i.count).padStart(11)}  ${bar.padEnd(30)}  ${names}`);
      }
      out.push("", `Peak instant: ${utcLabel(r.peak!.utc)} UTC, ${n(r.peak!.count)} sends`);
    }
  } else {
    out.push(`Schedules: ${n(r.schedules)}`);
  }
  out.push(`Effective TPS: ${n(r.effectiveTps)}/s (${r.effectiveTpsSource})`);
  out.push(
    `Flexible window: ${r.windowMinutes} minute${r.windowMinutes === 1 ? "" : "s"}${r.peakTps !== undefined ? ` (peak ${n(r.peakTps)}/s)` : ""}`,
  );
  out.push(`Fan-out: ${n(r.schedules)} CreateSchedule calls at ${n(r.createTps)}/s ≈ ${formatDuration(r.fanOutSeconds)}`);
  if (r.earliestSend) {
    out.push(
      `First send ${utcLabel(r.earliestSend)} UTC, last ${utcLabel(r.latestSend!)} UTC: launch by ${utcLabel(r.launchBy!)} UTC${r.fanOutEndsBeforeFirstSend ? "" : " — too late from now: early sends would be missed"}`,
    );
  }
  return out.join("\n") + "\n";
}
