/**
 * The whole path offline, on a sample list, into one folder: the stack with the policy pack's verdict, a campaign's
 * plan and its sends per local hour, one mail rendered, and the campaign's report. See COMMAND (its --help).
 *
 * Each step is the real code: preview's and launch-campaign's mains, the templates' renderer, campaign-report's
 * builder and pages. Only the report's SES metrics are a sample (sample-metrics.ts): nothing was sent.
 */
import * as fs from "fs";
import * as path from "path";
import { campaignTag } from "../infra/core/send/email-events";
import { planObjectKey } from "./lib/aws/launch";
import { UsageError } from "../infra/core/errors";
import { main as preview } from "./preview";
import { main as launch } from "./launch-campaign";
import { nowFlag, OUT } from "./lib/cli/common-flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";
import { Command } from "./lib/cli/flags";
import { commandMain, runMain, Io } from "./lib/cli/run";
import { ROOT_DIR } from "./lib/offline/mock-stack";
import { buildLaunchRecord } from "./lib/planning/launch-record";
import { PlanSummary } from "./lib/planning/plan-summary";
import { sampleListCsv } from "./lib/recipients/sample-list";
import { buildReport, dueWithoutPlan, metricQueries, reportRange, segmentsOf } from "./lib/report/campaign-report";
import { METRICS_FILE, RECORD_FILE, recordedDue, recordedMetrics, writeRecordedLaunch } from "./lib/report/recorded";
import { renderReportHtml } from "./lib/report/html";
import { formatReport, verdict } from "./lib/report/report-text";
import { EventRates, PlannedSend, sampleSeries } from "./lib/report/sample-metrics";
import { loadTemplates } from "./lib/templates/campaign-templates";
import { renderMail, requireData, TemplateData } from "./lib/templates/test-mail";
import { count } from "./lib/text/format";

/** The default clock: a fixed instant, so that two runs write the same files. */
export const DEMO_NOW = "2026-11-30T12:00:00Z";
const DEFAULT_OUT = path.join("out", "demo");

/** The sample campaign: its id, list size, templates and flags (the launcher's). */
const CAMPAIGN = "demo";
const RECIPIENTS = 3000;
const TEMPLATES_DIR = path.join(ROOT_DIR, "templates");
const STEP_1_TEMPLATE = "spring-sale";
const TIMING = ["--hour", "9", "--step", "+3d:spring-followup"];
const AUDIENCE = ["--variant", "A:50:spring-sale", "--variant", "B:50:spring-sale-b"];
const DAY_MS = 86_400_000;

const FLAGS = {
  out: { ...OUT, note: "every file is written to it", default: DEFAULT_OUT },
  now: {
    ...nowFlag("the sample campaign's first send is 9 AM local two days later").now,
    default: Date.parse(DEMO_NOW),
    defaultHelp: DEMO_NOW,
  },
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "demo",
  usage: ["[--out DIR] [--now ISO]"],
  summary: `The whole path offline, no AWS account or network: renders the dev stack under Pulumi's mocks with the policy
pack's verdict (DIR/stack.txt), plans a two-step A/B campaign on a sample list of ${count(RECIPIENTS)} recipients in many zones with
the launcher's dry run (DIR/recipients.csv, DIR/plan/, sends per local hour in DIR/plan/hours.txt), renders one
recipient's first mail (DIR/email.html, .txt) and builds the campaign's report from its launch record and sample SES
metrics (DIR/report.txt, .html, .json), leaving the recorded launch that campaign-report reads
offline (DIR/launch-record.json, DIR/metrics.json).`,
  flags: FLAGS,
  exitCodes: EXIT_CODES.demo,
  changesAws: false,
  reports: false,
  reference: "docs/deploying.md",
};

/**
 * The sample metrics' rates: every send alike, but variant B's first mail, whose subject line (spring-sale-b's) is
 * opened more often than A's: the test the campaign runs. Step 2's mail is the same for both.
 */
