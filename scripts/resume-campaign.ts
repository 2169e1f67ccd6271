/**
 * Resumes a paused campaign: sets its state to live and counts the sends its pause held. See COMMAND (its --help).
 */
import { dynamodb, sqsClient } from "./lib/aws/clients";
import { resumeCampaign, ResumeReport } from "./lib/aws/campaign-pause";
import { runMain } from "./lib/cli/run";
import { counted } from "./lib/text/format";
import { requireLedgerTable, requireOutputs } from "./lib/aws/stack-outputs";
import { reportingStackFlags } from "./lib/cli/aws-flags";
import { CAMPAIGN_FLAG, dryRunFlag } from "./lib/cli/common-flags";
import { stackCommand } from "./lib/cli/stack-command";
import { describeState } from "./lib/cli/campaign-state-text";

const DEFAULT_TIMEOUT_SECONDS = 60;

const FLAGS = {
  ...CAMPAIGN_FLAG,
  ...dryRunFlag("count the held sends, write no state"),
  ...reportingStackFlags({ seconds: DEFAULT_TIMEOUT_SECONDS }, "dlq-url"),
} as const;

export const { COMMAND, main } = stackCommand(
  {
    script: "resume-campaign",
    usage: ["--campaign ID [--dry-run] [--json] [flags] (--stack NAME | --outputs FILE)"],
    summary: `Sets the campaign's state to live in the stack's ledger (stack output ledgerTableName), then counts the sends its
pause held: the dead-letter queue's pointers of this campaign with outcome skipped and reason paused (read with a short
visibility timeout, then made visible again; nothing deleted). \`redrive --campaign ID\` sends them, each as the campaign's
missed-time policy says (their time has passed). A cancelled campaign cannot be resumed.`,
    flags: FLAGS,
    changesAws: true,
  },
  async ({ f, outputs, deadline, campaignId: campaign }) => {
    const campaignId = campaign();
    const o = requireOutputs(outputs(), ["deadLetterQueueUrl"], { deadLetterQueueUrl: "dlq-url" });
    const clients = { ledger: { ddb: dynamodb(o.region), table: requireLedgerTable(o) }, sqs: sqsClient(o.region) };
    return resumeCampaign(deadline, clients, {
      campaignId,
      deadLetterQueueUrl: o.deadLetterQueueUrl,
      dryRun: f["dry-run"],
    });
  },
  {
    text: (report) => formatResume(report),
    exitCode: (r) =>
      r.dryRun && r.before.state === "cancelled" ? 1 : r.held.complete && !r.held.problems.length ? 0 : 1,
  },
);

function formatResume(r: ResumeReport): string {
  const lines = [firstLine(r)];
  const h = r.held;
  const redrive = `\`npm run -s redrive -- --campaign ${r.campaign}\``;
  const heldText = `${counted(h.sends, "held send")} (${counted(h.recipients, "recipient")})`;
  if (h.complete)
    lines.push(
      h.sends
        ? `  ${heldText} ${h.sends === 1 ? "waits" : "wait"} in the dead-letter queue: ${redrive} sends them.`
        : "  No held send of it in the dead-letter queue.",
    );
  else lines.push(`  At least ${heldText} wait in the dead-letter queue (not read to the end): ${redrive} sends them.`);
  if (h.sends) lines.push(...MISSED_HINT);
  lines.push(...h.problems.map((p) => `  problem: ${p}`));
  return lines.join("\n") + "\n";
}

/** What redrive does with them: the sender held each when it fired, so every one's time has passed. */
const MISSED_HINT = [
  "  Their time has passed: each follows the campaign's missed-time policy (skip: not sent; send-now: sent if late by",
  "  less than the grace; next-day: at its local time on the first later day), or redrive's --missed.",
];

function firstLine(r: ResumeReport): string {
  if (!r.written)
    return r.before.state === "cancelled"
      ? `Campaign ${r.campaign} (dry run): cannot be resumed: it is ${describeState(r.before)}.`
      : `Campaign ${r.campaign} (dry run): would set its state to live; now ${describeState(r.before)}.`;
  if (r.before.state === "live")
    return `Campaign ${r.campaign}: live (it was not paused; written at ${r.written.updatedAt}).`;
  return `Campaign ${r.campaign}: live again at ${r.written.updatedAt}; it was ${describeState(r.before)}.`;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
