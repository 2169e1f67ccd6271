/**
 * Cancelling a campaign's fan-outs and schedule group: the running fan-outs stopped first, then the group deleted and
 * waited for, whatever fails recorded. The campaign's state in the ledger is campaign-cancel.ts's.
 */
import { DeleteScheduleGroupCommand, SchedulerClient } from "@aws-sdk/client-scheduler";
import { SFNClient, StopExecutionCommand } from "@aws-sdk/client-sfn";
import { campaignGroupName } from "../../../../infra/core/plan/naming";
import { FindingsError } from "../../../../infra/core/errors";
import { awsCall, Deadline, throttled } from "../call";
import { CampaignExecution, campaignExecutions, groupState } from "./lookup";

export interface CancelReport {
  campaign: string;
  group: string;
  dryRun: boolean;
  nothingToCancel: boolean;
  /** Running fan-outs found (dry run: that would be stopped). */
  executionsFound: string[];
  executionsStopped: string[];
  groupBefore: string | null;
  /** deleted, absent, ACTIVE, DELETING, or unknown (could not be read). */
  groupAfter: string;
  /** Everything of the campaign that could still send when the command ended; empty when the cancel is complete. */
  stillThere: string[];
  /** What went wrong on the way (AWS errors, the time limit), one line each. */
  problems: string[];
}

/**
 * Stops the campaign's running fan-outs first (so no new schedule appears), reads the group again (a stopped fan-out
 * may have created it after the first read), deletes it in any state but DELETING, and waits until it is gone (read
 * as absent) or the deadline comes. Whatever fails is recorded, never hidden: `stillThere` lists every
 * part of the campaign that could still send.
 */
export async function cancelCampaign(
  d: Deadline,
  clients: { sfn: SFNClient; scheduler: SchedulerClient },
  o: { campaignId: string; stateMachineArn: string; dryRun: boolean; pollSeconds: number },
): Promise<CancelReport> {
  const group = campaignGroupName(o.campaignId);
  const r: CancelReport = {
    campaign: o.campaignId,
    group,
    dryRun: o.dryRun,
    nothingToCancel: false,
    executionsFound: [],
    executionsStopped: [],
    groupBefore: null,
    groupAfter: "unknown",
    stillThere: [],
    problems: [],
  };
  const attempt = async <T>(step: () => Promise<T>): Promise<T | Failed> => {
    try {
      return await step();
    } catch (e) {
      if (!(e instanceof FindingsError)) throw e;
      if (!r.problems.includes(e.message)) r.problems.push(e.message);
      return FAILED;
    }
  };
  const running = await attempt(() =>
    campaignExecutions(d, clients.sfn, o.stateMachineArn, o.campaignId, "running", throttled(d.progress)),
  );
  const before = await attempt(() => groupState(d, clients.scheduler, o.campaignId));
  if (running !== FAILED) r.executionsFound = running.map((e) => e.name);
  if (before !== FAILED) r.groupBefore = r.groupAfter = before ?? "absent";
  r.nothingToCancel = running !== FAILED && running.length === 0 && before === undefined;
  if (o.dryRun || r.nothingToCancel) return finishCancel(r, running);

  const notStopped = await stopExecutions(d, clients.sfn, o.campaignId, running === FAILED ? [] : running, r, attempt);
  // A fan-out creates the group first thing: one stopped after the read above may have created it meanwhile.
  const afterStop =
    r.executionsStopped.length || notStopped.length
      ? await attempt(() => groupState(d, clients.scheduler, o.campaignId))
      : before;
  if (afterStop !== FAILED) r.groupAfter = afterStop ?? "absent";
  const present = afterStop === FAILED ? before : afterStop;
  // Every state but absent is still there; one already DELETING is not deleted again, only waited for.
  if (present !== undefined && present !== FAILED && present !== "DELETING") {
    d.progress(`deleting schedule group ${group}`);
    await attempt(() =>
      awsCall(
        d,
        `campaign ${o.campaignId}: DeleteScheduleGroup ${group}`,
        (opts) => clients.scheduler.send(new DeleteScheduleGroupCommand({ Name: group }), opts),
        () => "already gone",
      ),
    );
  }
  if (present !== undefined) await waitForGroup(d, clients.scheduler, o, r, attempt);
  return finishCancel(r, running, notStopped);
}

const FAILED = Symbol("failed");
type Failed = typeof FAILED;
type Attempt = <T>(step: () => Promise<T>) => Promise<T | Failed>;

/** Stops each running fan-out (no new schedule may appear while the group is deleted); returns those not stopped. */
async function stopExecutions(
  d: Deadline,
  sfn: SFNClient,
  campaignId: string,
  running: { name: string; arn: string }[],
  r: CancelReport,
  attempt: Attempt,
): Promise<string[]> {
  const notStopped: string[] = [];
  for (const e of running) {
    d.progress(`stopping fan-out ${e.name}`);
    const stopped = await attempt(() =>
      awsCall(d, `campaign ${campaignId}: StopExecution ${e.name}`, (opts) =>
        sfn.send(
          new StopExecutionCommand({
            executionArn: e.arn,
            error: "sendtime.Cancelled",
            cause: `campaign ${campaignId} cancelled`,
          }),
          opts,
        ),
      ),
    );
    if (stopped === FAILED) notStopped.push(e.name);
    else r.executionsStopped.push(e.name);
  }
  return notStopped;
}

/** Polls the group until it is gone or the deadline comes; the last state seen goes into the report. */
async function waitForGroup(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; pollSeconds: number },
  r: CancelReport,
  attempt: Attempt,
): Promise<void> {
  while (!d.expired) {
    const state = await attempt(() => groupState(d, scheduler, o.campaignId));
    if (state === FAILED) {
      r.groupAfter = "unknown";
      return;
    }
    if (state === undefined) {
      r.groupAfter = "deleted";
      return;
    }
    r.groupAfter = state;
    d.progress(`group ${r.group} is ${state}; waiting`);
    await d.sleep(o.pollSeconds * 1000);
  }
  if (!r.problems.some((p) => p.includes("--timeout-seconds")))
    r.problems.push(
      `campaign ${o.campaignId}: group ${r.group} still ${r.groupAfter} at the command's time limit of ${d.seconds} s (--timeout-seconds)`,
    );
}

function finishCancel(r: CancelReport, running: CampaignExecution[] | Failed, notStopped: string[] = []): CancelReport {
  if (r.dryRun) return r;
  if (running === FAILED)
    r.stillThere.push("fan-outs: could not list the running fan-outs, so any of them may still be creating schedules");
  for (const name of notStopped)
    r.stillThere.push(`fan-out ${name} is still RUNNING (StopExecution failed): it can still create schedules`);
  // Only a group read as absent is gone: every other state (one this code does not know too) may still send.
  if (r.groupAfter === "ACTIVE")
    r.stillThere.push(`schedule group ${r.group} is still ACTIVE: its pending schedules will fire`);
  else if (r.groupAfter === "DELETING")
    r.stillThere.push(
      `schedule group ${r.group} is still DELETING: AWS is deleting its schedules, and some may still fire until it is gone`,
    );
  else if (r.groupAfter === "unknown")
    r.stillThere.push(`schedule group ${r.group}: state unknown, its pending schedules may still fire`);
  else if (r.groupAfter !== "deleted" && r.groupAfter !== "absent")
    r.stillThere.push(
      `schedule group ${r.group} is still there (state ${r.groupAfter}): its pending schedules may still fire`,
    );
  return r;
}
