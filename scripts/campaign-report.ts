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
import { countDue, discoverSegments, fetchSeries, readLaunchRecords } from "./lib/aws/campaign-metrics";
import { requireOutputs } from "./lib/aws/stack-outputs";
import { runMain } from "./lib/cli/run";
import { buildReport, metricQueries, reportRange, segmentsOf } from "./lib/report/campaign-report";
import { conversionsProblem, parseConversions } from "./lib/report/conversions";
import { formatReport } from "./lib/report/report-text";
import { renderReportHtml } from "./lib/report/html";
import { UsageError } from "../infra/core/errors";
import { stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { CAMPAIGN_FLAG, jsonFlag } from "./lib/cli/common-flags";
import { instant, path as pathParser } from "./lib/cli/parsers";
import { stackCommand } from "./lib/cli/stack-command";
import type { CampaignReport } from "./lib/report/campaign-report";
import { readInputFile } from "./lib/text/input-files";

const FLAGS = {
  ...CAMPAIGN_FLAG,
  ...jsonFlag(),
  html: {
    type: "string",
    value: "FILE",
    parse: pathParser(),
    help: "also write one self-contained page (the same numbers, the send curve, the funnels)",
  },
  conversions: {
    type: "string",
    value: "FILE",
    parse: pathParser(),
    help: "variant,conversions lines: each variant's conversions against the holdout's",
  },
  from: {
    type: "string",
    value: "INSTANT",
    parse: instant(),
    help: "the event range",
    defaultHelp: "the first scheduled send, or 14 days back",
  },
  to: {
    type: "string",
    value: "INSTANT",
    parse: instant(),
    help: "the end of the range",
    defaultHelp: "now",
    with: "from",
  },
  ...timeoutFlag(120, "each AWS call is bounded by 30 s or what is left"),
  ...stackFlags("bucket"),
} as const;

export const { COMMAND, main } = stackCommand(
  {
    script: "campaign-report",
    usage: ["--campaign ID [--json] [--html FILE] [--conversions FILE] [flags] (--stack NAME | --outputs FILE)"],
    summary: `The funnel per step and variant: scheduled (from the launch records in the bucket), then sent, delivered, bounced,
complained, rejected, opens, clicks, unsubscribed (SES event metrics, AWS/SES), with rates, per variant and in total.
"due" is the scheduled sends whose time had come by --to (sent is a rate of these). Each variant is compared with the
first on opens and clicks (lift, two-sided two-proportion z-test, significant at 95%); a verdict line says which won.`,
    flags: FLAGS,
    changesAws: false,
    reference: "docs/measuring.md",
  },
  async ({ f, outputs, deadline: d, io, campaignId: campaign }): Promise<CampaignReport | undefined> => {
    const campaignId = campaign();
    const tag = campaignTag(campaignId);
    const to = f.to ?? Date.now();
    if (f.from !== undefined && f.from >= to)
      throw new UsageError(`--from ${new Date(f.from).toISOString()}: must be before --to`);
    const conversions =
      f.conversions === undefined ? undefined : parseConversions(readConversions(f.conversions), f.conversions);
    const o = requireOutputs(outputs(), ["bucketName"], { bucketName: "bucket" });
    const s3 = s3Client(o.region);
    const records = await readLaunchRecords(s3, o.bucketName, campaignId, d);
    const cw = cloudWatchClient(o.region);
    const segments = segmentsOf(records, await discoverSegments(cw, tag, d));
    if (segments.length === 0) {
      io.err(
        `campaign ${campaignId}: no launch record in s3://${o.bucketName}/${LAUNCHES_PREFIX}${campaignId}/ and no SES metrics for tag ${tag}: nothing to report (launched with an older launcher, or a different id?)\n`,
      );
      return undefined;
    }
    const range = reportRange(records, to, f.from);
    const queries = metricQueries(segments);
    const series = await fetchSeries(cw, tag, queries, range, d);
    const due = await countDue(s3, o.bucketName, records, to, d);
    const report = buildReport({ campaignId, campaignTag: tag, records, queries, series, range, due, conversions });
    report.guardrails = await guardrailsOf(report, o as unknown as Record<string, unknown>, campaignId, d);
    const problem = f.conversions === undefined ? undefined : conversionsProblem(report, f.conversions);
    if (problem) throw new UsageError(`--conversions ${problem}`);
    if (f.html !== undefined) writeHtml(f.html, report);
    return report;
  },
  {
    text: (r, { f }) => (r ? formatReport(r) + (f.html ? `  page: ${f.html}\n` : "") : ""),
    exitCode: (r) => (r ? 0 : 1),
  },
);

function writeHtml(file: string, report: CampaignReport): void {
  try {
    fs.writeFileSync(file, renderReportHtml(report));
  } catch (e) {
    throw new UsageError(`--html ${file}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** The rates against the stack's guardrails (output guardrailSettings) and the campaign's state (with the ledger). */
async function guardrailsOf(report: CampaignReport, outputs: Record<string, unknown>, campaignId: string, d: Deadline) {
  const settings = isGuardrails(outputs.guardrailSettings) ? outputs.guardrailSettings : null;
  const table = typeof outputs.ledgerTableName === "string" ? outputs.ledgerTableName : undefined;
  let state = null;
  if (table)
    state = await campaignStateOrError(d, { ddb: dynamodb(outputs.region as string | undefined), table }, campaignId);
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

if (require.main === module) runMain(() => main(process.argv.slice(2)));
