/**
 * Moves or removes one recipient's send in a launched campaign. See COMMAND (its --help).
 */
import { Deadline } from "./lib/aws/call";
import { schedulerClient } from "./lib/aws/clients";
import { moveSchedule, MoveTarget } from "./lib/aws/campaign-ops/move";
import { removeSchedule } from "./lib/aws/campaign-ops/remove";
import { DryRunWrites, dryRunScheduler } from "./lib/aws/campaign-ops/dry-run";
import { bulkStepOf } from "./lib/aws/bulk-entries";
import { isValidSchedulerName } from "../infra/core/plan/naming";
import { runMain } from "./lib/cli/run";
import { canonicalZone, parseLocalTime } from "../infra/core/timing/send-time";
import { zoneNameProblem } from "../infra/core/zones/zone-names";
import { UsageError } from "../infra/core/errors";
import { reportingStackFlags } from "./lib/cli/aws-flags";
import { CAMPAIGN_FLAG, dryRunFlag, nowFlag } from "./lib/cli/common-flags";
import { checked, instant, int } from "./lib/cli/parsers";
import { StackRun, stackCommand } from "./lib/cli/stack-command";

/** A local date and time YYYY-MM-DDTHH:MM (a one-time send), or a local time of day HH:MM (a recurring one). */
const LOCAL_TIME = checked<MoveTarget>(
  "local-time",
  "2026-12-02T10:30",
  (raw) => (typeof localTarget(raw) === "string" ? (localTarget(raw) as string) : undefined),
  { value: (raw) => localTarget(raw) as MoveTarget },
);

function localTarget(raw: string): MoveTarget | string {
  const time = /^(\d{2}):(\d{2})$/.exec(raw);
  if (time) return Number(time[1]) > 23 || Number(time[2]) > 59 ? "no such time" : { hour: +time[1], minute: +time[2] };
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::00)?$/.exec(raw);
  if (!m) return "expected local time YYYY-MM-DDTHH:MM, or HH:MM for a recurring schedule";
  const at = parseLocalTime(m[1], Number(m[2]), Number(m[3]));
  return typeof at === "string" || Number(m[2]) > 23 || Number(m[3]) > 59 ? "no such time" : at;
}

/** A zone name, re-cased when it differs only in case; an abbreviation (EST) is refused. */
const ZONE = checked("zone", "Europe/Paris", (raw) => zoneNameProblem(canonicalZone(raw) ?? raw), {
  value: (raw) => canonicalZone(raw)!,
});

const FLAGS = {
  ...CAMPAIGN_FLAG,
  recipient: { type: "string", value: "ID", help: "the recipient's id (the schedule is found by the plan's naming)" },
  "step-number": { type: "string", value: "N", parse: int(1, 999), help: "which step of the campaign", default: 1 },
  at: {
    type: "string",
    value: "INSTANT",
    parse: instant(),
    help: "one instant, ISO 8601 with Z or an offset",
    note: "move the send to it (written in the schedule's zone, or --timezone)",
  },
  "local-time": {
    type: "string",
    value: "YYYY-MM-DDTHH:MM|HH:MM",
    parse: LOCAL_TIME,
    help: "or to that local wall-clock time (HH:MM: a recurring schedule's every occurrence)",
  },
  timezone: {
    type: "string",
    value: "ZONE",
    parse: ZONE,
    help: "the zone the send is written in, and --local-time read in",
    defaultHelp: "the schedule's own",
    with: "local-time",
  },
  remove: { type: "boolean", help: "delete it: that recipient will not get that step" },
  schedule: {
    type: "string",
    value: "NAME",
    help: "the bulk schedule holding the recipient (its plan.jsonl schedule_name)",
    defaultHelp: "searched for",
  },
  ...nowFlag("the time a move or removal is judged against"),
  ...dryRunFlag("say what it would move or remove: GetSchedule and ListSchedules only"),
  ...reportingStackFlags({ seconds: 60 }),
} as const;

const DECLARATION = {
  script: "reschedule",
  usage: [
    "--campaign ID --recipient ID (--at INSTANT | --local-time LOCAL | --remove) (--stack NAME | --outputs FILE)",
  ],
  summary: `Moves (GetSchedule, then UpdateSchedule keeping every field but the time) or removes one recipient's send. A local
time follows the send-time rules (a DST gap moves forward, a repeated hour takes the earlier) and must be at least a
minute ahead; a one-time send that may have fired (past, window open, due within a minute) is not moved (exit 1), nor
one moved within 60 minutes of, or out of order with, the recipient's other pending steps (exit 1, naming it).
An entry of a bulk schedule (a bulk plan): the schedule is rewritten without it (UpdateSchedule, every other entry kept
byte for byte); a moved entry gets a one-entry bulk schedule of its own named <id>-<step>.`,
  flags: FLAGS,
  changesAws: true,
  renamed: { step: "step-number" },
} as const;

