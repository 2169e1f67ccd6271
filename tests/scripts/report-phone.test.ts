/**
 * The HTML campaign report on a phone: rendered by headless Chromium 390 px wide, the page does not scroll sideways
 * (its wide tables and charts scroll inside their own boxes). The page has no script of its own, so the test puts
 * it in an iframe of that width (srcdoc) and a script of the wrapper writes the page's scrollWidth into the DOM that
 * `--dump-dom` prints. Without Chromium the test is skipped on a developer's machine and fails in CI (CI=true), whose
 * .ci/run installs it.
 */
import { strict as assert } from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { EMAIL_EVENTS } from "../../infra/core/send/email-events";
import { CampaignReport, FunnelRow, RATES } from "../../scripts/lib/report/campaign-report";
import { renderReportHtml } from "../../scripts/lib/report/html";

const PHONE_WIDTH = 390;

function chromium(): string | undefined {
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    const r = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return undefined;
}

/** A row of `sent` sends with every event a share of them: long names and large counts make the widest cells. */
function row(step: string, variant: string, sent: number): FunnelRow {
  const counts = Object.fromEntries(EMAIL_EVENTS.map((e) => [e.funnel, Math.round(sent * 0.3)])) as Record<
    (typeof EMAIL_EVENTS)[number]["funnel"],
    number
  >;
  const rates = Object.fromEntries(RATES.map((r) => [r.name, 0.3])) as FunnelRow["rates"];
  return { step, variant, scheduled: sent, due: sent, ...counts, sent, rates };
}

function report(): CampaignReport {
  const variants = ["A", "subject-line-with-a-long-name"];
  const rows = ["1", "2", "3"].flatMap((step) => variants.map((v) => row(step, v, 1_234_567)));
  const hours = Array.from({ length: 72 }, (_, i) => new Date(Date.UTC(2026, 11, 1, i)).toISOString());
  return {
    campaign: "spring-sale-2026-with-a-rather-long-campaign-identifier",
    campaignTag: "spring-sale-2026",
    range: { from: hours[0], to: hours[hours.length - 1], periodSeconds: 3600 },
    launches: [{ id: "0123456789abcdef", planSha256: "ab".repeat(32), at: hours[0] }],
    holdoutRecipients: 123_456,
    rows,
    variants: variants.map((v) => row("all", v, 3_703_701)),
    total: row("all", "all", 7_407_402),
    comparisons: rows.map((r) => ({
      step: r.step,
      metric: "opened" as const,
      variant: r.variant,
      against: "A",
      rate: 0.31,
      againstRate: 0.3,
      lift: 0.033,
      pValue: 0.0123,
      significant: true,
    })),
    due: { counted: "records", unknownLaunches: [] },
    conversions: null,
    sendCurve: hours.map((hour, i) => ({
      hour,
      byVariant: { A: (i * 7919) % 5000, [variants[1]]: (i * 104729) % 5000 },
    })),
    noSendsYet: false,
    bulk: null,
  };
}

/** The page's scrollWidth and clientWidth in an iframe `width` px wide, as Chromium lays it out. */
function widthsAt(browser: string, html: string, width: number): { scroll: number; client: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "report-phone-"));
  const attr = html.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
  const wrapper = `<!DOCTYPE html><html><body style="margin:0"><iframe id="page" style="width:${width}px;height:3000px;border:0" srcdoc="${attr}"></iframe>
<script>
const page = document.getElementById("page");
page.addEventListener("load", () => {
  const d = page.contentDocument.documentElement;
  document.body.setAttribute("data-widths", d.scrollWidth + "/" + d.clientWidth);
});
</script></body></html>`;
  const file = path.join(dir, "wrapper.html");
  fs.writeFileSync(file, wrapper);
  const r = spawnSync(
    browser,
    [
      ...[
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        `--user-data-dir=${path.join(dir, "profile")}`,
      ],
      ...["--window-size=800,3000", "--virtual-time-budget=5000", "--dump-dom", `file://${file}`],
    ],
    { encoding: "utf8", timeout: 60_000 },
  );
  const m = /data-widths="(\d+)\/(\d+)"/.exec(r.stdout ?? "");
  assert.ok(
    m,
    `chromium printed no widths (exit ${r.status}${r.error ? `, ${r.error.message}` : ""}): ${r.stderr?.slice(-500)}`,
  );
  return { scroll: Number(m[1]), client: Number(m[2]) };
}

describe("the HTML report at phone width (headless Chromium)", function () {
  this.timeout(120_000);
  const browser = chromium();

  before(function () {
    if (browser) return;
    if (process.env.CI === "true")
      throw new Error("chromium is not installed: .ci/run installs it (apt-get install chromium)");
    this.skip();
  });

  it(`does not scroll sideways at ${PHONE_WIDTH} px: the tables and charts scroll in their own boxes`, () => {
    const { scroll, client } = widthsAt(browser!, renderReportHtml(report()), PHONE_WIDTH);
    assert.equal(client, PHONE_WIDTH);
    assert.ok(scroll <= client, `the page is ${scroll} px wide in a ${client} px viewport`);
  });

  it("the measure catches an overflow (a control: the same page with its scroll boxes' CSS removed)", () => {
    const html = renderReportHtml(report()).replace(/\.scroll \{[^}]*\}|\.chart \{[^}]*\}|\.chart svg \{[^}]*\}/g, "");
    assert.ok(!/\.scroll \{/.test(html));
    const { scroll, client } = widthsAt(browser!, html, PHONE_WIDTH);
    assert.ok(scroll > client + 100, `${scroll} px in ${client} px`);
  });

  it("says it is laid out for the device's width (a phone would otherwise lay it out 980 px wide and shrink it)", () => {
    assert.match(renderReportHtml(report()), /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  });
});
