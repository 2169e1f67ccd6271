/**
 * How a campaign did: the funnel per step and variant from its launch records and SES event metrics. See COMMAND (its --help).
 */
import * as fs from "fs";
import { campaignTag } from "../infra/core/send/email-events";
import { LAUNCHES_PREFIX } from "../infra/core/plan/naming";
import { cloudWatchClient, dynamodb, s3Client } from "./lib/aws/clients";
import { campaignStateOrError } from "./lib/aws/campaign-state";
import { Deadline } from "./lib/aws/call";
import { Guardrails } from "../infra/core/send/guardrails";
import { guardrailSection } from "./lib/report/guardrail-rates";
import { requireCampaign } from "./lib/cli/campaign-id-flag";
import { countDue, discoverSegments, fetchSeries, readLaunchRecords } from "./lib/aws/campaign-metrics";
import { requireOutputs } from "./lib/aws/stack-outputs";
import { Io, parseFlags, processIo, runMain, secondsFlag } from "./lib/cli/run";
import { buildReport, CampaignReport, metricQueries, reportRange, segmentsOf } from "./lib/report/campaign-report";
import { conversionsProblem, parseConversions } from "./lib/report/conversions";
import { formatReport } from "./lib/report/report-text";
import { renderReportHtml } from "./lib/report/html";
import { UsageError } from "../infra/core/errors";
import { outputsFromFlags, stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { Command } from "./lib/cli/flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";
import { readInputFile } from "./lib/text/input-files";

const FLAGS = {
  campaign: { type: "string", value: "ID", help: "the campaign" },
  json: { type: "boolean", help: "the report as JSON" },
  html: {
    type: "string",
    value: "FILE",
    help: "also write one self-contained page (the same numbers, the send curve, the funnels)",
  },
  conversions: {
    type: "string",
    value: "FILE",
    help: "variant,conversions lines: each variant's conversions against the holdout's",
  },
  from: {
    type: "string",
    value: "ISO",
    help: "the event range (default: the first scheduled send, or 14 days back, to now)",
  },
  to: { type: "string", value: "ISO", help: "the end of the range", default: "now", with: "from" },
  ...timeoutFlag(30, "the time limit of each AWS call"),
  ...stackFlags("bucket"),
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "campaign-report",
  usage: ["--campaign ID [--json] [--html FILE] [--conversions FILE] [flags] (--stack NAME | --outputs FILE)"],
  summary: `The funnel per step and variant: scheduled (from the launch records in the bucket), then sent, delivered, bounced,
complained, rejected, opens, clicks, unsubscribed (SES event metrics, AWS/SES), with rates, per variant and in total.
"due" is the scheduled sends whose time had come by --to (sent is a rate of these). Each variant is compared with the
first on opens and clicks (lift, two-sided two-proportion z-test, significant at 95%); a verdict line says which won.`,
  flags: FLAGS,
  exitCodes: EXIT_CODES["campaign-report"],
  reference: "docs/measuring.md",
};

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(argv, COMMAND);
  const campaignId = requireCampaign(f.campaign);
  const tag = campaignTag(campaignId);
  const to = f.to === undefined ? Date.now() : instantFlag("to", f.to);
  const from = f.from === undefined ? undefined : instantFlag("from", f.from);
  if (from !== undefined && from >= to) throw new UsageError(`--from ${f.from}: must be before --to`);
  const timeoutMs = Math.round(secondsFlag("timeout-seconds", f["timeout-seconds"], 0.1, 600, 30) * 1000);
  const conversions =
    f.conversions === undefined ? undefined : parseConversions(readConversions(f.conversions), f.conversions);
  const outputs = requireOutputs(outputsFromFlags(f), ["bucketName"], { bucketName: "bucket" });

  const s3 = s3Client(outputs.region);
  const records = await readLaunchRecords(s3, outputs.bucketName, campaignId, timeoutMs);
  const cw = cloudWatchClient(outputs.region);
  const segments = segmentsOf(records, await discoverSegments(cw, tag, timeoutMs));
  if (segments.length === 0) {
    io.err(
      `campaign ${campaignId}: no launch record in s3://${outputs.bucketName}/${LAUNCHES_PREFIX}${campaignId}/ and no SES metrics for tag ${tag}: nothing to report (launched with an older launcher, or a different id?)\n`,
    );
    return 1;
  }
  const range = reportRange(records, to, from);
  const queries = metricQueries(segments);
  const series = await fetchSeries(cw, tag, queries, range, timeoutMs);
  const due = await countDue(s3, outputs.bucketName, records, to, timeoutMs);
  const report = buildReport({ campaignId, campaignTag: tag, records, queries, series, range, due, conversions });
  report.guardrails = await guardrailsOf(report, outputs as unknown as Record<string, unknown>, campaignId, timeoutMs);
  const problem = f.conversions === undefined ? undefined : conversionsProblem(report, f.conversions);
  if (problem) throw new UsageError(`--conversions ${problem}`);
  if (f.html !== undefined) {
    try {
      fs.writeFileSync(f.html, renderReportHtml(report));
    } catch (e) {
      throw new UsageError(
        `--html ${f.html}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      );
    }
  }
  io.out(
    f.json ? JSON.stringify(report, null, 2) + "\n" : formatReport(report) + (f.html ? `  page: ${f.html}\n` : ""),
  );
  return 0;
}

/** The rates against the stack's guardrails (output guardrailSettings) and the campaign's state (with the ledger). */
async function guardrailsOf(
  report: CampaignReport,
  outputs: Record<string, unknown>,
  campaignId: string,
  timeoutMs: number,
) {
  const settings = isGuardrails(outputs.guardrailSettings) ? outputs.guardrailSettings : null;
  const table = typeof outputs.ledgerTableName === "string" ? outputs.ledgerTableName : undefined;
  let state = null;
  if (table) {
    const d = new Deadline(timeoutMs / 1000);
    try {
      state = await campaignStateOrError(d, { ddb: dynamodb(outputs.region as string | undefined), table }, campaignId);
    } finally {
      d.dispose();
    }
  }
  return guardrailSection(report.total, settings, state);
}

const isGuardrails = (v: unknown): v is Guardrails =>
  !!v &&
  typeof v === "object" &&
  ["bounceRate", "complaintRate", "minSends"].every((k) => typeof (v as Record<string, unknown>)[k] === "number") &&
  typeof (v as Record<string, unknown>).window === "string";

function readConversions(file: string): string {
  return readInputFile(file, `--conversions ${file}`);
}

function instantFlag(name: string, raw: string): number {
  const t = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(t))
    throw new UsageError(`--${name} ${raw}: an ISO instant with Z or an offset, e.g. 2026-12-01T00:00Z`);
  return t;
}
