/**
 * Pausing and resuming a campaign through its state in the ledger. Paused: the sender sends nothing of it and
 * dead-letters each send as a pointer (skipped: paused), so the schedules keep firing and every held send waits in
 * the send dead-letter queue; pause waits out the sender's bound so that no send that read `live` is still under
 * way when it says nothing leaves. Resume sets it live again and counts the held sends, which redrive re-sends.
 */
import { SQSClient } from "@aws-sdk/client-sqs";
import { Deadline } from "./call";
import {
  CampaignStateRecord,
  Ledger,
  readCampaignState,
  setCampaignState,
  stateChangeWaitSeconds,
  waitForStateChange,
} from "./campaign-state";
import { countHeldSends, HeldCount } from "./held-sends";

export interface PauseReport {
  campaign: string;
  dryRun: boolean;
  /** Before the command (dry run: now). */
  before: CampaignStateRecord;
  /** What was written (null in a dry run). */
  written: CampaignStateRecord | null;
  waitSeconds: number;
  /** From then on no send that read the state before the pause can still be under way (ISO); null in a dry run. */
  sendsEndBy: string | null;
  /** The command waited until `sendsEndBy`: nothing of the campaign leaves until it is resumed. */
  waited: boolean;
}

/** Sets the campaign paused (refused when cancelled) and waits out the sends already under way. */
export async function pauseCampaign(
  d: Deadline,
  ledger: Ledger,
  o: { campaignId: string; reason?: string; dryRun: boolean },
): Promise<PauseReport> {
  const write = o.dryRun ? undefined : await setCampaignState(d, ledger, o.campaignId, "paused", o.reason);
  const r: PauseReport = {
    campaign: o.campaignId,
    dryRun: o.dryRun,
    before: write?.previous ?? (await readCampaignState(d, ledger, o.campaignId)),
    written: write?.written ?? null,
    waitSeconds: stateChangeWaitSeconds(),
    sendsEndBy: null,
    waited: false,
  };
  if (!write) return r;
  const waited = await waitForStateChange(d, o.campaignId, write.writtenAt);
  return Object.assign(r, { sendsEndBy: waited.sendsEndBy, waited: waited.reached });
}

export interface ResumeReport {
  campaign: string;
  dryRun: boolean;
  before: CampaignStateRecord;
  written: CampaignStateRecord | null;
  /** The held sends in the dead-letter queue (a dry run counts them too). */
  held: HeldCount;
}

/** Sets the campaign live (refused when cancelled), then counts the sends its pause held. */
export async function resumeCampaign(
  d: Deadline,
  clients: { ledger: Ledger; sqs: SQSClient },
  o: { campaignId: string; deadLetterQueueUrl: string; dryRun: boolean },
): Promise<ResumeReport> {
  // The write refuses a cancelled campaign, saying since when and why.
  const write = o.dryRun ? undefined : await setCampaignState(d, clients.ledger, o.campaignId, "live");
  const before = write?.previous ?? (await readCampaignState(d, clients.ledger, o.campaignId));
  const held = await countHeldSends(d, clients.sqs, o.deadLetterQueueUrl, o.campaignId);
  return { campaign: o.campaignId, dryRun: o.dryRun, before, written: write?.written ?? null, held };
}