/** What reschedule did (or, in a dry run, would do), and the calls a dry run did not make. */
type RescheduleReport = { line: string; report: object; dryRun: boolean; notSent: DryRunWrites };

export const { COMMAND, main } = stackCommand(
  DECLARATION,
  async (run): Promise<RescheduleReport> => {
    const { f } = run;
    const campaignId = run.campaignId();
    if (f.recipient === undefined || f.recipient === "") throw new UsageError("--recipient is required (see --help)");
    const targets = [
      f.at !== undefined && "--at",
      f["local-time"] !== undefined && "--local-time",
      f.remove && "--remove",
    ];
    const given = targets.filter(Boolean);
    if (given.length !== 1)
      throw new UsageError(
        `${given.length ? `${given.join(" and ")}: ` : ""}give --at INSTANT or --local-time YYYY-MM-DDTHH:MM to move the send, or --remove to delete it`,
      );
    if (f.schedule !== undefined && (!isValidSchedulerName(f.schedule) || bulkStepOf(f.schedule) !== f["step-number"]))
      throw new UsageError(
        `--schedule ${f.schedule}: not the name of a bulk schedule of step ${f["step-number"]} (bulk.${f["step-number"]}.…, from plan.jsonl)`,
      );
    if (f.remove && f.timezone !== undefined) throw new UsageError("--timezone goes with --at or --local-time");
    const notSent: DryRunWrites = [];
    const real = schedulerClient(run.outputs().region);
    const scheduler = f["dry-run"] ? dryRunScheduler(real, notSent) : real;
    const { line, report } = await change(run, { campaignId, scheduler });
    return { line, report, dryRun: f["dry-run"], notSent };
  },
  {
    text: (r) =>
      r.dryRun
        ? `Dry run: ${r.line.replace(/^(Moved|Removed)/, (w) => `would have ${w.toLowerCase()}`)}\n  Nothing changed; not sent: ${r.notSent.join(", ") || "nothing"}.\n`
        : r.line + "\n",
    exitCode: () => 0,
    json: (r) => (r.dryRun ? { ...r.report, dryRun: true, notSent: r.notSent } : r.report),
  },
);

async function change(
  { f, deadline }: StackRun<typeof FLAGS>,
  c: { campaignId: string; scheduler: ReturnType<typeof schedulerClient> },
): Promise<{ line: string; report: object }> {
  const { campaignId, scheduler } = c;
  const common = {
    campaignId,
    recipientId: f.recipient!,
    step: f["step-number"],
    now: f.now ?? Date.now(),
    bulkSchedule: f.schedule,
  };
  if (f.remove) {
    const removed = await removeSchedule(deadline as Deadline, scheduler, common);
    const line = removed.bulk
      ? `Removed recipient ${f.recipient}'s entry from ${campaignId}/${removed.schedule} (${removed.bulk.entriesLeft ? `${removed.bulk.entriesLeft} entries left` : "its only entry: schedule deleted"}): recipient ${f.recipient} will not get step ${f["step-number"]}.`
      : `Removed ${campaignId}/${removed.schedule}: recipient ${f.recipient} will not get step ${f["step-number"]}.`;
    return { line, report: removed };
  }
  const at: MoveTarget = f.at !== undefined ? { utcMs: f.at } : f["local-time"]!;
  const moved = await moveSchedule(deadline, scheduler, { ...common, at, timezone: f.timezone });
  const when = moved.to.expression.startsWith("cron(") ? `next ${moved.to.utc}` : moved.to.utc;
  let line = `Moved ${moved.bulk ? `recipient ${f.recipient}'s entry of ${campaignId}/${moved.bulk.from} (${moved.bulk.entriesLeft} entries left there) to its own ` : ""}${campaignId}/${moved.schedule} from ${moved.from.expression} ${moved.from.timezone} to ${moved.to.expression} ${moved.to.timezone} (${when}).`;
  if (moved.to.goneToday)
    line += `\nIts occurrence of ${moved.to.goneToday} has gone or is under way: the new time starts the next local day (StartDate ${moved.to.startDate}), so that day gets no second send.`;
  if (moved.to.endDate !== moved.to.previousEndDate && moved.to.previousEndDate)
    line += `\nEndDate ${moved.to.endDate} (was ${moved.to.previousEndDate}): the same last day of sends, for the new time${moved.from.timezone === moved.to.timezone ? "" : " and zone"}.`;
  return { line, report: moved };
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
