/**
 * Pauses a campaign: sets its state to paused, then waits until no send that read it live can still be under way.
 * See COMMAND (its --help).
 */
import { dynamodb } from "./lib/aws/clients";
import { pauseCampaign, PauseReport } from "./lib/aws/campaign-pause";
import { runMain } from "./lib/cli/run";
import { requireLedgerTable } from "./lib/aws/stack-outputs";
import { reportingStackFlags } from "./lib/cli/aws-flags";
import { CAMPAIGN_FLAG, dryRunFlag } from "./lib/cli/common-flags";
import { describeState, reasonFlag } from "./lib/cli/campaign-state-text";
import { stackCommand } from "./lib/cli/stack-command";

/** The default limit: the wait after the state write (49 s) and the write itself. */
const DEFAULT_TIMEOUT_SECONDS = 90;

const FLAGS = {
  ...CAMPAIGN_FLAG,
  ...reasonFlag("why it is paused"),
  ...dryRunFlag("say what it would do: no state written"),
  ...reportingStackFlags({ seconds: DEFAULT_TIMEOUT_SECONDS }),
} as const;

export const { COMMAND, main } = stackCommand(
  {
    script: "pause-campaign",
    usage: ["--campaign ID [--reason TEXT] [--dry-run] [--json] [flags] (--stack NAME | --outputs FILE)"],
    summary: `Sets the campaign's state to paused in the stack's ledger (stack output ledgerTableName), then waits the sender's
longest time from a state read to the end of an SES call, so that no send that read the campaign live is still under
way. Its schedules keep firing: the sender holds each send in the dead-letter queue (skipped: paused) until
resume-campaign and redrive. A cancelled campaign cannot be paused.`,
    flags: FLAGS,
    changesAws: true,
  },
  async ({ f, outputs, deadline, campaignId: campaign }) => {
    const campaignId = campaign();
    const o = outputs();
    const ledger = { ddb: dynamodb(o.region), table: requireLedgerTable(o) };
    return pauseCampaign(deadline, ledger, { campaignId, reason: f.reason, dryRun: f["dry-run"] });
  },
  {
    text: (report, { deadline }) => formatPause(report, deadline.seconds),
    exitCode: (report) => (report.dryRun || report.waited ? 0 : 1),
  },
);

function formatPause(r: PauseReport, limitSeconds: number): string {
  if (!r.written)
    return `Campaign ${r.campaign} (dry run): would set its state to paused (now ${describeState(r.before)}), then wait ${r.waitSeconds} s for the sends already under way.\n`;
  const lines = [`Campaign ${r.campaign}: ${describeAt(r.written)}.`];
  if (r.waited)
    lines.push(
      `  No send of ${r.campaign} leaves until resume-campaign: sends already under way ended by ${r.sendsEndBy}.`,
    );
  else
    lines.push(
      `  NOT yet held: sends that read the state before the pause may still be under way until ${r.sendsEndBy} (the wait of ${r.waitSeconds} s does not fit in the time limit of ${limitSeconds} s).`,
    );
  lines.push(
    "  Its schedules keep firing; the sender holds each send in the dead-letter queue for redrive after resume.",
  );
  return lines.join("\n") + "\n";
}

/** `paused at <ISO> (reason: …)`. */
const describeAt = (s: PauseReport["before"]) =>
  `${s.state} at ${s.updatedAt}${s.reason ? ` (reason: ${s.reason})` : ""}`;

if (require.main === module) runMain(() => main(process.argv.slice(2)));
