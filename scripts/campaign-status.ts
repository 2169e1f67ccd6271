/**
 * What is pending for a campaign: its schedules, its fan-outs, the dead-letter queue. See COMMAND (its --help).
 */
import { dynamodb, schedulerClient, sfnClient, sqsClient } from "./lib/aws/clients";
import { campaignStatus, StatusReport } from "./lib/aws/campaign-ops/status";
import { campaignStateOrError, CampaignStateRecord } from "./lib/aws/campaign-state";
import { describeState } from "./lib/cli/campaign-state-text";
import { runMain } from "./lib/cli/run";
import { count, plural } from "./lib/text/format";
import { reportingStackFlags } from "./lib/cli/aws-flags";
import { CAMPAIGN_FLAG, nowFlag } from "./lib/cli/common-flags";
import { int } from "./lib/cli/parsers";
import { stackCommand } from "./lib/cli/stack-command";

const FLAGS = {
  ...CAMPAIGN_FLAG,
  sample: {
    type: "string",
    value: "N",
    parse: int(1, 100_000),
    help: "GetSchedule on every schedule up to N, else on a random sample of N, scaled up",
    default: 500,
  },
  ...nowFlag("next occurrences are counted from it"),
  ...reportingStackFlags({ seconds: 300 }, "state-machine-arn", "dlq-url"),
} as const;

export const { COMMAND, main } = stackCommand(
  {
    script: "campaign-status",
    usage: ["--campaign ID [--sample N] [--json] [flags] (--stack NAME | --outputs FILE)"],
    summary: `What is pending: the group campaign-<ID> and its schedules by state (every page); when the next sends fall, per UTC
hour (recurring schedules at their next occurrence); the campaign's fan-out executions with their Map Run counts (needs
stateMachineArn); the dead-letter queue's depth (needs deadLetterQueueUrl; shared by every campaign of the stack); the campaign's state
(live, paused or cancelled, with its reason and time; needs ledgerTableName).`,
    flags: FLAGS,
    changesAws: false,
  },
  async ({ f, outputs, deadline, campaignId: campaign }): Promise<CampaignStatus> => {
    const campaignId = campaign();
    const o = outputs();
    const clients = { scheduler: schedulerClient(o.region), sfn: sfnClient(o.region), sqs: sqsClient(o.region) };
    const ledger = o.ledgerTableName && { ddb: dynamodb(o.region), table: o.ledgerTableName };
    const status = await campaignStatus(deadline, clients, {
      campaignId,
      stateMachineArn: o.stateMachineArn,
      deadLetterQueueUrl: o.deadLetterQueueUrl,
      sampleSize: f.sample,
      now: f.now ?? Date.now(),
    });
    return { ...status, campaignState: ledger ? await campaignStateOrError(deadline, ledger, campaignId) : null };
  },
  {
    text: (report) => formatStatus(report),
    exitCode: (report) => (failed(report.deadLetterQueue) || failed(report.campaignState) ? 1 : 0),
  },
);

const failed = (part: object | null) => Boolean(part && "error" in part);

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

if (require.main === module) runMain(() => main(process.argv.slice(2)));
