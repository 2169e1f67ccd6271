/**
 * How a campaign did: the funnel per step and variant from its launch records and SES event metrics. See COMMAND (its --help).
 */
import * as fs from "fs";
import { campaignTag } from "../infra/core/send/email-events";
import { LAUNCHES_PREFIX } from "../infra/core/plan/naming";
import { cloudWatchClient, dynamodb, s3Client } from "./lib/aws/clients";
import { campaignStateWithHistory } from "./lib/aws/campaign-state";
import { Deadline } from "./lib/aws/call";
import { Guardrails } from "../infra/core/send/guardrails";
import { guardrailSection } from "./lib/report/guardrail-rates";
import { countDue, discoverSegments, fetchSeries, readLaunchRecords } from "./lib/aws/campaign-metrics";
import { requireOutputs, StackOutputs } from "./lib/aws/stack-outputs";
import { readRecordedLaunch, recordedDue, recordedSegments, recordedSeries } from "./lib/report/recorded";
import { Io, runMain } from "./lib/cli/run";
import { buildReport, metricQueries, reportRange, segmentsOf } from "./lib/report/campaign-report";
import { conversionsProblem, parseConversions } from "./lib/report/conversions";
import { formatReport } from "./lib/report/report-text";
import { renderReportHtml } from "./lib/report/html";
import { UsageError } from "../infra/core/errors";
import { stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { CAMPAIGN_FLAG, jsonFlag } from "./lib/cli/common-flags";
import { instant, path as pathParser, positive } from "./lib/cli/parsers";
import { logsClient } from "./lib/aws/clients";
import { runLogsQuery } from "./lib/aws/sms-events";
import { smsFunnelQuery, SMS_QUERY_LIMIT, smsSection } from "./lib/report/sms-funnel";
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
  recorded: {
    type: "string",
    value: "DIR",
    parse: pathParser(),
    help: "a recorded launch, read offline: DIR/launch-record.json and DIR/metrics.json (what `sendtime demo` writes)",
    note: "no AWS call, no stack outputs",
  },
  "sms-price-per-part": {
    type: "string",
    value: "USD",
    parse: positive(),
    help: "the price of one SMS message part, AWS's and the carrier's together: the texts' cost estimated from their parts",
    note: "the events also carry what AWS billed; see docs/cost.md for the price and its date",
  },
  "sms-log-group": {
    type: "string",
    value: "NAME",
    help: "the SMS event log group (output smsEventLogGroupName): the texts' funnel",
  },
  ...timeoutFlag(120, "each AWS call is bounded by 30 s or what is left"),
  ...stackFlags("bucket"),
} as const;

