/**
 * The campaign report as one self-contained HTML page: inline CSS and SVG, no script, no font, no image, no link
 * to fetch — it opens the same offline, in a mail attachment or on a file share.
 */
import { CampaignReport, FUNNEL_COLUMNS, FunnelRow, n, pct } from "./campaign-report";

const PALETTE = ["#2563eb", "#db2777", "#16a34a", "#ea580c", "#7c3aed", "#0891b2", "#ca8a04", "#4b5563"];

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderReportHtml(r: CampaignReport): string {
  const variants = r.variants.map((v) => v.variant);
  const title = `Campaign ${r.campaign}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)} — sendtime report</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; color: #111827; margin: 24px; max-width: 980px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.meta { color: #4b5563; } .note { color: #92400e; background: #fef3c7; padding: 6px 10px; border-radius: 4px; display: inline-block; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin-top: 8px; }
th, td { padding: 3px 10px; text-align: right; white-space: nowrap; border-bottom: 1px solid #e5e7eb; } th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
.legend span { display: inline-block; margin-right: 16px; } .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<div class="meta">${r.launches.length} launch${r.launches.length === 1 ? "" : "es"} · ${n(r.total.scheduled)} schedules · holdout ${n(r.holdoutRecipients)} recipients (not sent) · events ${escapeHtml(r.range.from.slice(0, 16))}Z – ${escapeHtml(r.range.to.slice(0, 16))}Z</div>
${r.noSendsYet ? '<p class="note">No sends yet: every count except scheduled is zero.</p>' : ""}
<h2>Sends per hour</h2>
<div class="legend">${variants.map((v, i) => `<span><i class="swatch" style="background:${PALETTE[i % PALETTE.length]}"></i>${escapeHtml(v)}</span>`).join("")}</div>
${sendCurveSvg(r, variants)}
<h2>Funnel per variant</h2>
${r.variants.map((v, i) => funnelSvg(v, PALETTE[i % PALETTE.length])).join("\n")}
<h2>Per step and variant</h2>
${funnelTable(r)}
<p class="meta">Rates: sent of scheduled; delivered, bounced, rejected of sent; complained, opens, clicks, unsubscribed of delivered. Opens and clicks are SES events: a recipient opening twice counts twice.</p>
</body>
</html>
`;
}

function sendCurveSvg(r: CampaignReport, variants: string[]): string {
  const W = 900,
    H = 260,
    left = 56,
    right = 16,
    top = 12,
    bottom = 40;
  const points = r.sendCurve;
  const max = Math.max(1, ...points.flatMap((p) => variants.map((v) => p.byVariant[v] ?? 0)));
  const x = (i: number) => left + (points.length <= 1 ? 0 : (i / (points.length - 1)) * (W - left - right));
  const y = (v: number) => top + (1 - v / max) * (H - top - bottom);
  const lines = variants.map((v, k) => {
    const path = points.map((p, i) => `${x(i).toFixed(1)},${y(p.byVariant[v] ?? 0).toFixed(1)}`).join(" ");
    return `<polyline class="series" data-variant="${escapeHtml(v)}" fill="none" stroke="${PALETTE[k % PALETTE.length]}" stroke-width="2" points="${path}"/>`;
  });
  const first = points[0]?.hour ?? r.range.from;
  const last = points[points.length - 1]?.hour ?? r.range.to;
  return `<svg class="send-curve" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="Sends per hour">
<line x1="${left}" y1="${H - bottom}" x2="${W - right}" y2="${H - bottom}" stroke="#9ca3af"/>
<line x1="${left}" y1="${top}" x2="${left}" y2="${H - bottom}" stroke="#9ca3af"/>
<text x="${left - 6}" y="${top + 10}" text-anchor="end" font-size="11">${n(max)}</text>
<text x="${left - 6}" y="${H - bottom}" text-anchor="end" font-size="11">0</text>
<text x="${left}" y="${H - bottom + 18}" font-size="11">${escapeHtml(first.slice(0, 13))}:00Z</text>
<text x="${W - right}" y="${H - bottom + 18}" text-anchor="end" font-size="11">${escapeHtml(last.slice(0, 13))}:00Z</text>
<text x="${(W + left) / 2}" y="${H - 6}" text-anchor="middle" font-size="11" fill="#4b5563">hour (UTC), SES Send events</text>
${lines.join("\n")}
</svg>`;
}

/** The bars, top to bottom: the path to a click first, then what went wrong (the rejected column is left out). */
const FUNNEL_STAGES = (["scheduled", "sent", "delivered", "opened", "clicked", "bounced", "complained", "unsubscribed"] as const).map(
  (key) => FUNNEL_COLUMNS.find((c) => c.key === key)!,
);

function funnelSvg(row: FunnelRow, color: string): string {
  const W = 900,
    barH = 22,
    gap = 6,
    labelW = 110,
    valueW = 150;
  const H = FUNNEL_STAGES.length * (barH + gap) + 24;
  const max = Math.max(1, ...FUNNEL_STAGES.map((s) => row[s.key] as number));
  const bars = FUNNEL_STAGES.map((s, i) => {
    const v = row[s.key] as number;
    const y = 24 + i * (barH + gap);
    const w = Math.max(v > 0 ? 1 : 0, (v / max) * (W - labelW - valueW));
    return `<g class="stage" data-stage="${s.key}"><text x="0" y="${y + 15}" font-size="12">${s.title}</text><rect x="${labelW}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${color}" opacity="${i < 5 ? 0.85 : 0.45}"/><text x="${labelW + w + 6}" y="${y + 15}" font-size="12">${n(v)}${s.rate ? ` (${pct(row.rates[s.rate])})` : ""}</text></g>`;
  });
  return `<svg class="funnel" data-variant="${escapeHtml(row.variant)}" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="Funnel of variant ${escapeHtml(row.variant)}">
<text x="0" y="14" font-size="13" font-weight="600">variant ${escapeHtml(row.variant)}</text>
${bars.join("\n")}
</svg>`;
}

function funnelTable(r: CampaignReport): string {
  const cols = FUNNEL_STAGES;
  const head = `<tr><th>step</th><th>variant</th>${cols.map((c) => `<th>${c.title}</th>`).join("")}</tr>`;
  const rows = [...r.rows, ...(r.rows.length > 1 ? r.variants : [])].map(
    (row) =>
      `<tr><td>${escapeHtml(row.step)}</td><td>${escapeHtml(row.variant)}</td>${cols
        .map((c) => `<td>${n(row[c.key] as number)}${c.rate ? ` <small>${pct(row.rates[c.rate])}</small>` : ""}</td>`)
        .join("")}</tr>`,
  );
  return `<table class="funnel-table">${head}${rows.join("")}</table>`;
}
