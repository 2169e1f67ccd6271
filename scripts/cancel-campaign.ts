/**
 * Cancels a campaign: stops its running fan-outs, deletes its schedule group, waits for the group to go. See USAGE.
 */
import { schedulerClient, sfnClient } from "./lib/aws/clients";
import { cancelCampaign, CancelReport, requireCampaign } from "./lib/aws/campaign-ops";
import { intFlag, Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { counted } from "../infra/rules/format";
import { requireOutputs } from "./lib/aws/stack-outputs";
import { deadlineFromFlag, outputsFromFlags, STACK_FLAGS, STACK_FLAGS_HELP, TIMEOUT_FLAG } from "./lib/cli/aws-flags";

const USAGE = `
Usage: cancel-campaign --campaign ID [--dry-run] [--timeout-seconds S] [--poll-seconds P] [--json]
                       (--stack NAME | --outputs FILE | ...)

Stops every running fan-out execution of the campaign, whatever its name (found by its input's campaign_id), so no
new schedule appears; reads the group again (a fan-out creates it first thing, maybe after the first read); deletes
its schedule group campaign-<ID> (and with it every pending schedule) in whatever state it is but DELETING; then
waits for the group to be gone, checking every --poll-seconds (default 5, at least 1), up to --timeout-seconds.
Only a group that GetScheduleGroup says does not exist counts as gone: while it is DELETING (or in any other state),
AWS may still fire some of its schedules, and the command exits 1 if it is still there at the time limit.
  --timeout-seconds S   the whole command's time limit, every AWS call included (default 60)
Nothing running and no group: "nothing to cancel", exit 0. --dry-run lists what it would stop and delete.

${STACK_FLAGS_HELP}

Exit codes: 0 cancelled (or nothing to cancel); 1 when any send of the campaign could still fire (the group still
there in any state, a fan-out not stopped, an AWS error or the time limit on the way), listing what is still there;
2 bad flags.
`;

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(
    argv,
    {
      campaign: { type: "string" },
      "dry-run": { type: "boolean", default: false },
      ...TIMEOUT_FLAG,
      "poll-seconds": { type: "string" },
      json: { type: "boolean", default: false },
      ...STACK_FLAGS,
    },
    USAGE,
  );
  const campaignId = requireCampaign(f.campaign);
  const outputs = requireOutputs(outputsFromFlags(f), ["stateMachineArn"], { stateMachineArn: "state-machine-arn" });
  const pollSeconds = intFlag("poll-seconds", f["poll-seconds"], 1, 60, 5);
  const deadline = deadlineFromFlag(f["timeout-seconds"], 60, (t) => io.err(`${t}\n`));
  const clients = { sfn: sfnClient(outputs.region), scheduler: schedulerClient(outputs.region) };
  const report = await cancelCampaign(deadline, clients, {
    campaignId,
    stateMachineArn: outputs.stateMachineArn,
    dryRun: f["dry-run"] as boolean,
    pollSeconds,
  }).finally(() => deadline.dispose());
  io.out(f.json ? JSON.stringify(report, null, 2) + "\n" : formatCancel(report));
  return report.stillThere.length || (report.dryRun && report.problems.length) ? 1 : 0;
}

function formatCancel(r: CancelReport): string {
  const lines: string[] = [];
  const problems = r.problems.map((p) => `  problem: ${p}`);
  if (r.nothingToCancel) lines.push(`Campaign ${r.campaign}: nothing to cancel (no running fan-out, no group ${r.group}).`);
  else if (r.dryRun) {
    const found = r.executionsFound;
    lines.push(
      `Campaign ${r.campaign} (dry run): would stop ${counted(found.length, "running fan-out")}${found.length ? `: ${found.join(", ")}` : ""}`,
    );
    lines.push(
      r.groupBefore && r.groupBefore !== "absent"
        ? `  and delete schedule group ${r.group} (${r.groupBefore}) with every pending schedule in it.`
        : r.groupBefore === "absent"
          ? `  (no schedule group ${r.group}).`
          : `  and delete schedule group ${r.group} (its state could not be read).`,
      ...problems,
    );
  } else {
    const stopped = r.executionsStopped;
    lines.push(`Campaign ${r.campaign}: stopped ${counted(stopped.length, "fan-out")}${stopped.length ? ` (${stopped.join(", ")})` : ""}.`);
    if (r.groupAfter === "deleted")
      lines.push(`  Schedule group ${r.group} deleted${r.stillThere.length ? "." : ": no send of this campaign remains."}`);
    else if (r.groupAfter === "absent") lines.push(`  No schedule group ${r.group} existed.`);
    if (r.stillThere.length) {
      lines.push("  NOT fully cancelled; what can still send:", ...r.stillThere.map((t) => `    - ${t}`), ...problems);
      lines.push("  Run cancel-campaign again (it is safe to repeat) to finish.");
    }
  }
  return lines.join("\n") + "\n";
}
