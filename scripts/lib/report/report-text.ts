/**
 * The campaign report in words, shared by the console report (formatReport) and the HTML page (html.ts): the funnel's
 * columns, counts and rates as text, the comparison table's cells, and the one-line verdict.
 */
import { CampaignReport, Comparison, Counts, FunnelRow, RATES } from "./campaign-report";
import { guardrailLines } from "./guardrail-rates";
import { formatSmsSection } from "./sms-funnel";
import { EMAIL_EVENTS } from "../../../infra/core/send/email-events";

type FunnelColumn = { key: keyof Counts; title: string; rate?: (typeof RATES)[number]["name"] };
const RATE_NAMES: readonly string[] = RATES.map((r) => r.name);

/**
 * The funnel's columns: count, heading and rate, in the table's order (the HTML page draws them in its own): the
 * scheduled and due counts, then every SES event with a column (EMAIL_EVENTS, the one list of event names).
 */
export const FUNNEL_COLUMNS: FunnelColumn[] = [
  { key: "scheduled", title: "scheduled" },
  { key: "due", title: "due" },
  ...EMAIL_EVENTS.flatMap((e): FunnelColumn[] =>
    "column" in e
      ? [
          {
            key: e.funnel,
            title: e.column,
            ...(RATE_NAMES.includes(e.funnel) ? { rate: e.funnel as FunnelColumn["rate"] } : {}),
          },
        ]
      : [],
  ),
];

export const n = (x: number) => x.toLocaleString("en-US");
export const pct = (r: number | null) => (r === null ? "-" : `${(r * 100).toFixed(r > 0 && r < 0.01 ? 2 : 1)}%`);

/** The funnel table's rows, text and page alike: per step and variant, per variant over all steps, the total. */
export function tableRows(r: CampaignReport): FunnelRow[] {
  return [...r.rows, ...(r.rows.length > 1 ? r.variants : []), ...(r.variants.length > 1 ? [r.total] : [])];
}
/** How many sends are scheduled: "N schedules", or with bulk launches "N sends scheduled (M of them in K bulk schedules)". */
export function scheduledPhrase(r: CampaignReport): string {
  if (!r.bulk) return `${n(r.total.scheduled)} schedules`;
  return `${n(r.total.scheduled)} sends scheduled (${n(r.bulk.entries)} of them in ${n(r.bulk.schedules)} bulk schedules)`;
}

