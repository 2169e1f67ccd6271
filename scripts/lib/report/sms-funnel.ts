/**
 * The campaign's texts (issue 37): their funnel per step and variant, and their cost, from the SMS configuration
 * set's events in its CloudWatch Logs log group, read with one Logs Insights query (smsFunnelQuery). An event record
 * (End User Messaging SMS user guide, "Messaging Events", "SMS example log") carries eventType, messageId, the
 * Context the sender gave (campaign, step, variant), totalMessageParts, totalMessagePrice and totalCarrierFee; a text
 * has several events (TEXT_PENDING, TEXT_QUEUED, then a final one), and each text counts by its latest.
 * Pure: no AWS SDK.
 */
import { NO_VARIANT } from "../../../infra/core/send/email-events";

/** Final events of a text that reached the phone or its carrier (the two are used interchangeably by country). */
export const SMS_DELIVERED_EVENTS = ["TEXT_DELIVERED", "TEXT_SUCCESSFUL"] as const;
/** Events of a text still on its way (no final event yet, up to 72 hours). */
export const SMS_PENDING_EVENTS = ["TEXT_PENDING", "TEXT_QUEUED"] as const;

/** The most rows the query returns (StartQuery's limit: 10,000); a result that fills it is said to be cut. */
export const SMS_QUERY_LIMIT = 10_000;

/**
 * The Logs Insights query: each text's latest event, parts and price (first stats, by messageId), then the texts per
 * step, variant and latest event (second stats). `tag` is the campaign tag (A-Z a-z 0-9 _ -: nothing to escape).
 */
export function smsFunnelQuery(tag: string): string {
  return [
    "fields context.step as step, context.variant as variant",
    `filter context.campaign = "${tag}" and eventType like /^TEXT_/`,
    "stats latest(eventType) as last, max(totalMessageParts) as textParts, max(totalMessagePrice) as textPrice, max(totalCarrierFee) as textFee by messageId, step, variant",
    "stats count(*) as texts, sum(textParts) as parts, sum(textPrice) as price, sum(textFee) as carrierFee by step, variant, last",
  ].join("\n| ");
}

export interface SmsFunnelRow {
  step: string;
  variant: string;
  /** Texts AWS accepted (an event of any type). */
  sent: number;
  delivered: number;
  pending: number;
  /** Failed texts by their final event, without TEXT_ and in lower case (`carrier_unreachable`, `spam`, …). */
  failed: Record<string, number>;
  parts: number;
  /** What AWS billed, from the events: its message price and the carriers' fees (USD). */
  billed: { message: number; carrier: number };
}

export interface SmsSection {
  logGroup: string;
  rows: SmsFunnelRow[];
  total: SmsFunnelRow;
  /** The message parts times --sms-price-per-part (USD), when given; the events' own price is `total.billed`. */
  estimate: { pricePerPart: number; dollars: number } | null;
  /** Opted-out numbers are refused by SendTextMessage and leave no event: the sender's ledger holds them. */
  optedOut: null;
  /** The query's result filled its limit: counts may be short. */
  truncated: boolean;
}

/** GetQueryResults' rows: each a list of {field, value}. */
export type QueryRow = { field?: string; value?: string }[];

const emptyRow = (step: string, variant: string): SmsFunnelRow => ({
  step,
  variant,
  sent: 0,
  delivered: 0,
  pending: 0,
  failed: {},
  parts: 0,
  billed: { message: 0, carrier: 0 },
});

function add(into: SmsFunnelRow, last: string, texts: number, parts: number, price: number, fee: number) {
  into.sent += texts;
  if ((SMS_DELIVERED_EVENTS as readonly string[]).includes(last)) into.delivered += texts;
  else if ((SMS_PENDING_EVENTS as readonly string[]).includes(last)) into.pending += texts;
  else {
    const reason = last.replace(/^TEXT_/, "").toLowerCase();
    into.failed[reason] = (into.failed[reason] ?? 0) + texts;
  }
  into.parts += parts;
  into.billed.message += price;
  into.billed.carrier += fee;
}

