/**
 * Pauses a campaign: sets its state to paused, then waits until no send that read it live can still be under way.
 * See COMMAND (its --help).
 */
import { dynamodb } from "./lib/aws/clients";
import { requireCampaign } from "./lib/cli/campaign-id-flag";
import { pauseCampaign, PauseReport } from "./lib/aws/campaign-pause";
import { Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { requireLedgerTable } from "./lib/aws/stack-outputs";
import { deadlineFromFlag, outputsFromFlags, stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { Command } from "./lib/cli/flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";
import { describeState, reasonFlag, reasonFromFlag } from "./lib/cli/campaign-state-text";

/** The default limit: the wait after the state write (49 s) and the write itself. */
const DEFAULT_TIMEOUT_SECONDS = 90;

const FLAGS = {
  campaign: { type: "string", value: "ID", help: "the campaign" },
  ...reasonFlag("why it is paused, kept with its state (campaign-status shows it)"),
  "dry-run": { type: "boolean", help: "say what it would do: no state written" },
  json: { type: "boolean", help: "the report as JSON" },
  ...timeoutFlag(DEFAULT_TIMEOUT_SECONDS),
  ...stackFlags(),
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "pause-campaign",
  usage: ["--campaign ID [--reason TEXT] [--dry-run] [--json] [flags] (--stack NAME | --outputs FILE)"],
  summary: `Sets the campaign's state to paused in the stack's ledger (stack output ledgerTableName), then waits the sender's
longest time from a state read to the end of an SES call, so that no send that read the campaign live is still under
way. Its schedules keep firing: the sender holds each send in the dead-letter queue (skipped: paused) until
resume-campaign and redrive. A cancelled campaign cannot be paused.`,
  flags: FLAGS,
  exitCodes: EXIT_CODES["pause-campaign"],
  reference: "docs/operating.md",
};

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(argv, COMMAND);
  const campaignId = requireCampaign(f.campaign);
  const outputs = outputsFromFlags(f);
  const table = requireLedgerTable(outputs);
  const reason = reasonFromFlag(f.reason);
  const deadline = deadlineFromFlag(f["timeout-seconds"], DEFAULT_TIMEOUT_SECONDS, (t) => io.err(`${t}\n`));
  const report = await pauseCampaign(
    deadline,
    { ddb: dynamodb(outputs.region), table },
    { campaignId, reason, dryRun: f["dry-run"] as boolean },
  ).finally(() => deadline.dispose());
  io.out(f.json ? JSON.stringify(report, null, 2) + "\n" : formatPause(report, deadline.seconds));
  return report.dryRun || report.waited ? 0 : 1;
}

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
