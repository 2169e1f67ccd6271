/**
 * Cancels a campaign: stops its running fan-outs, deletes its schedule group, waits for the group to go. See USAGE.
 */
import { schedulerClient, sfnClient } from "./lib/aws/clients";
import { cancelCampaign, requireCampaign } from "./lib/aws/campaign-ops";
import { intFlag, Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { counted, plural } from "./lib/cli/format";
import { outputsFromFlags, requireOutputs, STACK_FLAGS, STACK_FLAGS_HELP } from "./lib/aws/stack-outputs";

const USAGE = `
Usage: cancel-campaign --campaign ID [--dry-run] [--timeout-seconds S] [--json] (--stack NAME | --outputs FILE | ...)

Stops every running fan-out execution of the campaign (so no new schedule appears), deletes its schedule group
campaign-<ID> (and with it every pending schedule), then waits up to --timeout-seconds (default 60) for the group to
be gone. While a group is DELETING, AWS is still removing its schedules and some may still fire.
Nothing running and no group: "nothing to cancel", exit 0. --dry-run lists what it would stop and delete.

${STACK_FLAGS_HELP}

Exit codes: 0 cancelled (or nothing to cancel), 1 AWS error or the group still DELETING at the timeout, 2 bad flags.
`;

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(
    argv,
    {
      campaign: { type: "string" },
      "dry-run": { type: "boolean", default: false },
      "timeout-seconds": { type: "string" },
      "poll-seconds": { type: "string" },
      json: { type: "boolean", default: false },
      ...STACK_FLAGS,
    },
    USAGE,
  );
  const campaignId = requireCampaign(f.campaign);
  const outputs = requireOutputs(outputsFromFlags(f), ["stateMachineArn"], { stateMachineArn: "state-machine-arn" });
  const clients = { sfn: sfnClient(outputs.region), scheduler: schedulerClient(outputs.region) };
  const report = await cancelCampaign(
    clients,
    {
      campaignId,
      stateMachineArn: outputs.stateMachineArn,
      dryRun: f["dry-run"] as boolean,
      timeoutSeconds: intFlag("timeout-seconds", f["timeout-seconds"], 0, 3600, 60),
      pollSeconds: intFlag("poll-seconds", f["poll-seconds"], 0, 60, 5),
    },
    (t) => io.err(`${t}\n`),
  );
  const stillDeleting = report.groupAfter === "DELETING";
  if (f.json) io.out(JSON.stringify(report, null, 2) + "\n");
  else {
    const lines: string[] = [];
    if (report.nothingToCancel) lines.push(`Campaign ${campaignId}: nothing to cancel (no running fan-out, no group ${report.group}).`);
    else if (report.dryRun) {
      lines.push(
        `Campaign ${campaignId} (dry run): would stop ${report.executionsStopped.length} running ${plural(report.executionsStopped.length, "fan-out")}${report.executionsStopped.length ? `: ${report.executionsStopped.join(", ")}` : ""}`,
      );
      lines.push(
        report.groupBefore
          ? `  and delete schedule group ${report.group} (${report.groupBefore}) with every pending schedule in it.`
          : `  (no schedule group ${report.group}).`,
      );
    } else {
      lines.push(
        `Campaign ${campaignId}: stopped ${counted(report.executionsStopped.length, "fan-out")}${report.executionsStopped.length ? ` (${report.executionsStopped.join(", ")})` : ""}.`,
      );
      if (report.groupAfter === "deleted") lines.push(`  Schedule group ${report.group} deleted: no send of this campaign remains.`);
      else if (report.groupAfter === "absent") lines.push(`  No schedule group ${report.group} existed.`);
      else
        lines.push(
          `  Schedule group ${report.group} is still ${report.groupAfter}: AWS is deleting its schedules, and some may still fire until it is gone. Run again to check.`,
        );
    }
    io.out(lines.join("\n") + "\n");
  }
  return stillDeleting && !report.dryRun ? 1 : 0;
}
