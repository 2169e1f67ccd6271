/**
 * Sample SES event metrics for a plan (the demo's report, scripts/demo.ts): what CloudWatch's hourly sums could hold
 * after every send of the plan went, in the shape fetchSeries (aws/campaign-metrics.ts) returns them. Not SES data:
 * each (step, variant) gets its rates exactly, spread evenly over its sends in plan order, so the same plan gives the
 * same numbers and a difference between variants is the one the rates set, not chance.
 */
import { FunnelEvent } from "../../../infra/core/send/email-events";
import { HOUR_MS, MetricQuery, segmentKey, Series, variantDimension } from "./campaign-report";

/** What a send's events are drawn for: one plan line's step, variant and UTC instant. */
export interface PlannedSend {
  step: number;
  variant: string | null;
  utc: string;
}

/** The share of sends with each event: delivered, complained, unsubscribed, opened of delivered; clicked of opened. */
export interface EventRates {
  delivered: number;
  opened: number;
  clickedOfOpened: number;
  complained: number;
  unsubscribed: number;
}

/** Of the candidates for one event in one segment, in order, which have it: `rate` of them, evenly spread. */
class EvenShares {
  private readonly seen = new Map<string, number>();
  /** Whether this candidate has the event; also how many had been seen before it. */
  take(key: string, rate: number): { has: boolean; before: number } {
    const before = this.seen.get(key) ?? 0;
    this.seen.set(key, before + 1);
    return { has: Math.round((before + 1) * rate) > Math.round(before * rate), before };
  }
}

/** The events of one send and the hour (ms) each happens: sent and delivered at once, opens within 4 hours. */
function eventsOf(send: PlannedSend, rates: EventRates, shares: EvenShares): [FunnelEvent, number][] {
  const hour = Math.floor(Date.parse(send.utc) / HOUR_MS) * HOUR_MS;
  const segment = segmentKey(String(send.step), variantDimension(send.variant));
  const has = (event: FunnelEvent, rate: number) => shares.take(`${segment}\u0000${event}`, rate);
  if (!has("delivered", rates.delivered).has)
    return [
      ["sent", hour],
      ["bounced", hour],
    ];
  const out: [FunnelEvent, number][] = [
    ["sent", hour],
    ["delivered", hour],
  ];
  if (has("complained", rates.complained).has) out.push(["complained", hour]);
  if (has("unsubscribed", rates.unsubscribed).has) out.push(["unsubscribed", hour]);
  const opened = has("opened", rates.opened);
  if (opened.has) {
    const at = hour + (opened.before % 4) * HOUR_MS;
    out.push(["opened", at]);
    if (has("clicked", rates.clickedOfOpened).has) out.push(["clicked", at]);
  }
  return out;
}

/**
 * The hourly sums of every query for these sends, each at its own rates (`ratesOf`: by step and variant, say). A query
 * with nothing in it has no points, as CloudWatch leaves an empty metric.
 */
export function sampleSeries(
  sends: Iterable<PlannedSend>,
  queries: MetricQuery[],
  ratesOf: (send: PlannedSend) => EventRates,
): Series {
  const idOf = new Map(queries.map((q) => [`${q.step}\u0000${q.variant}\u0000${q.event}`, q.id]));
  const sums = new Map<string, Map<number, number>>();
  const shares = new EvenShares();
  for (const send of sends)
    for (const [event, t] of eventsOf(send, ratesOf(send), shares)) {
      const id = idOf.get(`${send.step}\u0000${variantDimension(send.variant)}\u0000${event}`);
      if (id === undefined) continue;
      const hours = sums.get(id) ?? new Map<number, number>();
      hours.set(t, (hours.get(t) ?? 0) + 1);
      sums.set(id, hours);
    }
  const series: Series = new Map();
  for (const [id, hours] of sums)
    series.set(
      id,
      [...hours].sort((a, b) => a[0] - b[0]).map(([t, v]) => ({ t, v })),
    );
  return series;
}