export function formatReport(r: CampaignReport): string {
  const launches = r.launches.length === 1 ? "1 launch" : `${r.launches.length} launches`;
  const lines = [
    `Campaign ${r.campaign}${r.campaignTag !== r.campaign ? ` (tag ${r.campaignTag})` : ""}: ${launches}, ${scheduledPhrase(r)}, holdout ${n(r.holdoutRecipients)} recipient${r.holdoutRecipients === 1 ? "" : "s"} (not sent)`,
    `  events ${r.range.from.slice(0, 16)}Z → ${r.range.to.slice(0, 16)}Z, hourly sums of AWS/SES metrics by campaign, step, variant`,
  ];
  if (r.noSendsYet) lines.push("  no sends yet: every count below except scheduled is zero");
  const cell = (row: FunnelRow, c: (typeof FUNNEL_COLUMNS)[number]) =>
    c.rate ? `${n(row[c.key])} ${pct(row.rates[c.rate])}` : n(row[c.key]);
  const table = [
    ["step", "variant", ...FUNNEL_COLUMNS.map((c) => c.title)],
    ...tableRows(r).map((row) => [row.step, row.variant, ...FUNNEL_COLUMNS.map((c) => cell(row, c))]),
  ];
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table)
    lines.push("  " + row.map((v, i) => (i < 2 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join("  "));
  lines.push(`  rates: ${RATES_IN_WORDS}`, "  (opens and clicks are events: a recipient opening twice counts twice)");
  if (r.due.unknownLaunches.length) lines.push(`  ${dueUnknownNote(r)}`);
  if (r.total.renderingFailed || r.total.delayed) lines.push(`  also: ${alsoLine(r)}`);
  if (r.comparisons.length) {
    lines.push(`  comparisons (${TEST_IN_WORDS}):`);
    const rows = [COMPARISON_HEAD, ...r.comparisons.map(comparisonCells)];
    const w = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
    for (const row of rows)
      lines.push("    " + row.map((v, i) => (i < 4 ? v.padEnd(w[i]) : v.padStart(w[i]))).join("  "));
  }
  lines.push(`  verdict: ${verdict(r)}`);
  if (r.sms) lines.push(...formatSmsSection(r.sms));
  if (r.guardrails) lines.push(...guardrailLines(r.guardrails).map((l) => `  ${l}`));
  return lines.join("\n") + "\n";
}

export const RATES_IN_WORDS =
  "sent of due (scheduled sends whose time had come); delivered, bounced, rejected of sent; complained, opens, clicks, unsubscribed of delivered";
export const TEST_IN_WORDS =
  "each variant against the first, two-sided two-proportion z-test, significant when p < 0.05";

export const alsoLine = (r: CampaignReport) =>
  `${n(r.total.renderingFailed)} rendering failure${r.total.renderingFailed === 1 ? "" : "s"}, ${n(r.total.delayed)} delivery delay${r.total.delayed === 1 ? "" : "s"}`;

export const dueUnknownNote = (r: CampaignReport) =>
  `due unknown for launch ${r.due.unknownLaunches.join(", ")} (its plan has expired from the bucket while sends were still to come): counted as all scheduled`;

const METRIC_WORDS = { opened: "opens", clicked: "clicks", converted: "conversions" } as const;

/** A lift as a signed percentage: +14.6%, -3.0%; "-" when unknown. */
export const liftText = (l: number | null) =>
  l === null ? "-" : `${l >= 0 ? "+" : "-"}${Math.abs(l * 100).toFixed(1)}%`;
export const pText = (p: number | null) => (p === null ? "-" : p < 0.001 ? "<0.001" : p.toFixed(3));

export const COMPARISON_HEAD = ["step", "metric", "variant", "against", "rate", "its rate", "lift", "p", "significant"];
export const comparisonCells = (c: Comparison) => [
  c.step,
  METRIC_WORDS[c.metric],
  c.variant,
  c.against,
  pct(c.rate),
  pct(c.againstRate),
  liftText(c.lift),
  pText(c.pValue),
  c.pValue === null ? "-" : c.significant ? "yes" : "no",
];

/**
 * The answer to "which variant won?", in one line: from the comparisons over all steps (or the only step), the
 * variants that differ significantly from the first on opens or clicks, and from the holdout on conversions.
 */
export function verdict(r: CampaignReport): string {
  const byVariant = r.comparisons.filter((c) => c.metric !== "converted");
  const overall = byVariant.some((c) => c.step === "all") ? "all" : byVariant[0]?.step;
  const parts: string[] = [];
  const say = (cs: Comparison[], better: string, worse: string) =>
    cs
      .filter((c) => c.significant && c.lift !== null)
      .map(
        (c) =>
          `${c.variant} ${c.lift! > 0 ? better : worse} ${c.against}${c.metric === "converted" ? "" : ` on ${METRIC_WORDS[c.metric]}`} (${pct(c.rate)} vs ${pct(c.againstRate)}, ${liftText(c.lift)}, p ${pText(
            c.pValue,
          )
            .replace(/^</, "< ")
            .replace(/^(?!<)/, "= ")})`,
      );
  const first = byVariant[0]?.against;
  if (byVariant.length) {
    const found = say(
      byVariant.filter((c) => c.step === overall),
      "beats",
      "trails",
    );
    parts.push(
      ...(found.length
        ? found
        : [
            `no variant differs from ${first} at 95% on opens or clicks${overall === "all" ? "" : ` (step ${overall})`}`,
          ]),
    );
  } else if (r.variants.length > 1) parts.push("no comparison yet (a variant has no deliveries)");
  else parts.push("one variant: nothing to compare");
  const conv = r.comparisons.filter((c) => c.metric === "converted");
  if (conv.length) {
    const found = say(conv, "converts more than the", "converts less than the");
    parts.push(...(found.length ? found : ["no variant converts differently from the holdout at 95%"]));
  }
  return parts.join("; ");
}
