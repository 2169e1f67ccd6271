/**
 * The campaign report's core: from the launch records (what was scheduled) and the SES event metrics (what happened),
 * the funnel per step and variant with rates, totals per variant, and the hourly send curve. No AWS SDK.
 *
 * Opens and clicks are SES events, not people: one recipient opening twice counts twice, so their rates can pass 100%.
 */
import { EMAIL_EVENTS, FunnelEvent, NO_VARIANT } from "../../../infra/rules/email-events";
import { LaunchRecord } from "../planning/launch-record";

/** One (step, variant) pair as the metrics' dimensions spell it: step "1", variant "B" or "no-variant". */
export interface Segment {
  step: string;
  variant: string;
}

export interface MetricQuery extends Segment {
  /** GetMetricData query id. */
  id: string;
  event: FunnelEvent;
  metric: string;
}

/** Hourly sums of one query: timestamp (ms) → value. A missing hour is zero. */
export type Series = Map<string, { t: number; v: number }[]>;

export type Counts = { scheduled: number } & Record<FunnelEvent, number>;

/** Each rate and what it divides by. */
export const RATES = [
  { name: "sent", of: "scheduled" },
  { name: "delivered", of: "sent" },
  { name: "bounced", of: "sent" },
  { name: "complained", of: "delivered" },
  { name: "rejected", of: "sent" },
  { name: "opened", of: "delivered" },
  { name: "clicked", of: "delivered" },
  { name: "unsubscribed", of: "delivered" },
] as const;

export interface FunnelRow extends Segment, Counts {
  rates: Record<(typeof RATES)[number]["name"], number | null>;
}

export interface CampaignReport {
  campaign: string;
  campaignTag: string;
  range: { from: string; to: string; periodSeconds: number };
  launches: { id: string; planSha256: string; at: string }[];
  holdoutRecipients: number;
  /** Per step and variant, steps ascending. */
  rows: FunnelRow[];
  /** Per variant over all steps. */
  variants: FunnelRow[];
  total: FunnelRow;
  /** Sends per hour and variant (SES Send events), every hour of the range. */
  sendCurve: { hour: string; byVariant: Record<string, number> }[];
  noSendsYet: boolean;
}

export const HOUR_MS = 3_600_000;

/** The variant dimension value of a plan row's variant. */
export const variantDimension = (variant: string | null) => variant ?? NO_VARIANT;

/** Launch records of the same plan (a re-run with --launch-id) count once: the latest one. */
export function distinctLaunches(records: LaunchRecord[]): LaunchRecord[] {
  const byPlan = new Map<string, LaunchRecord>();
  for (const r of [...records].sort((a, b) => a.launch.at.localeCompare(b.launch.at))) byPlan.set(r.planSha256, r);
  return [...byPlan.values()];
}

/** Every segment to query: the scheduled ones and any the metrics know of (a launch without a record). */
export function segmentsOf(records: LaunchRecord[], discovered: Segment[]): Segment[] {
  const keys = new Set<string>();
  const out: Segment[] = [];
  const add = (s: Segment) => {
    const k = `${s.step}\u0000${s.variant}`;
    if (keys.has(k)) return;
    keys.add(k);
    out.push(s);
  };
  for (const r of records) for (const c of r.scheduled) add({ step: String(c.step), variant: variantDimension(c.variant) });
  discovered.forEach(add);
  return out.sort((a, b) => Number(a.step) - Number(b.step) || a.step.localeCompare(b.step) || a.variant.localeCompare(b.variant));
}

/** One query per segment and event type. */
export function metricQueries(segments: Segment[]): MetricQuery[] {
  return segments.flatMap((s, i) => EMAIL_EVENTS.map((e, j) => ({ ...s, id: `q${i}_${j}`, event: e.funnel, metric: e.metric })));
}

/** The hours [from, to) a report covers: from the first send (or 14 days back) to `to`, whole hours. */
export function reportRange(records: LaunchRecord[], to: number, from?: number): { from: number; to: number } {
  const firsts = records.map((r) => r.firstSend).filter((x): x is string => x !== null);
  const start = from ?? (firsts.length ? Math.min(...firsts.map((x) => Date.parse(x))) : to - 14 * 24 * HOUR_MS);
  const end = Math.ceil(to / HOUR_MS) * HOUR_MS;
  return { from: Math.min(Math.floor(start / HOUR_MS) * HOUR_MS, end - HOUR_MS), to: end };
}

