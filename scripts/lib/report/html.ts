/**
 * The campaign report as one self-contained HTML page: inline CSS and SVG, no script, no font, no image, no link
 * to fetch — it opens the same offline, in a mail attachment or on a file share.
 */
import { SMS_HEAD, SmsFunnelRow, SmsSection, smsCells, smsCostLine, SMS_OPTED_OUT_NOTE } from "./sms-funnel";
import { CampaignReport, FunnelRow } from "./campaign-report";
import { guardrailLines } from "./guardrail-rates";
import {
  alsoLine,
  COMPARISON_HEAD,
  comparisonCells,
  dueUnknownNote,
  FUNNEL_COLUMNS,
  n,
  pct,
  RATES_IN_WORDS,
  scheduledPhrase,
  tableRows,
  TEST_IN_WORDS,
  verdict,
} from "./report-text";

const PALETTE = ["#2563eb", "#db2777", "#16a34a", "#ea580c", "#7c3aed", "#0891b2", "#ca8a04", "#4b5563"];

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderReportHtml(r: CampaignReport): string {
  const variants = r.variants.map((v) => v.variant);
  const title = `Campaign ${r.campaign}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} — sendtime report</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; color: #111827; margin: 24px; max-width: 980px; overflow-wrap: anywhere; }
@media (max-width: 600px) { body { margin: 12px; } }
.scroll { overflow-x: auto; max-width: 100%; } .scroll table { margin-top: 0; } .scroll, .chart { margin-top: 8px; }
.chart { overflow-x: auto; max-width: 100%; } .chart svg { display: block; width: 100%; max-width: 900px; min-width: 560px; height: auto; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.meta { color: #4b5563; } .note { color: #92400e; background: #fef3c7; padding: 6px 10px; border-radius: 4px; display: inline-block; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin-top: 8px; }
th, td { padding: 3px 10px; text-align: right; white-space: nowrap; border-bottom: 1px solid #e5e7eb; } th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
.verdict { font-size: 15px; background: #eff6ff; border-left: 4px solid #2563eb; padding: 8px 12px; margin: 16px 0 0; }
table.comparisons td:nth-child(-n+4), table.comparisons th:nth-child(-n+4) { text-align: left; }
tr.total td { font-weight: 600; border-top: 2px solid #9ca3af; } td small { color: #4b5563; }
.legend span { display: inline-block; margin-right: 16px; } .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<div class="meta">${r.launches.length} launch${r.launches.length === 1 ? "" : "es"} · ${escapeHtml(scheduledPhrase(r))} · holdout ${n(r.holdoutRecipients)} recipients (not sent) · events ${escapeHtml(r.range.from.slice(0, 16))}Z – ${escapeHtml(r.range.to.slice(0, 16))}Z</div>
${r.noSendsYet ? '<p class="note">No sends yet: every count except scheduled is zero.</p>' : ""}
<p class="verdict"><b>Verdict:</b> ${escapeHtml(verdict(r))}</p>
<h2>Per step and variant</h2>
${funnelTable(r)}
<p class="meta">Rates: ${escapeHtml(RATES_IN_WORDS)}. Opens and clicks are SES events: a recipient opening twice counts twice.</p>
${r.due.unknownLaunches.length ? `<p class="note due-note">${escapeHtml(dueUnknownNote(r))}</p>` : ""}
<p class="also">Also: ${escapeHtml(alsoLine(r))}.</p>
${comparisonsTable(r)}
${r.sms ? smsSectionHtml(r.sms) : ""}
${
  r.guardrails
    ? `<h2>Guardrails</h2>\n${guardrailLines(r.guardrails)
        .map((l) => `<p class="guardrails${/reached|paused|cancelled/.test(l) ? " note" : ""}">${escapeHtml(l)}</p>`)
        .join("\n")}`
    : ""
}
<h2>Sends per hour</h2>
<div class="legend">${variants.map((v, i) => `<span><i class="swatch" style="background:${PALETTE[i % PALETTE.length]}"></i>${escapeHtml(v)}</span>`).join("")}</div>
<div class="chart">${sendCurveSvg(r, variants)}</div>
<h2>Funnel per variant</h2>
${r.variants.map((v, i) => `<div class="chart">${funnelSvg(v, PALETTE[i % PALETTE.length])}</div>`).join("\n")}
</body>
</html>
`;
}

