/**
 * What is pending for a campaign: its schedules, its fan-outs, the dead-letter queue. See USAGE.
 */
import { schedulerClient, sfnClient, sqsClient } from "./lib/aws/clients";
import { campaignStatus, requireCampaign, StatusReport } from "./lib/aws/campaign-ops";
import { nowFromFlag } from "./lib/cli/campaign-flags";
import { intFlag, Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { count, plural } from "../infra/rules/format";
import { deadlineFromFlag, outputsFromFlags, STACK_FLAGS, STACK_FLAGS_HELP, TIMEOUT_FLAG } from "./lib/cli/aws-flags";

const USAGE = `
Usage: campaign-status --campaign ID [--sample N] [--now ISO] [--timeout-seconds S] [--json] (--stack NAME | --outputs FILE | ...)

  - the schedule group campaign-<ID> and its pending schedules by state (ListSchedules, every page);
  - when the next sends fall, per UTC hour (a recurring schedule: its next occurrence, in its zone, DST included):
    from GetSchedule on every schedule when there are at most --sample
    (default 500), otherwise on a uniform random sample of that size, scaled up (marked as an estimate);
    (a schedule in a zone this Node does not know is counted apart, named, never guessed);
  - the campaign's fan-out executions with their Map Run item counts (needs stateMachineArn): every RUNNING
    execution of the stack is read to match its input's campaign_id, finished ones only when named <ID>-…;
  - the dead-letter queue's depth (needs deadLetterQueueUrl; the queue is shared by every campaign of the stack).
    If it cannot be read, that line says why and the rest of the report is still printed (exit 1).
  --now ISO             count next occurrences from this instant (default: now), for reproducible runs
  --timeout-seconds S   the whole command's time limit, every AWS call included (default 300); progress on stderr

${STACK_FLAGS_HELP}

Exit codes: 0 ok, 1 an AWS error or the time limit (a failing DLQ read still prints the report), 2 bad flags.
`;

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(
    argv,
    {
      campaign: { type: "string" },
      sample: { type: "string" },
      now: { type: "string" },
      json: { type: "boolean", default: false },
      ...TIMEOUT_FLAG,
      ...STACK_FLAGS,
    },
    USAGE,
  );
  const campaignId = requireCampaign(f.campaign);
  const outputs = outputsFromFlags(f);
  const sampleSize = intFlag("sample", f.sample, 1, 100_000, 500);
  const deadline = deadlineFromFlag(f["timeout-seconds"], 300, (t) => io.err(`${t}\n`));
  const report = await campaignStatus(
    deadline,
    { scheduler: schedulerClient(outputs.region), sfn: sfnClient(outputs.region), sqs: sqsClient(outputs.region) },
    {
      campaignId,
      stateMachineArn: outputs.stateMachineArn,
      deadLetterQueueUrl: outputs.deadLetterQueueUrl,
      sampleSize,
      now: nowFromFlag(f.now),
    },
  ).finally(() => deadline.dispose());
  io.out(f.json ? JSON.stringify(report, null, 2) + "\n" : formatStatus(report));
  return report.deadLetterQueue && "error" in report.deadLetterQueue ? 1 : 0;
}

function formatStatus(r: StatusReport): string {
  const lines = [`Campaign ${r.campaign}: group ${r.group.name} ${r.group.state ?? "does not exist"}`];
  const states = Object.entries(r.schedules.byState)
    .sort((a, b) => b[1] - a[1])
    .map(([s, c]) => `${count(c)} ${s}`)
    .join(", ");
  lines.push(`  pending schedules: ${count(r.schedules.total)}${states ? ` (${states})` : ""}`);
  if (r.nextSends.byHour.length) {
    const recurring = r.nextSends.recurring ? `; ${count(r.nextSends.recurring)} recurring, each at its next occurrence` : "";
    lines.push(
      `  next sends per UTC hour${r.nextSends.estimated ? ` (estimated from ${count(r.nextSends.sampled)} sampled)` : ""}${recurring}:`,
    );
    const widest = Math.max(...r.nextSends.byHour.map((h) => h.count));
    for (const h of r.nextSends.byHour)
      lines.push(
        `    ${h.hour.padEnd(17)} ${count(h.count).padStart(10)}  ${"█".repeat(Math.max(1, Math.round((h.count / widest) * 30)))}`,
      );
  }
  if (r.unknownZones.count) {
    const examples = r.unknownZones.examples.map((e) => `${e.schedule} in "${e.zone}"`).join(", ");
    lines.push(
      `  ${count(r.unknownZones.count)} sampled ${plural(r.unknownZones.count, "schedule is", "schedules are")} in a time zone this Node does not know (${examples}): not counted above`,
    );
  }
  if (r.executions.length) {
    lines.push("  fan-outs:");
    for (const e of r.executions) {
      const items = e.items
        ? `${count(e.items.succeeded)}/${count(e.items.total)} rows scheduled, ${count(e.items.failed)} failed, ${count(e.items.pending + e.items.running)} to go`
        : "no Map Run";
      lines.push(`    ${e.name}  ${e.status}  ${items}`);
    }
  } else lines.push("  fan-outs: none found");
  const dlq = r.deadLetterQueue;
  if (dlq && "error" in dlq) lines.push(`  dead-letter queue (all campaigns): could not be read: ${dlq.error}`);
  else if (dlq) lines.push(`  dead-letter queue (all campaigns): ${count(dlq.visible)} messages waiting, ${count(dlq.inFlight)} in flight`);
  return lines.join("\n") + "\n";
}
