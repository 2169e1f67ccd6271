/**
 * The campaign report's core: from the launch records (what was scheduled) and the SES event metrics (what happened),
 * the funnel per step and variant with rates, totals per variant, and the hourly send curve. No AWS SDK. Its text is
 * report-text.ts's (and html.ts's), the --conversions file conversions.ts's.
 *
 * Opens and clicks are SES events, not people: one recipient opening twice counts twice, so their rates can pass 100%.
 */
import type { GuardrailSection } from "./guardrail-rates";
import type { SmsSection } from "./sms-funnel";
import { EMAIL_EVENTS, FunnelEvent, NO_VARIANT } from "../../../infra/core/send/email-events";
import { LaunchRecord } from "../planning/launch-record";
import { Proportion, twoProportionZTest, ZTest } from "./comparisons";

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

/** `due`: the scheduled sends whose time had come by the report's end (sent is a rate of these, not of all scheduled). */
export type Counts = { scheduled: number; due: number } & Record<FunnelEvent, number>;

/** Each rate and what it divides by. */
export const RATES = [
  { name: "sent", of: "due" },
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
  /** Each variant against the first on opens and clicks, and against the holdout on conversions when given. */
  comparisons: Comparison[];
  /** How `due` was counted: from the launch records' first and last send, from the plans in the bucket, or not at all. */
  due: { counted: "records" | "plans"; unknownLaunches: string[] };
  /** The conversions given (--conversions), per variant and "holdout"; null without. */
  conversions: { variant: string; recipients: number; conversions: number }[] | null;
  /** Sends per hour and variant (SES Send events), every hour of the range. */
  sendCurve: { hour: string; byVariant: Record<string, number> }[];
  noSendsYet: boolean;
  /**
   * Bulk launches (--bulk): their schedules and the sends (entries) those hold, from the launch records; null when no
   * launch was bulk. `scheduled` and `due` count sends (recipient-steps) either way, never bulk schedules.
   */
  bulk: { schedules: number; entries: number } | null;
  /** The campaign's texts from the SMS event log group (added by the CLI when the stack has SMS). */
  sms?: SmsSection;
  /** Bounce and complaint rates against the stack's guardrails, and the campaign's state (added by the CLI). */
  guardrails?: GuardrailSection;
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
  for (const r of records)
    for (const c of r.scheduled) add({ step: String(c.step), variant: variantDimension(c.variant) });
  discovered.forEach(add);
  return out.sort(
    (a, b) => Number(a.step) - Number(b.step) || a.step.localeCompare(b.step) || a.variant.localeCompare(b.variant),
  );
}

/** One query per segment and event type. */
export function metricQueries(segments: Segment[]): MetricQuery[] {
  return segments.flatMap((s, i) =>
    EMAIL_EVENTS.map((e, j) => ({ ...s, id: `q${i}_${j}`, event: e.funnel, metric: e.metric })),
  );
}

/** The hours [from, to) a report covers: from the first send (or 14 days back) to `to`, whole hours. */
export function reportRange(records: LaunchRecord[], to: number, from?: number): { from: number; to: number } {
  const firsts = records.map((r) => r.firstSend).filter((x): x is string => x !== null);
  const start = from ?? (firsts.length ? Math.min(...firsts.map((x) => Date.parse(x))) : to - 14 * 24 * HOUR_MS);
  const end = Math.ceil(to / HOUR_MS) * HOUR_MS;
  return { from: Math.min(Math.floor(start / HOUR_MS) * HOUR_MS, end - HOUR_MS), to: end };
}

/** A comparison as `--json` gives it: `variant` against `against` (the first variant, or "holdout"). */
export interface Comparison extends ZTest {
  step: string;
  metric: "opened" | "clicked" | "converted";
  variant: string;
  against: string;
}

/** The name conversions use for the holdout (a variant name may not contain nothing but it, see --variant). */
export const HOLDOUT_NAME = "holdout";

export const segmentKey = (step: string, variant: string) => `${step}\u0000${variant}`;

/** Sends due by `to` per segment (segmentKey), and launches whose due count could not be known. */
export interface DueCounts {
  bySegment: Map<string, number>;
  counted: "records" | "plans";
  unknownLaunches: string[];
}

