/**
 * Re-sends the failed sends of the dead-letter queue, each as a one-time schedule in its campaign's group. See COMMAND (its --help).
 */
import { dynamodb, s3Client, schedulerClient, sqsClient } from "./lib/aws/clients";
import { redrive, RedriveReport } from "./lib/aws/redrive";
import { requireOutputs, StackOutputs } from "./lib/aws/stack-outputs";
import { stackScopeOf } from "./lib/planning/dead-letters";
import { counted } from "./lib/text/format";
import { runMain } from "./lib/cli/run";
import { UsageError } from "../infra/core/errors";
import { reportingStackFlags } from "./lib/cli/aws-flags";
import { campaignFlag, dryRunFlag } from "./lib/cli/common-flags";
import { stackCommand } from "./lib/cli/stack-command";
import { LAUNCH_FLAGS } from "./lib/cli/launch-flags";
import { graceMinutesFlag, missedPolicyFlag } from "./lib/cli/timing-flags";
import { LaunchMissed } from "./lib/planning/launch-record";
import { HeldOutcome } from "./lib/planning/paused-sends";

const FLAGS = {
  ...campaignFlag("redrive this campaign's failed sends"),
  all: { type: "boolean", help: "or every campaign's" },
  "resend-unknown": {
    type: "boolean",
    help: "also re-send recipients the ledger records as unknown (SES may have sent them): they may get it twice",
  },
  missed: {
    ...LAUNCH_FLAGS.missed,
    note: "here a send a pause held (G: send-now's grace)",
    defaultHelp: "the launch record's",
    group: undefined,
  },
  "grace-minutes": { ...LAUNCH_FLAGS["grace-minutes"], group: undefined },
  ...dryRunFlag(
    "list what it would create (reads the plan, the ledger and GetSchedule only): no schedule, no message deleted",
  ),
  ...reportingStackFlags({ seconds: 300 }, "dlq-url"),
} as const;

export const { COMMAND, main } = stackCommand(
  {
    script: "redrive",
    usage: ["(--campaign ID | --all) [--missed POLICY] [--dry-run] [--json] [flags] (--stack NAME | --outputs FILE)"],
    summary: `Reads the stack's dead-letter queue until it is empty. Each message only points to a failed send (campaign, schedule,
scheduled time, recipient ids): the send is rebuilt from the campaign's plan in S3, and only the recipients the ledger
records as not sent (or held by a pause; unknown ones with --resend-unknown) are re-sent, by the one sender, as a
one-time schedule in the campaign's group, 2 minutes from now (after quiet time where the plan keeps the recipient's
zone), named <original>-r<N>. A send a pause held follows the campaign's missed-time policy (its launch record's, or
--missed): skip, not sent; send-now, sent then if late by less than the grace; next-day, at its local time on the first
later day. A message is deleted only once its schedule exists, or when nothing is left to send (a second run sends
nothing twice).
Left in the queue, with the reason: a message that is not a pointer, a send or recipient not in the plan, unknown
outcomes, a group that is gone, a CreateSchedule that fails. Not read: the journeys' own queue.`,
    flags: FLAGS,
    changesAws: true,
  },
  async ({ f, outputs, deadline }) => {
    if ((f.campaign === undefined) === !f.all)
      throw new UsageError("give --campaign ID (one campaign's sends) or --all (every campaign's)");
    const missed = missedFromFlags(f);
    const o = requireOutputs(outputs(), [...REDRIVE_OUTPUTS], { deadLetterQueueUrl: "dlq-url" });
    const scope = stackScopeOf(o.senderStateMachineArn);
    if (!scope)
      throw new UsageError(
        `stack output senderStateMachineArn ${JSON.stringify(o.senderStateMachineArn)}: not a state machine ARN`,
      );
    const clients = {
      sqs: sqsClient(o.region),
      scheduler: schedulerClient(o.region),
      s3: s3Client(o.region),
      dynamodb: dynamodb(o.region),
    };
    return redrive(deadline, clients, {
      queueUrl: o.deadLetterQueueUrl,
      campaignId: f.campaign,
      dryRun: f["dry-run"],
      schedulerRoleArn: o.schedulerRoleArn,
      scope,
      bucket: o.bucketName,
      ledgerTable: o.ledgerTableName,
      sender: senderFields(o),
      resendUnknown: f["resend-unknown"],
      missed,
      windowMinutes: o.defaultWindowMinutes,
      journeys: journeyNames(o),
    });
  },
  { text: (r) => formatRedrive(r), exitCode: (r) => (r.left.length || r.problems.length ? 1 : 0) },
);

