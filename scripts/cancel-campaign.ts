/**
 * Cancels a campaign: sets its state to cancelled, stops its running fan-outs, deletes its schedule group, waits for
 * the group to go and for the sends already under way to end. See COMMAND (its --help).
 */
import { cloudWatchClient, dynamodb, schedulerClient, sfnClient } from "./lib/aws/clients";
import { cancelCampaignAndSends, StateCancelReport } from "./lib/aws/campaign-cancel";
import { runMain } from "./lib/cli/run";
import { counted } from "./lib/text/format";
import { requireLedgerTable, requireOutputs } from "./lib/aws/stack-outputs";
import { reportingStackFlags } from "./lib/cli/aws-flags";
import { CAMPAIGN_FLAG, dryRunFlag } from "./lib/cli/common-flags";
import { describeState, reasonFlag } from "./lib/cli/campaign-state-text";
import { int } from "./lib/cli/parsers";
import { stackCommand } from "./lib/cli/stack-command";

/** The default limit: the wait after the state write (49 s) with room for the fan-outs and the group. */
const DEFAULT_TIMEOUT_SECONDS = 120;

const FLAGS = {
  ...CAMPAIGN_FLAG,
  ...reasonFlag("why it is cancelled"),
  ...dryRunFlag("say what it would do: no state written, nothing stopped or deleted"),
  "poll-seconds": {
    type: "string",
    value: "P",
    parse: int(1, 60),
    help: "how often it checks, in seconds",
    note: "that the group is gone",
    default: 5,
  },
  ...reportingStackFlags({ seconds: DEFAULT_TIMEOUT_SECONDS }, "state-machine-arn"),
} as const;

export const { COMMAND, main } = stackCommand(
  {
    script: "cancel-campaign",
    usage: ["--campaign ID [--reason TEXT] [--dry-run] [--json] [flags] (--stack NAME | --outputs FILE)"],
    summary: `Sets the campaign's state to cancelled first (the sender reads it before every SES call, so sends already under way
stop too), then stops every running fan-out of the campaign (found by its input's campaign_id), reads the group again,
deletes the schedule group campaign-<ID> (and every pending schedule in it) in any state but DELETING, waits until
GetScheduleGroup says it does not exist, and waits out the sender's longest time from a state read to its last SES
call, from the state write. Once the state is cancelled it deletes the campaign's two guardrail alarms (stack output
guardrailAlarmPrefix; none without it). Exit 0 only when nothing of the campaign can send any more and its alarms are
deleted. Needs stack output ledgerTableName.`,
    flags: FLAGS,
    changesAws: true,
  },
  async ({ f, outputs, deadline, campaignId: campaign }) => {
    const campaignId = campaign();
    const o = requireOutputs(outputs(), ["stateMachineArn"], { stateMachineArn: "state-machine-arn" });
    const clients = {
      sfn: sfnClient(o.region),
      scheduler: schedulerClient(o.region),
      ledger: { ddb: dynamodb(o.region), table: requireLedgerTable(o) },
      cloudWatch: cloudWatchClient(o.region),
    };
    return cancelCampaignAndSends(deadline, clients, {
      campaignId,
      stateMachineArn: o.stateMachineArn,
      dryRun: f["dry-run"],
      pollSeconds: f["poll-seconds"],
      reason: f.reason,
      guardrailAlarmPrefix: o.guardrailAlarmPrefix,
    });
  },
  {
    text: (report) => formatCancel(report),
    exitCode: (r) => (r.stillThere.length || (r.dryRun && r.problems.length) || r.guardrailAlarms?.problem ? 1 : 0),
  },
);

function formatCancel(r: StateCancelReport): string {
  const lines = r.dryRun ? formatDryRun(r) : formatDone(r);
  if (r.stillThere.length)
    lines.push(
      "  NOT fully cancelled; what can still send:",
      ...r.stillThere.map((t) => `    - ${t}`),
      ...r.problems.map((p) => `  problem: ${p}`),
      r.stillThere.length === 1 && r.state.sendsEndBy && !r.state.waited
        ? `  Run cancel-campaign again (it is safe to repeat) with a --timeout-seconds that covers its ${r.state.waitSeconds} s wait, or wait until ${r.state.sendsEndBy}.`
        : "  Run cancel-campaign again (it is safe to repeat) to finish.",
    );
  else if (r.dryRun || r.guardrailAlarms?.problem) lines.push(...r.problems.map((p) => `  problem: ${p}`));
  return lines.join("\n") + "\n";
}

function formatDryRun(r: StateCancelReport): string[] {
  const found = r.executionsFound;
  const now = r.state.before ? `now ${describeState(r.state.before)}` : "its state could not be read";
  const group =
    r.groupBefore === "absent"
      ? `  (no schedule group ${r.group}),`
      : `  and delete schedule group ${r.group} (${r.groupBefore ?? "its state could not be read"}) with every pending schedule in it,`;
  return [
    `Campaign ${r.campaign} (dry run): would set its state to cancelled (${now}), stop ${counted(found.length, "running fan-out")}${found.length ? `: ${found.join(", ")}` : ""}`,
    group,
    `  then wait ${r.state.waitSeconds} s for the sends already under way.`,
    ...(r.guardrailAlarms ? [`  It would delete guardrail alarms ${r.guardrailAlarms.names.join(" and ")}.`] : []),
  ];
}

function stateLine(r: StateCancelReport): string {
  const s = r.state;
  if (s.alreadyCancelled)
    return `Campaign ${r.campaign}: already ${s.before ? describeState(s.before) : "cancelled"}; its state is kept as the first cancel wrote it.`;
  if (s.cancelledAt)
    return `Campaign ${r.campaign}: state cancelled at ${s.cancelledAt} (was ${s.before ? describeState(s.before) : "unknown"}).`;
  return `Campaign ${r.campaign}: its state could not be set to cancelled.`;
}

function formatDone(r: StateCancelReport): string[] {
  const lines = [stateLine(r)];
  const stopped = r.executionsStopped;
  if (r.nothingToCancel) lines.push(`  No running fan-out and no schedule group ${r.group}.`);
  else
    lines.push(`  Stopped ${counted(stopped.length, "fan-out")}${stopped.length ? ` (${stopped.join(", ")})` : ""}.`);
  if (r.groupAfter === "deleted") lines.push(`  Schedule group ${r.group} deleted.`);
  else if (r.groupAfter === "absent" && !r.nothingToCancel) lines.push(`  No schedule group ${r.group} existed.`);
  if (r.guardrailAlarms?.deleted) lines.push(`  Guardrail alarms ${r.guardrailAlarms.names.join(" and ")} deleted.`);
  if (!r.stillThere.length)
    lines.push(
      `  Nothing of campaign ${r.campaign} can send any more since ${r.state.sendsEndBy}: the sender reads the campaign's state before every SES call, and ${r.state.waitSeconds} s (its longest time from a read to the end of an SES call, plus a margin) have passed since the state was written.`,
    );
  return lines;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
