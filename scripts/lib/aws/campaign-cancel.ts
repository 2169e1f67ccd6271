/**
 * Cancelling a campaign so that nothing of it can send any more: its state is set to cancelled first (every sender
 * execution, those already started included, skips its sends from its next state read on), then its fan-outs and
 * its schedule group go (campaign-ops/cancel.ts cancelCampaign), then the command waits out the sender's bound from a state
 * read to its last SES call, measured from the state write (campaign-state.ts).
 */
import { CloudWatchClient } from "@aws-sdk/client-cloudwatch";
import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { SFNClient } from "@aws-sdk/client-sfn";
import { FindingsError } from "../../../infra/core/errors";
import { Deadline } from "./call";
import { cancelCampaign, CancelReport } from "./campaign-ops/cancel";
import {
  CampaignStateRecord,
  Ledger,
  readCampaignState,
  setCampaignState,
  stateChangeWaitSeconds,
  waitForStateChange,
} from "./campaign-state";
import { deleteCampaignAlarms, GuardrailAlarmsReport } from "./guardrail-alarms";

export interface StateCancelReport extends CancelReport {
  state: {
    /** Before the command (dry run: now); null when it could not be read. */
    before: CampaignStateRecord | null;
    /** When `cancelled` was written (ISO; by the first cancel when already cancelled); null when it was not (dry run, or the write failed). */
    cancelledAt: string | null;
    /** It was cancelled before this command: the item is kept as the first cancel wrote it. */
    alreadyCancelled: boolean;
    /** The wait after the write, in seconds: the sender's bound from a state read to its last SES call, plus a margin. */
    waitSeconds: number;
    /** From then on nothing that read the state before the write can send (ISO); null when the state was not written. */
    sendsEndBy: string | null;
    /** The command waited until `sendsEndBy`. */
    waited: boolean;
  };
  /** The campaign's guardrail alarms, deleted once its state is cancelled; null for a stack without guardrails. */
  guardrailAlarms: GuardrailAlarmsReport | null;
}

export interface StateCancelOptions {
  campaignId: string;
  stateMachineArn: string;
  dryRun: boolean;
  pollSeconds: number;
  reason?: string;
  /** The stack output guardrailAlarmPrefix (absent: no guardrails, no alarm to delete). */
  guardrailAlarmPrefix?: string;
}

/** Cancelled first, then the fan-outs and the group, then the wait; `stillThere` names whatever may still send. */
export async function cancelCampaignAndSends(
  d: Deadline,
  clients: { sfn: SFNClient; scheduler: SchedulerClient; ledger: Ledger; cloudWatch: CloudWatchClient },
  o: StateCancelOptions,
): Promise<StateCancelReport> {
  const problems: string[] = [];
  const noted = <T>(step: Promise<T>): Promise<T | undefined> =>
    step.catch((e) => {
      if (!(e instanceof FindingsError)) throw e;
      problems.push(e.message);
      return undefined;
    });
  const state: StateCancelReport["state"] = {
    before: null,
    cancelledAt: null,
    alreadyCancelled: false,
    waitSeconds: stateChangeWaitSeconds(),
    sendsEndBy: null,
    waited: false,
  };
  if (o.dryRun) {
    state.before = (await noted(readCampaignState(d, clients.ledger, o.campaignId))) ?? null;
    const dry = merged(await cancelCampaign(d, clients, o), state, problems);
    return o.guardrailAlarmPrefix
      ? withAlarms(dry, await deleteCampaignAlarms(d, clients.cloudWatch, o.guardrailAlarmPrefix, o.campaignId, true))
      : dry;
  }
  d.progress(`campaign ${o.campaignId}: setting its state to cancelled`);
  const write = await noted(setCampaignState(d, clients.ledger, o.campaignId, "cancelled", o.reason));
  if (write)
    Object.assign(state, {
      before: write.previous,
      cancelledAt: write.written.updatedAt,
      alreadyCancelled: write.alreadyCancelled,
    });
  const r = merged(await cancelCampaign(d, clients, o), state, problems);
  if (!write) {
    r.stillThere.unshift(
      "campaign state: not set to cancelled, so sender executions already started keep sending its mails",
    );
    return r;
  }
  // Only once the campaign is cancelled: until then its guardrail may still have to pause it.
  if (o.guardrailAlarmPrefix)
    withAlarms(
      r,
      await deleteCampaignAlarms(d, clients.cloudWatch, o.guardrailAlarmPrefix, o.campaignId, false, clients.scheduler),
    );
  const waited = await waitForStateChange(d, o.campaignId, write.writtenAt);
  Object.assign(state, { sendsEndBy: waited.sendsEndBy, waited: waited.reached });
  if (!waited.reached)
    r.stillThere.unshift(
      `sender executions that read the campaign's state before it was cancelled may still be sending until ${waited.sendsEndBy} (the wait of ${state.waitSeconds} s from the state write ${d.expired ? "was cut short by" : "does not fit in"} the command's time limit of ${d.seconds} s)`,
    );
  return r;
}

/** The group's report with the state's part, the state's problems first (they happened first). */
function merged(r: CancelReport, state: StateCancelReport["state"], problems: string[]): StateCancelReport {
  return {
    ...r,
    problems: [...problems, ...r.problems.filter((p) => !problems.includes(p))],
    state,
    guardrailAlarms: null,
  };
}

/** The alarms' part of the report; their failure is one of its problems. */
function withAlarms(r: StateCancelReport, alarms: GuardrailAlarmsReport): StateCancelReport {
  r.guardrailAlarms = alarms;
  if (alarms.problem) r.problems.push(alarms.problem);
  return r;
}