/** Gridline steps of 1, 2 or 5 × 10^k, about `count` of them up to `max`. */
export function niceTicks(max: number, count = 5): number[] {
  const raw = Math.max(max, 1) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(
    1,
    [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!,
  );
  const ticks: number[] = [];
  for (let t = 0; t <= max + step / 2 && ticks.length <= count * 3; t += step) ticks.push(t);
  if (ticks[ticks.length - 1] < max) ticks.push(ticks[ticks.length - 1] + step);
  return ticks;
}

function sendCurveSvg(r: CampaignReport, variants: string[]): string {
  const W = 900,
    H = 300,
    left = 72,
    right = 16,
    top = 12,
    bottom = 56;
  const points = r.sendCurve;
  const ticks = niceTicks(Math.max(1, ...points.flatMap((p) => variants.map((v) => p.byVariant[v] ?? 0))));
  const max = ticks[ticks.length - 1];
  const x = (i: number) => left + (points.length <= 1 ? 0 : (i / (points.length - 1)) * (W - left - right));
  const y = (v: number) => top + (1 - v / max) * (H - top - bottom);
  const lines = variants.map((v, k) => {
    const path = points.map((p, i) => `${x(i).toFixed(1)},${y(p.byVariant[v] ?? 0).toFixed(1)}`).join(" ");
    return `<polyline class="series" data-variant="${escapeHtml(v)}" fill="none" stroke="${PALETTE[k % PALETTE.length]}" stroke-width="2" points="${path}"/>`;
  });
  const yGrid = ticks.map(
    (t) =>
      `<line class="grid" x1="${left}" y1="${y(t).toFixed(1)}" x2="${W - right}" y2="${y(t).toFixed(1)}" stroke="#e5e7eb"/><text x="${left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end" font-size="11">${n(t)}</text>`,
  );
  // About six labelled hours along the x axis, each with a vertical gridline.
  const every = Math.max(1, Math.ceil(points.length / 6));
  const labelled = points
    .map((_, i) => i)
    .filter((i) => (i % every === 0 && i <= points.length - 1 - every / 2) || i === points.length - 1);
  const xGrid = labelled
    .map((i) => ({ p: points[i], i }))
    .map(
      ({ p, i }) =>
        `<line class="grid" x1="${x(i).toFixed(1)}" y1="${top}" x2="${x(i).toFixed(1)}" y2="${H - bottom}" stroke="#f1f5f9"/><text x="${x(i).toFixed(1)}" y="${H - bottom + 16}" text-anchor="${i === points.length - 1 && i > 0 ? "end" : i === 0 ? "start" : "middle"}" font-size="11">${escapeHtml(p.hour.slice(5, 10))} ${escapeHtml(p.hour.slice(11, 13))}h</text>`,
    );
  return `<svg class="send-curve" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="Sends per hour">
${yGrid.join("\n")}
${xGrid.join("\n")}
<line x1="${left}" y1="${H - bottom}" x2="${W - right}" y2="${H - bottom}" stroke="#6b7280"/>
<line x1="${left}" y1="${top}" x2="${left}" y2="${H - bottom}" stroke="#6b7280"/>
<text class="axis-label" x="${(W + left) / 2}" y="${H - 10}" text-anchor="middle" font-size="12" fill="#374151">hour (UTC, MM-DD HHh)</text>
<text class="axis-label" transform="translate(16 ${(top + H - bottom) / 2}) rotate(-90)" text-anchor="middle" font-size="12" fill="#374151">sends per hour (SES Send events)</text>
${lines.join("\n")}
</svg>`;
}

/** The bars, top to bottom: the path to a click first, then what went wrong (the rejected column is in the table). */
const FUNNEL_STAGES = (
  ["scheduled", "due", "sent", "delivered", "opened", "clicked", "bounced", "complained", "unsubscribed"] as const
).map((key) => FUNNEL_COLUMNS.find((c) => c.key === key)!);

function funnelSvg(row: FunnelRow, color: string): string {
  const W = 900,
    barH = 22,
    gap = 6,
    labelW = 110,
    valueW = 150;
  const barsH = FUNNEL_STAGES.length * (barH + gap);
  const H = barsH + 24 + 40;
  const ticks = niceTicks(Math.max(1, ...FUNNEL_STAGES.map((s) => row[s.key] as number)), 4);
  const max = ticks[ticks.length - 1];
  const gx = (v: number) => labelW + (v / max) * (W - labelW - valueW);
  const grid = ticks.map(
    (t) =>
      `<line class="grid" x1="${gx(t).toFixed(1)}" y1="20" x2="${gx(t).toFixed(1)}" y2="${24 + barsH}" stroke="#e5e7eb"/><text x="${gx(t).toFixed(1)}" y="${24 + barsH + 14}" text-anchor="middle" font-size="11">${n(t)}</text>`,
  );
  const bars = FUNNEL_STAGES.map((s, i) => {
    const v = row[s.key] as number;
    const y = 24 + i * (barH + gap);
    const w = Math.max(v > 0 ? 1 : 0, (v / max) * (W - labelW - valueW));
    return `<g class="stage" data-stage="${s.key}"><text x="0" y="${y + 15}" font-size="12">${s.title}</text><rect x="${labelW}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${color}" opacity="${i < 6 ? 0.85 : 0.45}"/><text x="${labelW + w + 6}" y="${y + 15}" font-size="12">${n(v)}${s.rate ? ` (${pct(row.rates[s.rate])})` : ""}</text></g>`;
  });
  return `<svg class="funnel" data-variant="${escapeHtml(row.variant)}" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="Funnel of variant ${escapeHtml(row.variant)}">
<text x="0" y="14" font-size="13" font-weight="600">variant ${escapeHtml(row.variant)}</text>
${grid.join("\n")}
<text class="axis-label" x="${gx(max / 2).toFixed(1)}" y="${H - 6}" text-anchor="middle" font-size="12" fill="#374151">count (schedules, sends, SES events), all steps</text>
${bars.join("\n")}
</svg>`;
}

/** The text report's table, cell for cell: every column (due and rejected included) and the total row. */
function funnelTable(r: CampaignReport): string {
  const head = `<tr><th>step</th><th>variant</th>${FUNNEL_COLUMNS.map((c) => `<th>${c.title}</th>`).join("")}</tr>`;
  const rows = tableRows(r).map(
    (row) =>
      `<tr${row === r.total ? ' class="total"' : ""}><td>${escapeHtml(row.step)}</td><td>${escapeHtml(row.variant)}</td>${FUNNEL_COLUMNS.map(
        (c) => `<td>${n(row[c.key] as number)}${c.rate ? ` <small>${pct(row.rates[c.rate])}</small>` : ""}</td>`,
      ).join("")}</tr>`,
  );
  // Wide tables scroll inside their own box: the page itself never scrolls sideways (a phone is 390 px wide).
  return `<div class="scroll"><table class="funnel-table">${head}${rows.join("")}</table></div>`;
}

function comparisonsTable(r: CampaignReport): string {
  if (!r.comparisons.length) return "";
  const head = `<tr>${COMPARISON_HEAD.map((h) => `<th>${h}</th>`).join("")}</tr>`;
  const rows = r.comparisons.map(
    (c) =>
      `<tr>${comparisonCells(c)
        .map((v) => `<td>${escapeHtml(v)}</td>`)
        .join("")}</tr>`,
  );
  return `<h2>Comparisons</h2>
<p class="meta">${escapeHtml(TEST_IN_WORDS)}.</p>
<div class="scroll"><table class="comparisons">${head}${rows.join("")}</table></div>`;
}

/** The section as HTML. */
function smsSectionHtml(s: SmsSection): string {
  const row = (r: SmsFunnelRow) =>
    `<tr${r === s.total ? ' class="total"' : ""}>${smsCells(r)
      .map((c) => `<td>${escapeHtml(c)}</td>`)
      .join("")}</tr>`;
  const rows = [...s.rows, ...(s.rows.length > 1 ? [s.total] : [])].map(row).join("\n");
  return `<h2>Texts (SMS)</h2>
<div class="scroll"><table class="sms"><tr>${SMS_HEAD.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr>
${rows}</table></div>
<p class="meta">${escapeHtml(smsCostLine(s))}. ${escapeHtml(SMS_OPTED_OUT_NOTE)}.</p>`;
}