/**
 * How much of a launch had come due by `to` without reading its plan: all of it once its last send has passed,
 * none before its first; undefined in between (then only the plan knows). A recurring launch is due from its first
 * occurrence on (its schedules are counted, not each occurrence).
 */
export function dueWithoutPlan(r: LaunchRecord, to: number): "all" | "none" | undefined {
  if (r.firstSend === null || Date.parse(r.firstSend) > to) return "none";
  if (r.recurring || (r.lastSend !== null && Date.parse(r.lastSend) <= to)) return "all";
  return undefined;
}

/** The variants in the order they were given at launch (the first is the reference), then any others by name. */
export function variantOrder(records: LaunchRecord[], names: string[]): string[] {
  const given: string[] = [];
  for (const r of records) for (const v of launchVariants(r)) if (!given.includes(v.name)) given.push(v.name);
  return [...given.filter((v) => names.includes(v)), ...names.filter((v) => !given.includes(v)).sort()];
}

/** The recipients each variant of a launch was sent to, from its summary (no variants: every planned recipient). */
function launchVariants(r: LaunchRecord): { name: string; recipients: number }[] {
  const audience = r.audience as { variants?: { name: string; recipients: number }[] } | null | undefined;
  if (audience?.variants?.length) return audience.variants.map((v) => ({ name: v.name, recipients: v.recipients }));
  return typeof r.recipientsPlanned === "number"
    ? [{ name: variantDimension(null), recipients: r.recipientsPlanned }]
    : [];
}

export function buildReport(o: {
  campaignId: string;
  campaignTag: string;
  records: LaunchRecord[];
  queries: MetricQuery[];
  series: Series;
  range: { from: number; to: number };
  due: DueCounts;
  /** Conversions per variant and HOLDOUT_NAME (--conversions). */
  conversions?: Map<string, number>;
}): CampaignReport {
  const launches = distinctLaunches(o.records);
  const rows = new Map<string, FunnelRow>();
  const rowOf = (step: string, variant: string) => {
    const k = `${step}\u0000${variant}`;
    let row = rows.get(k);
    if (!row) rows.set(k, (row = emptyRow(step, variant)));
    return row;
  };
  for (const r of launches)
    for (const c of r.scheduled) rowOf(String(c.step), variantDimension(c.variant)).scheduled += c.schedules;
  for (const [k, due] of o.due.bySegment) rowOf(...(k.split("\u0000") as [string, string])).due += due;

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
  const variantNames = variantOrder(launches, [...new Set([...rows.values()].map((r) => r.variant))]);
  const sorted = [...rows.values()].sort(
    (a, b) => Number(a.step) - Number(b.step) || variantNames.indexOf(a.variant) - variantNames.indexOf(b.variant),
  );
  const variants = variantNames.map((v) =>
    sumRows(
      sorted.filter((r) => r.variant === v),
      "all",
      v,
    ),
  );
  const total = sumRows(sorted, "all", "all");
  const conversions = o.conversions ? conversionCounts(launches, o.conversions) : null;
  return {
    campaign: o.campaignId,
    campaignTag: o.campaignTag,
    range: {
      from: new Date(o.range.from).toISOString(),
      to: new Date(o.range.to).toISOString(),
      periodSeconds: HOUR_MS / 1000,
    },
    launches: launches.map((r) => ({ id: r.launch.id, planSha256: r.planSha256, at: r.launch.at })),
    holdoutRecipients: launches.reduce((n, r) => n + (r.holdoutRecipients ?? 0), 0),
    rows: sorted.map(withRates),
    variants: variants.map(withRates),
    total: withRates(total),
    comparisons: [...compareVariants(sorted, variants, variantNames), ...compareWithHoldout(conversions)],
    due: { counted: o.due.counted, unknownLaunches: o.due.unknownLaunches },
    conversions,
    sendCurve: curve.map((m, h) => ({
      hour: new Date(o.range.from + h * HOUR_MS).toISOString(),
      byVariant: Object.fromEntries(variantNames.map((v) => [v, m.get(v) ?? 0])),
    })),
    noSendsYet: total.sent === 0,
    bulk: bulkCounts(launches),
  };
}