export const { COMMAND, main } = stackCommand(
  {
    script: "campaign-report",
    usage: [
      "--campaign ID [--json] [--html FILE] [--conversions FILE] [flags] (--stack NAME | --outputs FILE)",
      "--campaign ID --recorded DIR [--json] [--html FILE] [--conversions FILE] [flags]",
    ],
    summary: `The funnel per step and variant: scheduled (from the launch records in the bucket), then sent, delivered, bounced,
complained, rejected, opens, clicks, unsubscribed (SES event metrics, AWS/SES), with rates, per variant and in total;
with SMS, the texts sent, delivered, pending and failed by reason, and their cost (the SMS event log group).
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
    if (f.from !== undefined && f.from >= to && f.recorded === undefined) fromNotBefore(f.from);
    const conversions =
      f.conversions === undefined ? undefined : parseConversions(readConversions(f.conversions), f.conversions);
    const built =
      f.recorded === undefined
        ? await fromStack({ campaignId, tag, to, from: f.from, d, io, outputs: outputs() })
        : fromRecorded({ campaignId, tag, from: f.from, to: f.to, dir: f.recorded, stack: f });
    if (!built) return undefined;
    const report = buildReport({ campaignId, campaignTag: tag, ...built.inputs, conversions });
    if (built.outputs)
      report.guardrails = await guardrailsOf(
        report,
        built.outputs as unknown as Record<string, unknown>,
        campaignId,
        d,
      );
    const logGroup = f["sms-log-group"] ?? built.outputs?.smsEventLogGroupName;
    if (logGroup && built.outputs) {
      const range = built.inputs.range;
      const query = { logGroup, query: smsFunnelQuery(tag), from: range.from, to: range.to, limit: SMS_QUERY_LIMIT };
      const rows = await runLogsQuery(logsClient(built.outputs.region), d, query);
      report.sms = smsSection(rows, { logGroup, pricePerPart: f["sms-price-per-part"] });
    }
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

const fromNotBefore = (from: number): never => {
  throw new UsageError(`--from ${new Date(from).toISOString()}: must be before --to`);
};

/** What buildReport takes besides the campaign and the conversions. */
type ReportInputs = Pick<Parameters<typeof buildReport>[0], "records" | "queries" | "series" | "range" | "due">;
type Built = { inputs: ReportInputs; outputs?: StackOutputs } | undefined;

/** The records from the bucket, the metrics from CloudWatch, the due counts from the plans when a launch is under way. */
async function fromStack(o: {
  campaignId: string;
  tag: string;
  to: number;
  from?: number;
  d: Deadline;
  io: Io;
  outputs: StackOutputs;
}): Promise<Built> {
  const out = requireOutputs(o.outputs, ["bucketName"], { bucketName: "bucket" });
  const s3 = s3Client(out.region);
  const records = await readLaunchRecords(s3, out.bucketName, o.campaignId, o.d);
  const cw = cloudWatchClient(out.region);
  const segments = segmentsOf(records, await discoverSegments(cw, o.tag, o.d));
  if (segments.length === 0) {
    o.io.err(
      `campaign ${o.campaignId}: no launch record in s3://${out.bucketName}/${LAUNCHES_PREFIX}${o.campaignId}/ and no SES metrics for tag ${o.tag}: nothing to report (launched with an older launcher, or a different id?)\n`,
    );
    return undefined;
  }
  const range = reportRange(records, o.to, o.from);
  const queries = metricQueries(segments);
  const series = await fetchSeries(cw, o.tag, queries, range, o.d);
  const due = await countDue(s3, out.bucketName, records, o.to, o.d);
  return { inputs: { records, queries, series, range, due }, outputs: out };
}

/** The same from a recorded launch (--recorded DIR): no AWS client, no stack outputs; --to defaults to when the metrics were read. */
function fromRecorded(o: {
  campaignId: string;
  tag: string;
  from?: number;
  to?: number;
  dir: string;
  stack: { stack?: string; outputs?: string; region?: string; bucket?: string; "sms-log-group"?: string };
}): Built {
  const given = (["stack", "outputs", "region", "bucket", "sms-log-group"] as const).find(
    (k) => o.stack[k] !== undefined,
  );
  if (given) throw new UsageError(`--${given} with --recorded: a recorded launch reads no stack (drop --${given})`);
  const shown = `--recorded ${o.dir}`;
  const { records, metrics } = readRecordedLaunch(o.dir, shown);
  const other = records.find((r) => r.campaignId !== o.campaignId);
  if (other) throw new UsageError(`${shown}: its launch is of campaign ${other.campaignId}, not ${o.campaignId}`);
  const to = o.to ?? Date.parse(metrics.to);
  if (o.from !== undefined && o.from >= to) fromNotBefore(o.from);
  const segments = segmentsOf(records, recordedSegments(metrics));
  const range = reportRange(records, to, o.from);
  const queries = metricQueries(segments);
  const series = recordedSeries(metrics, queries, range);
  return { inputs: { records, queries, series, range, due: recordedDue(records, to) } };
}

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
    state = await campaignStateWithHistory(
      d,
      { ddb: dynamodb(outputs.region as string | undefined), table },
      campaignId,
    );
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