const REDRIVE_OUTPUTS = [
  "deadLetterQueueUrl",
  "schedulerRoleArn",
  "senderStateMachineArn",
  "bucketName",
  "ledgerTableName",
  "fromAddress",
  "configurationSetName",
] as const;

/** --missed and --grace-minutes: the policy held sends follow instead of their launch records'; none given: theirs. */
function missedFromFlags(f: { missed?: string; "grace-minutes"?: string }): LaunchMissed | undefined {
  const policy = missedPolicyFlag(f.missed);
  if (policy === undefined) {
    if (f["grace-minutes"] !== undefined)
      throw new UsageError(
        `--grace-minutes ${f["grace-minutes"]} goes with --missed (send-now: how late a held send may be sent now)`,
      );
    return undefined;
  }
  return { policy, graceMinutes: graceMinutesFlag(f["grace-minutes"]) };
}

/** The sender input's stack fields, as the fan-out gets them: list management when the stack has a contact list. */
function senderFields(o: Required<Pick<StackOutputs, "fromAddress" | "configurationSetName">> & StackOutputs) {
  return {
    fromAddress: o.fromAddress,
    configurationSetName: o.configurationSetName,
    ...(o.contactListName && o.unsubscribeTopic
      ? { listManagement: { contactListName: o.contactListName, topicName: o.unsubscribeTopic } }
      : {}),
  };
}

const journeyNames = (o: StackOutputs) =>
  Array.isArray(o.journeyDefinitions)
    ? (o.journeyDefinitions as { name?: unknown }[]).flatMap((j) => (typeof j?.name === "string" ? [j.name] : []))
    : [];

function formatRedrive(r: RedriveReport): string {
  const whose = r.campaign === null ? "every campaign" : `campaign ${r.campaign}`;
  const would = r.dryRun ? " (dry run: nothing created, nothing deleted)" : "";
  const lines = [`Redrive of ${whose} from ${r.queue}${would}: ${counted(r.received, "message")} read.`];
  const verb = r.dryRun ? "would redrive" : "redriven";
  lines.push(
    `  ${verb}: ${r.redriven.length}`,
    ...r.redriven.map(
      (s) =>
        `    ${s.group}/${s.schedule} at ${s.at}${s.quiet === "delayed" ? " (after quiet time)" : ""}: ${counted(s.recipients.length, "recipient")} of ${s.planRow} (was ${s.original}: ${s.error})` +
        (s.notResent.length
          ? `; not re-sent: ${s.notResent.map((x) => `${x.recipient} ${x.outcome}`).join(", ")}`
          : "") +
        heldText(s.held),
    ),
  );
  if (r.nothingToResend.length)
    lines.push(
      `  nothing left to send (every recipient sent or skipped for good)${r.dryRun ? "" : ", message deleted"}: ${r.nothingToResend.length}`,
      ...r.nothingToResend.map(
        (m) =>
          `    ${m.original}: ${m.recipients.map((x) => `${x.recipient} ${x.outcome}`).join(", ")}${m.held ? ` (${m.held.reason})` : ""}`,
      ),
    );
  if (r.alreadyRedriven.length)
    lines.push(
      `  already redriven by an earlier run${r.dryRun ? "" : " (message deleted)"}: ${r.alreadyRedriven.length}`,
      ...r.alreadyRedriven.map((s) => `    ${s.group}/${s.schedule} (was ${s.original})${heldText(s.held)}`),
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

/** What the missed-time policy made of a send a pause held. */
const heldText = (h: HeldOutcome | null) => (h ? `; held by a pause, ${h.reason}` : "");

if (require.main === module) runMain(() => main(process.argv.slice(2)));
