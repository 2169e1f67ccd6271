/**
 * Moves or removes one recipient's send in a launched campaign. See COMMAND (its --help).
 */
import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { Deadline } from "./lib/aws/call";
import { schedulerClient } from "./lib/aws/clients";
import { moveSchedule, MoveTarget } from "./lib/aws/campaign-ops/move";
import { removeSchedule } from "./lib/aws/campaign-ops/remove";
import { requireCampaign } from "./lib/cli/campaign-id-flag";
import { bulkStepOf } from "./lib/aws/bulk-entries";
import { isValidSchedulerName } from "../infra/core/plan/naming";
import { nowFromFlag } from "./lib/cli/campaign-flags";
import { intFlag, Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { canonicalZone, parseLocalTime } from "../infra/core/timing/send-time";
import { zoneNameProblem } from "../infra/core/zones/zone-names";
import { UsageError } from "../infra/core/errors";
import { deadlineFromFlag, outputsFromFlags, stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { Command } from "./lib/cli/flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";

const FLAGS = {
  campaign: { type: "string", value: "ID", help: "the campaign" },
  recipient: { type: "string", value: "ID", help: "the recipient's id (the schedule is found by the plan's naming)" },
  step: { type: "string", value: "N", help: "which step", default: "1" },
  at: {
    type: "string",
    value: "YYYY-MM-DDTHH:MM|HH:MM",
    help: "move it to that local time (HH:MM: a recurring schedule's every occurrence)",
  },
  timezone: {
    type: "string",
    value: "ZONE",
    help: "the zone --at is read in",
    default: "the schedule's own",
    with: "at",
  },
  remove: { type: "boolean", help: "delete it: that recipient will not get that step" },
  schedule: {
    type: "string",
    value: "NAME",
    help: "the bulk schedule holding the recipient (its plan.jsonl schedule_name)",
    default: "searched for",
  },
  now: { type: "string", value: "ISO", help: "the time to judge against", default: "now" },
  json: { type: "boolean", help: "the result as JSON" },
  ...timeoutFlag(60),
  ...stackFlags(),
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "reschedule",
  usage: [
    "--campaign ID --recipient ID [--step N] (--at LOCAL-TIME | --remove) [flags] (--stack NAME | --outputs FILE)",
  ],
  summary: `Moves (GetSchedule, then UpdateSchedule keeping every field but the time) or removes one recipient's send. The local
time follows the send-time rules (a DST gap moves forward, a repeated hour takes the earlier) and must be at least a
minute ahead; a one-time send that may have fired (past, window open, due within a minute) is not moved (exit 1), nor
one moved within 60 minutes of, or out of order with, the recipient's other pending steps (exit 1, naming it).
An entry of a bulk schedule (a bulk plan): the schedule is rewritten without it (UpdateSchedule, every other entry kept
byte for byte); a moved entry gets a one-entry bulk schedule of its own named <id>-<step>.`,
  flags: FLAGS,
  exitCodes: EXIT_CODES.reschedule,
  reference: "docs/operating.md",
};

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(argv, COMMAND);
  const campaignId = requireCampaign(f.campaign);
  if (f.recipient === undefined || f.recipient === "") throw new UsageError("--recipient is required (see --help)");
  const step = intFlag("step", f.step, 1, 999, 1);
  if ((f.at === undefined) === !f.remove)
    throw new UsageError("give --at YYYY-MM-DDTHH:MM to move the send, or --remove to delete it");
  if (f.schedule !== undefined && (!isValidSchedulerName(f.schedule) || bulkStepOf(f.schedule) !== step))
    throw new UsageError(
      `--schedule ${f.schedule}: not the name of a bulk schedule of step ${step} (bulk.${step}.…, from plan.jsonl)`,
    );
  const scheduler = schedulerClient(outputsFromFlags(f).region);
  const deadline = deadlineFromFlag(f["timeout-seconds"], 60, (t) => io.err(`${t}\n`));
  try {
    return await change(f, campaignId, step, scheduler, deadline, io);
  } finally {
    deadline.dispose();
  }
}

/** --at: a local date and time YYYY-MM-DDTHH:MM (a one-time send), or a local time of day HH:MM (a recurring one). */
function moveTargetFlag(raw: string): MoveTarget {
  const time = /^(\d{2}):(\d{2})$/.exec(raw);
  if (time) {
    if (Number(time[1]) > 23 || Number(time[2]) > 59) throw new UsageError(`--at ${raw}: no such time`);
    return { hour: Number(time[1]), minute: Number(time[2]) };
  }
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::00)?$/.exec(raw);
  if (!m) throw new UsageError(`--at ${raw}: expected local time YYYY-MM-DDTHH:MM, or HH:MM for a recurring schedule`);
  const at = parseLocalTime(m[1], Number(m[2]), Number(m[3]));
  if (typeof at === "string" || Number(m[2]) > 23 || Number(m[3]) > 59)
    throw new UsageError(`--at ${raw}: no such time`);
  return at;
}

