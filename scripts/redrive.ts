/**
 * Re-sends the failed sends of the dead-letter queue, each as a one-time schedule in its campaign's group. See USAGE.
 */
import { schedulerClient, sqsClient } from "./lib/aws/clients";
import { requireCampaign } from "./lib/aws/campaign-ops";
import { redrive, RedriveReport } from "./lib/aws/redrive";
import { requireOutputs, StackOutputs } from "./lib/aws/stack-outputs";
import { counted } from "../infra/rules/format";
import { Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { UsageError } from "../infra/rules/errors";
import { deadlineFromFlag, outputsFromFlags, STACK_FLAGS, STACK_FLAGS_HELP, TIMEOUT_FLAG } from "./lib/cli/aws-flags";

const USAGE = `
Usage: redrive (--campaign ID | --all) [--dry-run] [--json] [--timeout-seconds S] (--stack NAME | --outputs FILE | ...)

Reads the stack's dead-letter queue (deadLetterQueueUrl, where Scheduler and the send gate put a send that failed)
until it is empty and re-sends each failed send of the campaign (or of every campaign, --all) as a one-time schedule
in its campaign's group campaign-<ID> (so cancel-campaign still stops it), 2 minutes from when it is created (up to the
next whole minute, written in UTC), with the original's target (SES, or the send gate with a frequency cap), the
stack's scheduler role and this queue as its dead letter.
  The schedule is named <original>-r<N> (N = 1, or the next free one; a redrive of a redrive counts on) and its
  Description names the send (schedule ARN and scheduled time). A message is deleted only once its schedule exists, so
  a second run finds the schedule there (ConflictException, same Description) and sends nothing twice. Redriven
  schedules stay in the group after they fire, for that check; the group's own end (cancel-campaign, or its
  housekeeping after the campaign) removes them.
  Left in the queue, listed with the reason: messages it cannot read or rebuild, a group that is gone (a cancelled or
  finished campaign is not brought back), a CreateSchedule that fails. Every message read and not deleted is made
  visible again at the end. Not read: the journeys' own queue (trigger events, not sends).
  --dry-run   reads the queue and lists what it would create (GetSchedule only): no schedule, no message deleted.
  --timeout-seconds S   the whole command's time limit, every AWS call included (default 300).

${STACK_FLAGS_HELP}

Exit codes: 0 every message of the campaign(s) redriven (or none there); 1 anything left, or an AWS error or the time
limit on the way; 2 bad flags or stack outputs.
`;

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(
    argv,
    {
      campaign: { type: "string" },
      all: { type: "boolean", default: false },
      "dry-run": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      ...TIMEOUT_FLAG,
      ...STACK_FLAGS,
    },
    USAGE,
  );
  if ((f.campaign === undefined) === !f.all) throw new UsageError("give --campaign ID (one campaign's sends) or --all (every campaign's)");
  const campaignId = f.campaign === undefined ? undefined : requireCampaign(f.campaign);
  const outputs = requireOutputs(outputsFromFlags(f), ["deadLetterQueueUrl", "schedulerRoleArn"], { deadLetterQueueUrl: "dlq-url" });
  const partition = /^arn:([a-z-]+):iam::/.exec(outputs.schedulerRoleArn)?.[1];
  if (!partition) throw new UsageError(`stack output schedulerRoleArn ${JSON.stringify(outputs.schedulerRoleArn)}: not an IAM role ARN`);
  const sendGateArn = (outputs as StackOutputs & { sendGateArn?: unknown }).sendGateArn;
  if (sendGateArn !== undefined && typeof sendGateArn !== "string")
    throw new UsageError(`stack output sendGateArn is ${JSON.stringify(sendGateArn)}: expected a string`);
  const deadline = deadlineFromFlag(f["timeout-seconds"], 300, (t) => io.err(`${t}\n`));
  const report = await redrive(
    deadline,
    { sqs: sqsClient(outputs.region), scheduler: schedulerClient(outputs.region) },
    {
      queueUrl: outputs.deadLetterQueueUrl,
      campaignId,
      dryRun: f["dry-run"] as boolean,
      schedulerRoleArn: outputs.schedulerRoleArn,
      targets: { partition, sendGateArn: sendGateArn || undefined },
      windowMinutes: outputs.defaultWindowMinutes,
    },
  ).finally(() => deadline.dispose());
  io.out(f.json ? JSON.stringify(report, null, 2) + "\n" : formatRedrive(report));
  return report.left.length || report.problems.length ? 1 : 0;
}

function formatRedrive(r: RedriveReport): string {
  const whose = r.campaign === null ? "every campaign" : `campaign ${r.campaign}`;
  const would = r.dryRun ? " (dry run: nothing created, nothing deleted)" : "";
  const lines = [`Redrive of ${whose} from ${r.queue}${would}: ${counted(r.received, "message")} read.`];
  const verb = r.dryRun ? "would redrive" : "redriven";
  lines.push(
    `  ${verb}: ${r.redriven.length}`,
    ...r.redriven.map((s) => `    ${s.group}/${s.schedule} at ${s.at} (was ${s.original}: ${s.error})`),
  );
  if (r.alreadyRedriven.length)
    lines.push(
      `  already redriven by an earlier run${r.dryRun ? "" : " (message deleted)"}: ${r.alreadyRedriven.length}`,
      ...r.alreadyRedriven.map((s) => `    ${s.group}/${s.schedule} (was ${s.original})`),
    );
  if (r.otherCampaigns) lines.push(`  other campaigns' messages, not touched: ${r.otherCampaigns}`);
  if (r.left.length)
    lines.push(
      `  LEFT in the queue: ${r.left.length}`,
      ...r.left.map((m) => `    - ${m.messageId}${m.campaign ? ` (${m.campaign})` : ""}: ${m.reason}`),
    );
  lines.push(...r.problems.map((p) => `  problem: ${p}`));
  if (r.left.length || r.problems.length) lines.push("  Fix what is named and run redrive again (it is safe to repeat).");
  return lines.join("\n") + "\n";
}