/**
 * Opens and clicks (of delivered) of each variant against the first, per step and, with several steps, over all;
 * only where both have deliveries.
 */
function compareVariants(rows: FunnelRow[], variants: FunnelRow[], order: string[]): Comparison[] {
  if (order.length < 2) return [];
  const steps = [...new Set(rows.map((r) => r.step))];
  const groups = steps.map((step) => ({ step, rows: rows.filter((r) => r.step === step) }));
  if (steps.length > 1) groups.push({ step: "all", rows: variants });
  const out: Comparison[] = [];
  for (const g of groups) {
    const ref = g.rows.find((r) => r.variant === order[0]);
    if (!ref || ref.delivered === 0) continue;
    for (const v of order.slice(1)) {
      const row = g.rows.find((r) => r.variant === v);
      if (!row || row.delivered === 0) continue;
      for (const metric of ["opened", "clicked"] as const)
        out.push({
          step: g.step,
          metric,
          variant: v,
          against: order[0],
          ...twoProportionZTest({ x: row[metric], n: row.delivered }, { x: ref[metric], n: ref.delivered }),
        });
    }
  }
  return out;
}

/** Recipients (from the launch records) and conversions (given) per variant and the holdout. */
function conversionCounts(
  launches: LaunchRecord[],
  given: Map<string, number>,
): { variant: string; recipients: number; conversions: number }[] {
  const recipients = new Map<string, number>();
  for (const r of launches)
    for (const v of launchVariants(r)) recipients.set(v.name, (recipients.get(v.name) ?? 0) + v.recipients);
  recipients.set(
    HOLDOUT_NAME,
    launches.reduce((n, r) => n + (r.holdoutRecipients ?? 0), 0),
  );
  return [...given].map(([variant, conversions]) => ({
    variant,
    recipients: recipients.get(variant) ?? 0,
    conversions,
  }));
}

function compareWithHoldout(conversions: CampaignReport["conversions"]): Comparison[] {
  const holdout = conversions?.find((c) => c.variant === HOLDOUT_NAME);
  if (!conversions || !holdout) return [];
  const of = (c: { recipients: number; conversions: number }): Proportion => ({ x: c.conversions, n: c.recipients });
  return conversions
    .filter((c) => c !== holdout)
    .map((c) => ({
      step: "all",
      metric: "converted" as const,
      variant: c.variant,
      against: HOLDOUT_NAME,
      ...twoProportionZTest(of(c), of(holdout)),
    }));
}

function emptyRow(step: string, variant: string): FunnelRow {
  const counts = Object.fromEntries(EMAIL_EVENTS.map((e) => [e.funnel, 0])) as Record<FunnelEvent, number>;
  return { step, variant, scheduled: 0, due: 0, ...counts, rates: {} as FunnelRow["rates"] };
}

function sumRows(rows: FunnelRow[], step: string, variant: string): FunnelRow {
  const sum = emptyRow(step, variant);
  for (const r of rows) {
    sum.scheduled += r.scheduled;
    sum.due += r.due;
    for (const e of EMAIL_EVENTS) sum[e.funnel] += r[e.funnel];
  }
  return sum;
}

function withRates(row: FunnelRow): FunnelRow {
  const rates = Object.fromEntries(
    RATES.map((r) => [r.name, row[r.of] > 0 ? row[r.name] / row[r.of] : null]),
  ) as FunnelRow["rates"];
  return { ...row, rates };
}

/** What the launcher's summary (kept in the record) says of a bulk plan: its schedules and entries. */
function bulkCounts(launches: LaunchRecord[]): CampaignReport["bulk"] {
  let found = false;
  const sum = { schedules: 0, entries: 0 };
  for (const r of launches) {
    const b = r.bulk as { schedules?: unknown; entries?: unknown } | null | undefined;
    if (!b || !Number.isInteger(b.schedules) || !Number.isInteger(b.entries)) continue;
    found = true;
    sum.schedules += b.schedules as number;
    sum.entries += b.entries as number;
  }
  return found ? sum : null;
}