/** The section from the query's rows; steps ascending, then variants. */
export function smsSection(rows: QueryRow[], o: { logGroup: string; pricePerPart?: number }): SmsSection {
  const bySegment = new Map<string, SmsFunnelRow>();
  const total = emptyRow("all", "all");
  for (const row of rows) {
    const v = Object.fromEntries(row.map((c) => [c.field ?? "", c.value ?? ""]));
    const step = v.step || "none";
    const variant = v.variant || NO_VARIANT;
    const key = `${step}\u0000${variant}`;
    if (!bySegment.has(key)) bySegment.set(key, emptyRow(step, variant));
    const nums = ["texts", "parts", "price", "carrierFee"].map((k) => Number(v[k]) || 0) as [
      number,
      number,
      number,
      number,
    ];
    add(bySegment.get(key)!, v.last ?? "", ...nums);
    add(total, v.last ?? "", ...nums);
  }
  const sorted = [...bySegment.values()].sort(
    (a, b) => Number(a.step) - Number(b.step) || a.step.localeCompare(b.step) || a.variant.localeCompare(b.variant),
  );
  return {
    logGroup: o.logGroup,
    rows: sorted,
    total,
    estimate:
      o.pricePerPart === undefined ? null : { pricePerPart: o.pricePerPart, dollars: total.parts * o.pricePerPart },
    optedOut: null,
    truncated: rows.length >= SMS_QUERY_LIMIT,
  };
}

const n = (x: number) => x.toLocaleString("en-US");
const usd = (x: number) => `$${x.toFixed(x !== 0 && Math.abs(x) < 1 ? 4 : 2)}`;
const failedText = (f: Record<string, number>) =>
  Object.entries(f)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([reason, count]) => `${reason} ${n(count)}`)
    .join(", ") || "0";

/** The cells of a funnel row: step, variant, sent, delivered, pending, failed by reason, parts. */
export function smsCells(r: SmsFunnelRow): string[] {
  return [r.step, r.variant, n(r.sent), n(r.delivered), n(r.pending), failedText(r.failed), n(r.parts)];
}
export const SMS_HEAD = ["step", "variant", "sent", "delivered", "pending", "failed (by final event)", "parts"];

/** The cost line: what the events say AWS billed, and the estimate from the configured price. */
export function smsCostLine(s: SmsSection): string {
  const b = s.total.billed;
  const billed = `billed per the events ${usd(b.message + b.carrier)} (AWS ${usd(b.message)}, carriers ${usd(b.carrier)})`;
  const estimate = s.estimate
    ? `; ${n(s.total.parts)} parts × ${usd(s.estimate.pricePerPart)} (--sms-price-per-part) = ${usd(s.estimate.dollars)}`
    : "; give --sms-price-per-part for an estimate from the parts";
  return `cost: ${billed}${estimate}`;
}

export const SMS_OPTED_OUT_NOTE =
  "opted out: not in the events (SendTextMessage refuses an opted-out number, so it has no event); the sender records each as skipped: opted-out in the ledger";

/** The section as lines of the console report. */
export function formatSmsSection(s: SmsSection): string[] {
  const table = [SMS_HEAD, ...[...s.rows, ...(s.rows.length > 1 ? [s.total] : [])].map(smsCells)];
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  return [
    `  texts (SMS events of log group ${s.logGroup}, each text by its latest event):`,
    ...table.map(
      (row) => "    " + row.map((v, i) => (i < 2 || i === 5 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join("  "),
    ),
    `    ${smsCostLine(s)}`,
    `    ${SMS_OPTED_OUT_NOTE}`,
    ...(s.truncated ? [`    the query returned its limit of ${n(SMS_QUERY_LIMIT)} rows: counts may be short`] : []),
  ];
}