export function buildReport(o: {
  campaignId: string;
  campaignTag: string;
  records: LaunchRecord[];
  queries: MetricQuery[];
  series: Series;
  range: { from: number; to: number };
}): CampaignReport {
  const launches = distinctLaunches(o.records);
  const rows = new Map<string, FunnelRow>();
  const rowOf = (step: string, variant: string) => {
    const k = `${step}\u0000${variant}`;
    let row = rows.get(k);
    if (!row) rows.set(k, (row = emptyRow(step, variant)));
    return row;
  };
  for (const r of launches) for (const c of r.scheduled) rowOf(String(c.step), variantDimension(c.variant)).scheduled += c.schedules;

  const hours = Math.max(0, Math.round((o.range.to - o.range.from) / HOUR_MS));
  const curve = Array.from({ length: hours }, () => new Map<string, number>());
  for (const q of o.queries) {
    const row = rowOf(q.step, q.variant);
    for (const p of o.series.get(q.id) ?? []) {
      row[q.event] += p.v;
      const h = Math.floor((p.t - o.range.from) / HOUR_MS);
      if (q.event === "sent" && h >= 0 && h < hours) curve[h].set(q.variant, (curve[h].get(q.variant) ?? 0) + p.v);
    }
  }
  const sorted = [...rows.values()].sort((a, b) => Number(a.step) - Number(b.step) || a.variant.localeCompare(b.variant));
  const variantNames = [...new Set(sorted.map((r) => r.variant))].sort();
  const variants = variantNames.map((v) =>
    sumRows(
      sorted.filter((r) => r.variant === v),
      "all",
      v,
    ),
  );
  const total = sumRows(sorted, "all", "all");
  return {
    campaign: o.campaignId,
    campaignTag: o.campaignTag,
    range: { from: new Date(o.range.from).toISOString(), to: new Date(o.range.to).toISOString(), periodSeconds: HOUR_MS / 1000 },
    launches: launches.map((r) => ({ id: r.launch.id, planSha256: r.planSha256, at: r.launch.at })),
    holdoutRecipients: launches.reduce((n, r) => n + (r.holdoutRecipients ?? 0), 0),
    rows: sorted.map(withRates),
    variants: variants.map(withRates),
    total: withRates(total),
    sendCurve: curve.map((m, h) => ({
      hour: new Date(o.range.from + h * HOUR_MS).toISOString(),
      byVariant: Object.fromEntries(variantNames.map((v) => [v, m.get(v) ?? 0])),
    })),
    noSendsYet: total.sent === 0,
  };
}

function emptyRow(step: string, variant: string): FunnelRow {
  const counts = Object.fromEntries(EMAIL_EVENTS.map((e) => [e.funnel, 0])) as Record<FunnelEvent, number>;
  return { step, variant, scheduled: 0, ...counts, rates: {} as FunnelRow["rates"] };
}

function sumRows(rows: FunnelRow[], step: string, variant: string): FunnelRow {
  const sum = emptyRow(step, variant);
  for (const r of rows) {
    sum.scheduled += r.scheduled;
    for (const e of EMAIL_EVENTS) sum[e.funnel] += r[e.funnel];
  }
  return sum;
}

function withRates(row: FunnelRow): FunnelRow {
  const rates = Object.fromEntries(RATES.map((r) => [r.name, row[r.of] > 0 ? row[r.name] / row[r.of] : null])) as FunnelRow["rates"];
  return { ...row, rates };
}

/** The funnel's columns: count, heading and rate, in the table's order (the HTML page draws them in its own). */
export const FUNNEL_COLUMNS: { key: keyof Counts; title: string; rate?: (typeof RATES)[number]["name"] }[] = [
  { key: "scheduled", title: "scheduled" },
  { key: "sent", title: "sent", rate: "sent" },
  { key: "delivered", title: "delivered", rate: "delivered" },
  { key: "bounced", title: "bounced", rate: "bounced" },
  { key: "complained", title: "complained", rate: "complained" },
  { key: "rejected", title: "rejected", rate: "rejected" },
  { key: "opened", title: "opens", rate: "opened" },
  { key: "clicked", title: "clicks", rate: "clicked" },
  { key: "unsubscribed", title: "unsubscribed", rate: "unsubscribed" },
];

export const n = (x: number) => x.toLocaleString("en-US");
export const pct = (r: number | null) => (r === null ? "-" : `${(r * 100).toFixed(r > 0 && r < 0.01 ? 2 : 1)}%`);

export function formatReport(r: CampaignReport): string {
  const launches = r.launches.length === 1 ? "1 launch" : `${r.launches.length} launches`;
  const lines = [
    `Campaign ${r.campaign}${r.campaignTag !== r.campaign ? ` (tag ${r.campaignTag})` : ""}: ${launches}, ${n(r.total.scheduled)} schedules, holdout ${n(r.holdoutRecipients)} recipient${r.holdoutRecipients === 1 ? "" : "s"} (not sent)`,
    `  events ${r.range.from.slice(0, 16)}Z → ${r.range.to.slice(0, 16)}Z, hourly sums of AWS/SES metrics by campaign, step, variant`,
  ];
  if (r.noSendsYet) lines.push("  no sends yet: every count below except scheduled is zero");
  const cell = (row: FunnelRow, c: (typeof FUNNEL_COLUMNS)[number]) =>
    c.rate ? `${n(row[c.key])} ${pct(row.rates[c.rate])}` : n(row[c.key]);
  const table = [
    ["step", "variant", ...FUNNEL_COLUMNS.map((c) => c.title)],
    ...r.rows.map((row) => [row.step, row.variant, ...FUNNEL_COLUMNS.map((c) => cell(row, c))]),
    ...(r.rows.length > 1 ? r.variants.map((row) => ["all", row.variant, ...FUNNEL_COLUMNS.map((c) => cell(row, c))]) : []),
    ...(r.variants.length > 1 ? [["all", "all", ...FUNNEL_COLUMNS.map((c) => cell(r.total, c))]] : []),
  ];
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table) lines.push("  " + row.map((v, i) => (i < 2 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join("  "));
  lines.push(
    "  rates: sent of scheduled; delivered, bounced, rejected of sent; complained, opens, clicks, unsubscribed of delivered",
    "  (opens and clicks are events: a recipient opening twice counts twice)",
  );
  if (r.total.renderingFailed || r.total.delayed)
    lines.push(`  also: ${n(r.total.renderingFailed)} rendering failures, ${n(r.total.delayed)} delivery delays`);
  return lines.join("\n") + "\n";
}
