/**
 * What is pending for a campaign: its schedules, its fan-outs, the dead-letter queue. See COMMAND (its --help).
 */
import { dynamodb, schedulerClient, sfnClient, sqsClient } from "./lib/aws/clients";
import { campaignStatus, StatusReport } from "./lib/aws/campaign-ops/status";
import { requireCampaign } from "./lib/cli/campaign-id-flag";
import { campaignStateOrError, CampaignStateRecord } from "./lib/aws/campaign-state";
import { describeState } from "./lib/cli/campaign-state-text";
import { nowFromFlag } from "./lib/cli/campaign-flags";
import { intFlag, Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { count, plural } from "./lib/text/format";
import { deadlineFromFlag, outputsFromFlags, stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { Command } from "./lib/cli/flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";

const FLAGS = {
  campaign: { type: "string", value: "ID", help: "the campaign" },
  sample: {
    type: "string",
    value: "N",
    help: "GetSchedule on every schedule up to N, else on a random sample of N, scaled up",
    default: "500",
  },
  now: {
    type: "string",
    value: "ISO",
    help: "count next occurrences from this instant, for reproducible runs",
    default: "now",
  },
  json: { type: "boolean", help: "the report as JSON" },
  ...timeoutFlag(300),
  ...stackFlags("state-machine-arn", "dlq-url"),
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "campaign-status",
  usage: ["--campaign ID [--sample N] [--json] [flags] (--stack NAME | --outputs FILE)"],
  summary: `What is pending: the group campaign-<ID> and its schedules by state (every page); when the next sends fall, per UTC
hour (recurring schedules at their next occurrence); the campaign's fan-out executions with their Map Run counts (needs
stateMachineArn); the dead-letter queue's depth (needs deadLetterQueueUrl; shared by every campaign of the stack); the campaign's state
(live, paused or cancelled, with its reason and time; needs ledgerTableName).`,
  flags: FLAGS,
  exitCodes: EXIT_CODES["campaign-status"],
  reference: "docs/operating.md",
};

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(argv, COMMAND);
  const campaignId = requireCampaign(f.campaign);
  const outputs = outputsFromFlags(f);
  const sampleSize = intFlag("sample", f.sample, 1, 100_000, 500);
  const deadline = deadlineFromFlag(f["timeout-seconds"], 300, (t) => io.err(`${t}\n`));
  const clients = {
    scheduler: schedulerClient(outputs.region),
    sfn: sfnClient(outputs.region),
    sqs: sqsClient(outputs.region),
  };
  const ledger = outputs.ledgerTableName && { ddb: dynamodb(outputs.region), table: outputs.ledgerTableName };
  let report: CampaignStatus;
  try {
    const status = await campaignStatus(deadline, clients, {
      campaignId,
      stateMachineArn: outputs.stateMachineArn,
      deadLetterQueueUrl: outputs.deadLetterQueueUrl,
      sampleSize,
      now: nowFromFlag(f.now),
    });
    report = { ...status, campaignState: ledger ? await campaignStateOrError(deadline, ledger, campaignId) : null };
  } finally {
    deadline.dispose();
  }
  io.out(f.json ? JSON.stringify(report, null, 2) + "\n" : formatStatus(report));
  const failed = (part: object | null) => Boolean(part && "error" in part);
  return failed(report.deadLetterQueue) || failed(report.campaignState) ? 1 : 0;
}

/** The status with the campaign's state: null without a ledger (a stack that predates it), or why it could not be read. */
type CampaignStatus = StatusReport & { campaignState: CampaignStateRecord | { error: string } | null };

function formatStatus(r: CampaignStatus): string {
  const lines = [`Campaign ${r.campaign}: group ${r.group.name} ${r.group.state ?? "does not exist"}`];
  const state = r.campaignState;
  if (state && "error" in state) lines.push(`  state: could not be read: ${state.error}`);
  else if (state) lines.push(`  state: ${describeState(state)}`);
  else lines.push("  state: not known (no ledgerTableName output: the stack predates the occurrence ledger)");
  const states = Object.entries(r.schedules.byState)
    .sort((a, b) => b[1] - a[1])
    .map(([s, c]) => `${count(c)} ${s}`)
    .join(", ");
  lines.push(`  pending schedules: ${count(r.schedules.total)}${states ? ` (${states})` : ""}`);
  if (r.nextSends.byHour.length) {
    const recurring = r.nextSends.recurring
      ? `; ${count(r.nextSends.recurring)} recurring, each at its next occurrence`
      : "";
    lines.push(
      `  next sends per UTC hour${r.nextSends.estimated ? ` (estimated from ${count(r.nextSends.sampled)} sampled)` : ""}${recurring}:`,
    );
    const widest = Math.max(...r.nextSends.byHour.map((h) => h.count));
    for (const h of r.nextSends.byHour)
      lines.push(
        `    ${h.hour.padEnd(17)} ${count(h.count).padStart(10)}  ${"█".repeat(Math.max(1, Math.round((h.count / widest) * 30)))}`,
      );
  }
  if (r.unknownZones.count) {
    const examples = r.unknownZones.examples.map((e) => `${e.schedule} in "${e.zone}"`).join(", ");
    lines.push(
      `  ${count(r.unknownZones.count)} sampled ${plural(r.unknownZones.count, "schedule is", "schedules are")} in a time zone this Node does not know (${examples}): not counted above`,
    );
  }
  if (r.executions.length) {
    lines.push("  fan-outs:");
    for (const e of r.executions) {
      const items = e.items
        ? `${count(e.items.succeeded)}/${count(e.items.total)} rows scheduled, ${count(e.items.failed)} failed, ${count(e.items.pending + e.items.running)} to go`
        : "no Map Run";
      lines.push(`    ${e.name}  ${e.status}  ${items}`);
    }
  } else lines.push("  fan-outs: none found");
  const dlq = r.deadLetterQueue;
  if (dlq && "error" in dlq) lines.push(`  dead-letter queue (all campaigns): could not be read: ${dlq.error}`);
  else if (dlq)
    lines.push(
      `  dead-letter queue (all campaigns): ${count(dlq.visible)} messages waiting, ${count(dlq.inFlight)} in flight`,
    );
  return lines.join("\n") + "\n";
}