async function change(
  f: {
    recipient?: string;
    at?: string;
    timezone?: string;
    remove?: boolean;
    now?: string;
    json?: boolean;
    schedule?: string;
  },
  campaignId: string,
  step: number,
  scheduler: SchedulerClient,
  deadline: Deadline,
  io: Io,
): Promise<number> {
  let report: object;
  let line: string;
  if (f.remove) {
    if (f.timezone !== undefined) throw new UsageError("--timezone goes with --at");
    const removed = await removeSchedule(deadline, scheduler, {
      campaignId,
      recipientId: f.recipient!,
      step,
      now: nowFromFlag(f.now),
      bulkSchedule: f.schedule,
    });
    report = removed;
    line = removed.bulk
      ? `Removed recipient ${f.recipient}'s entry from ${campaignId}/${removed.schedule} (${removed.bulk.entriesLeft ? `${removed.bulk.entriesLeft} entries left` : "its only entry: schedule deleted"}): recipient ${f.recipient} will not get step ${step}.`
      : `Removed ${campaignId}/${removed.schedule}: recipient ${f.recipient} will not get step ${step}.`;
  } else {
    const at = moveTargetFlag(f.at!);
    const timezone = f.timezone === undefined ? undefined : canonicalZone(f.timezone);
    const problem = f.timezone === undefined ? undefined : zoneNameProblem(timezone ?? f.timezone);
    if (problem) throw new UsageError(`--timezone ${f.timezone}: ${problem}`);
    const moved = await moveSchedule(deadline, scheduler, {
      campaignId,
      recipientId: f.recipient!,
      step,
      at,
      timezone,
      now: nowFromFlag(f.now),
      bulkSchedule: f.schedule,
    });
    report = moved;
    const when = moved.to.expression.startsWith("cron(") ? `next ${moved.to.utc}` : moved.to.utc;
    line = `Moved ${moved.bulk ? `recipient ${f.recipient}'s entry of ${campaignId}/${moved.bulk.from} (${moved.bulk.entriesLeft} entries left there) to its own ` : ""}${campaignId}/${moved.schedule} from ${moved.from.expression} ${moved.from.timezone} to ${moved.to.expression} ${moved.to.timezone} (${when}).`;
    if (moved.to.goneToday)
      line += `\nIts occurrence of ${moved.to.goneToday} has gone or is under way: the new time starts the next local day (StartDate ${moved.to.startDate}), so that day gets no second send.`;
    if (moved.to.endDate !== moved.to.previousEndDate && moved.to.previousEndDate)
      line += `\nEndDate ${moved.to.endDate} (was ${moved.to.previousEndDate}): the same last day of sends, for the new time${moved.from.timezone === moved.to.timezone ? "" : " and zone"}.`;
  }
  io.out(f.json ? JSON.stringify(report, null, 2) + "\n" : line + "\n");
  return 0;
}
