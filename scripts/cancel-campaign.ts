/**
 * Cancels a campaign: stops its running fan-outs, deletes its schedule group, waits for the group to go. See COMMAND (its --help).
 */
import { schedulerClient, sfnClient } from "./lib/aws/clients";
import { cancelCampaign, CancelReport, requireCampaign } from "./lib/aws/campaign-ops";
import { intFlag, Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { counted } from "../infra/rules/format";
import { requireOutputs } from "./lib/aws/stack-outputs";
import { deadlineFromFlag, outputsFromFlags, stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { Command } from "./lib/cli/flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";

const FLAGS = {
  campaign: { type: "string", value: "ID", help: "the campaign" },
  "dry-run": { type: "boolean", help: "list what it would stop and delete" },
  "poll-seconds": {
    type: "string",
    value: "P",
    help: "how often it checks that the group is gone (1-60)",
    default: "5",
  },
  json: { type: "boolean", help: "the report as JSON" },
  ...timeoutFlag(60),
  ...stackFlags("state-machine-arn"),
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "cancel-campaign",
  usage: ["--campaign ID [--dry-run] [--json] [flags] (--stack NAME | --outputs FILE)"],
  summary: `Stops every running fan-out of the campaign (found by its input's campaign_id), reads the group again, deletes the
schedule group campaign-<ID> (and every pending schedule in it) in any state but DELETING, then waits until
GetScheduleGroup says it does not exist: while DELETING, AWS may still fire some of its schedules.`,
  flags: FLAGS,
  exitCodes: EXIT_CODES["cancel-campaign"],
  reference: "docs/operating.md",
};

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(argv, COMMAND);
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
  if (r.nothingToCancel)
    lines.push(`Campaign ${r.campaign}: nothing to cancel (no running fan-out, no group ${r.group}).`);
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
    lines.push(
      `Campaign ${r.campaign}: stopped ${counted(stopped.length, "fan-out")}${stopped.length ? ` (${stopped.join(", ")})` : ""}.`,
    );
    if (r.groupAfter === "deleted")
      lines.push(
        `  Schedule group ${r.group} deleted${r.stillThere.length ? "." : ": no send of this campaign remains."}`,
      );
    else if (r.groupAfter === "absent") lines.push(`  No schedule group ${r.group} existed.`);
    if (r.stillThere.length) {
      lines.push("  NOT fully cancelled; what can still send:", ...r.stillThere.map((t) => `    - ${t}`), ...problems);
      lines.push("  Run cancel-campaign again (it is safe to repeat) to finish.");
    }
  }
  return lines.join("\n") + "\n";
}