const SAMPLE_RATES: EventRates = {
  delivered: 0.985,
  opened: 0.3,
  clickedOfOpened: 0.15,
  complained: 0.0005,
  unsubscribed: 0.002,
};
const SUBJECT_B_RATES: EventRates = { ...SAMPLE_RATES, opened: 0.36 };
const sampleRatesOf = (send: PlannedSend) => (send.variant === "B" && send.step === 1 ? SUBJECT_B_RATES : SAMPLE_RATES);

/** One plan line, as far as the demo reads it. */
interface PlanLine extends PlannedSend {
  recipient_id: string;
  send_at: string;
  template: string;
  template_data: TemplateData;
}

export const main = commandMain(COMMAND, async (f, io): Promise<number> => {
  const now = f.now;
  const dir = f.out ?? DEFAULT_OUT;
  const file = (...names: string[]) => path.join(dir, ...names);
  try {
    fs.mkdirSync(file("plan"), { recursive: true });
  } catch (e) {
    throw new UsageError(`--out ${dir}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const stack = await stackStep(file, io);
  if (stack !== 0) return stack;
  const planned = await planStep(file, now, io);
  if (planned.code !== 0) return planned.code;
  emailStep(file, planned.lines, io);
  reportStep(file, planned.lines, now, io);
  const open = ["report.html", "email.html", "plan/hours.txt", "stack.txt"].map((n) => `  ${file(n)}\n`);
  io.out(`\nOpen:\n${open.join("")}`);
  return 0;
});

/** Output of a command run in this process, kept to be written to a file; its stderr passed on. */
function captured(io: Io): { io: Io; text: () => string } {
  let out = "";
  return { io: { out: (t) => (out += t), err: (t) => io.err(t) }, text: () => out };
}

/** 1. The dev stack under Pulumi's mocks, with the policy pack (preview's main): its summary lines, the rest in stack.txt. */
async function stackStep(file: (...names: string[]) => string, io: Io): Promise<number> {
  const run = captured(io);
  const code = await preview(["--stack", "dev"], run.io);
  fs.writeFileSync(file("stack.txt"), run.text());
  const lines = run.text().split("\n");
  io.out([lines[0], ...lines.filter((l) => l.startsWith("Policies:")), `  → ${file("stack.txt")}`, "", ""].join("\n"));
  return code;
}

/** 2. The sample list, planned by the launcher's dry run into plan/, and its sends per local hour (plan/hours.txt). */
async function planStep(
  file: (...names: string[]) => string,
  now: number,
  io: Io,
): Promise<{ code: number; lines: PlanLine[] }> {
  fs.writeFileSync(file("recipients.csv"), sampleListCsv(RECIPIENTS));
  const date = new Date(now + 2 * DAY_MS).toISOString().slice(0, 10);
  const code = await launch(
    [
      ...["--campaign", CAMPAIGN, "--recipients", file("recipients.csv"), "--templates", TEMPLATES_DIR],
      ...["--template", STEP_1_TEMPLATE, "--date", date, ...TIMING, ...AUDIENCE],
      ...["--now", new Date(now).toISOString(), "--dry-run", "--out", file("plan")],
    ],
    io,
  );
  if (code !== 0) return { code, lines: [] };
  const lines = fs
    .readFileSync(file("plan", "plan.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as PlanLine);
  const hours = localHours(lines);
  fs.writeFileSync(file("plan", "hours.txt"), hours);
  io.out(`\n${hours}  → ${file("plan", "hours.txt")}\n\n`);
  return { code, lines };
}

/** Sends per local hour (each line's send_at, the time in its recipient's zone), and at how many UTC instants. */
export function localHours(lines: { send_at: string; utc: string }[]): string {
  const byHour = new Map<string, { sends: number; instants: Set<string> }>();
  for (const l of lines) {
    const hour = `${l.send_at.slice(11, 13)}:00`;
    const h = byHour.get(hour) ?? { sends: 0, instants: new Set<string>() };
    h.sends++;
    h.instants.add(l.utc);
    byHour.set(hour, h);
  }
  const widest = Math.max(...[...byHour.values()].map((h) => h.sends));
  const rows = [...byHour].sort(([a], [b]) => a.localeCompare(b));
  return [
    `Sends per local hour (plan.jsonl's send_at): ${count(lines.length)} sends`,
    ...rows.map(
      ([hour, h]) =>
        `  ${hour}  ${count(h.sends).padStart(7)}  ${"█".repeat(Math.max(1, Math.round((h.sends / widest) * 30))).padEnd(30)}  at ${count(h.instants.size)} UTC instants`,
    ),
  ]
    .join("\n")
    .concat("\n");
}

/** 3. The first recipient's step-1 mail with its plan line's data, as SES's Handlebars renders it (email.html, .txt). */
function emailStep(file: (...names: string[]) => string, lines: PlanLine[], io: Io): void {
  const line = lines.find((l) => l.step === 1)!;
  const template = loadTemplates(TEMPLATES_DIR)!.templates.get(line.template)!;
  requireData(template, line.template_data);
  const mail = renderMail(template, line.template_data);
  fs.writeFileSync(file("email.html"), mail.html);
  fs.writeFileSync(file("email.txt"), `Subject: ${mail.subject}\n\n${mail.text}`);
  io.out(
    `Email: step 1 to ${line.template_data.first_name} (${line.recipient_id}, variant ${line.variant}, template ${line.template}): "${mail.subject}"\n` +
      `  → ${file("email.html")}, ${file("email.txt")}\n\n`,
  );
}

/**
 * 4. The report as campaign-report builds it (its builder and pages), a day after the last send: from the launch
 * record the launcher would store for this plan, and sample SES metrics (nothing was sent).
 */
function reportStep(file: (...names: string[]) => string, lines: PlanLine[], now: number, io: Io): void {
  const summary = JSON.parse(fs.readFileSync(file("plan", "summary.json"), "utf8")) as PlanSummary;
  // A plan of one part is launched under its hash's first 16 digits (launch-campaign.ts).
  const id = summary.planSha256.slice(0, 16);
  const record = buildLaunchRecord(summary, { id, planKeys: [planObjectKey(CAMPAIGN, id, 1)], at: new Date(now) });
  const to = Date.parse(record.lastSend!) + DAY_MS;
  const queries = metricQueries(segmentsOf([record], []));
  const series = sampleSeries(lines, queries, sampleRatesOf);
  if (dueWithoutPlan(record, to) !== "all") throw new Error(`the demo's report must end after its last send`);
  const report = buildReport({
    campaignId: CAMPAIGN,
    campaignTag: campaignTag(CAMPAIGN),
    records: [record],
    queries,
    series,
    range: reportRange([record], to),
    due: recordedDue([record], to),
  });
  // What campaign-report --recorded reads: the launch record and the metrics, as S3 and CloudWatch would hold them.
  writeRecordedLaunch(file(), record, recordedMetrics(queries, series, to));
  fs.writeFileSync(file("report.txt"), formatReport(report));
  fs.writeFileSync(file("report.html"), renderReportHtml(report));
  fs.writeFileSync(file("report.json"), JSON.stringify(report, null, 2) + "\n");
  io.out(
    `Report: campaign-report's, from this plan's launch record and sample SES metrics (nothing was sent)\n` +
      `  verdict: ${verdict(report)}\n` +
      `  → ${file("report.txt")}, ${file("report.html")}, ${file("report.json")}\n` +
      `  recorded launch: ${file(RECORD_FILE)}, ${file(METRICS_FILE)} (campaign-report --campaign ${CAMPAIGN} --recorded ${file()})\n`,
  );
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
