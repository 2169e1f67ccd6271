/**
 * Re-sends the failed sends of the dead-letter queue, each as a one-time schedule in its campaign's group. See COMMAND (its --help).
 */
import { schedulerClient, sqsClient } from "./lib/aws/clients";
import { requireCampaign } from "./lib/aws/campaign-ops";
import { redrive, RedriveReport } from "./lib/aws/redrive";
import { requireOutputs, StackOutputs } from "./lib/aws/stack-outputs";
import { counted } from "../infra/rules/format";
import { Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { UsageError } from "../infra/rules/errors";
import { deadlineFromFlag, outputsFromFlags, stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { Command } from "./lib/cli/flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";

const FLAGS = {
  campaign: { type: "string", value: "ID", help: "redrive this campaign's failed sends" },
  all: { type: "boolean", help: "or every campaign's" },
  "resend-unknown": {
    type: "boolean",
    help: "also redrive bulk entries SES may have sent (delivery unknown): a recipient may get them twice",
  },
  "dry-run": { type: "boolean", help: "list what it would create (GetSchedule only): no schedule, no message deleted" },
  json: { type: "boolean", help: "the report as JSON" },
  ...timeoutFlag(300),
  ...stackFlags("dlq-url"),
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "redrive",
  usage: ["(--campaign ID | --all) [--dry-run] [--json] [flags] (--stack NAME | --outputs FILE)"],
  summary: `Reads the stack's dead-letter queue until it is empty and re-sends each failed send as a one-time schedule in its
campaign's group, 2 minutes from now, named <original>-r<N>, with the original's target. A message is deleted only once
its schedule exists (a second run sends nothing twice). Left in the queue, with the reason: messages it cannot read
or rebuild, a group that is gone, a CreateSchedule that fails. Not read: the journeys' own queue.`,
  flags: FLAGS,
  exitCodes: EXIT_CODES.redrive,
  reference: "docs/operating.md",
};

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(argv, COMMAND);
  if ((f.campaign === undefined) === !f.all)
    throw new UsageError("give --campaign ID (one campaign's sends) or --all (every campaign's)");
  const campaignId = f.campaign === undefined ? undefined : requireCampaign(f.campaign);
  const outputs = requireOutputs(outputsFromFlags(f), ["deadLetterQueueUrl", "schedulerRoleArn"], {
    deadLetterQueueUrl: "dlq-url",
  });
  const partition = /^arn:([a-z-]+):iam::/.exec(outputs.schedulerRoleArn)?.[1];
  if (!partition)
    throw new UsageError(
      `stack output schedulerRoleArn ${JSON.stringify(outputs.schedulerRoleArn)}: not an IAM role ARN`,
    );
  const sendGateArn = (outputs as StackOutputs & { sendGateArn?: unknown }).sendGateArn;
  if (sendGateArn !== undefined && typeof sendGateArn !== "string")
    throw new UsageError(`stack output sendGateArn is ${JSON.stringify(sendGateArn)}: expected a string`);
  const senderArn = (outputs as StackOutputs & { senderStateMachineArn?: unknown }).senderStateMachineArn;
  if (senderArn !== undefined && typeof senderArn !== "string")
    throw new UsageError(`stack output senderStateMachineArn is ${JSON.stringify(senderArn)}: expected a string`);
  const deadline = deadlineFromFlag(f["timeout-seconds"], 300, (t) => io.err(`${t}\n`));
  const report = await redrive(
    deadline,
    { sqs: sqsClient(outputs.region), scheduler: schedulerClient(outputs.region) },
    {
      queueUrl: outputs.deadLetterQueueUrl,
      campaignId,
      dryRun: f["dry-run"] as boolean,
      schedulerRoleArn: outputs.schedulerRoleArn,
      targets: {
        partition,
        sendGateArn: sendGateArn || undefined,
        senderArn: senderArn || undefined,
        resendUnknown: f["resend-unknown"] as boolean,
      },
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
  if (r.left.length || r.problems.length)
    lines.push("  Fix what is named and run redrive again (it is safe to repeat).");
  return lines.join("\n") + "\n";
}
