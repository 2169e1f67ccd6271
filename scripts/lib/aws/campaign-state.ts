/**
 * A campaign's state in the occurrence ledger (`campaign#<campaign tag>`: live, paused or cancelled; absent = live),
 * which the one sender reads right before every SES call, and the wait after setting it: once the sender's longest
 * time from a state read to the end of an SES call (secondsFromStateReadToLastSend) has passed since the write, no
 * execution that read the old state can still be sending. The wait, not a listing, is the proof: the sender is an
 * EXPRESS state machine, whose executions ListExecutions does not list.
 */
import { AttributeValue, DynamoDBClient, GetItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import {
  CAMPAIGN_STATE_ATTRIBUTES as A,
  CAMPAIGN_STATES,
  CampaignState,
  campaignStateKey,
  LEDGER_KEY,
} from "../../../infra/core/send/ledger";
import { campaignTag } from "../../../infra/core/send/email-events";
import { secondsFromStateReadToLastSend } from "../../../infra/core/send/sender-contract";
import { FindingsError } from "../../../infra/core/errors";
import { awsCall, Deadline } from "./call";
import { isAwsError } from "./clients";

/**
 * Added to the sender's bound before a state change is taken as reached: the bound counts the sender's attempt
 * timeouts and backoff delays, not Step Functions' own transition from the state read to the SES task, nor our clock
 * and Step Functions' running at slightly different rates.
 */
export const STATE_CHANGE_MARGIN_SECONDS = 5;

/** How long after a state write every send that read the state before it has ended. */
export const stateChangeWaitSeconds = (): number => secondsFromStateReadToLastSend() + STATE_CHANGE_MARGIN_SECONDS;

/**
 * The time a state write and the wait after it are measured with, and how that wait sleeps (within the command's time
 * limit). Tests replace both, so that the wait is counted rather than slept.
 */
export const stateClock = {
  now: (): number => Date.now(),
  sleep: (ms: number, d: Deadline): Promise<void> => d.sleep(ms),
};

/** How often the wait says on stderr how long is left. */
const WAIT_PROGRESS_MS = 5_000;

export interface CampaignStateRecord {
  state: CampaignState;
  /** Why it was set (the operator's words), when given. */
  reason: string | null;
  /** When it was set (ISO, the setting command's clock); null for a campaign never set (live). */
  updatedAt: string | null;
}

const LIVE: CampaignStateRecord = { state: "live", reason: null, updatedAt: null };

export interface Ledger {
  ddb: DynamoDBClient;
  table: string;
}

const keyOf = (campaignId: string): Record<string, AttributeValue> => ({
  [LEDGER_KEY]: { S: campaignStateKey(campaignTag(campaignId)) },
});

/** The item's state, or a finding naming a value that is not a state (nothing of the campaign is guessed). */
function recordOf(campaignId: string, item: Record<string, AttributeValue> | undefined): CampaignStateRecord {
  if (!item || item[A.state] === undefined) return LIVE;
  const state = item[A.state].S;
  if (!CAMPAIGN_STATES.includes(state as CampaignState))
    throw new FindingsError(
      `campaign ${campaignId}: the ledger's state item ${campaignStateKey(campaignTag(campaignId))} holds state ${JSON.stringify(item[A.state])}; expected one of ${CAMPAIGN_STATES.join(", ")}`,
    );
  return { state: state as CampaignState, reason: item[A.reason]?.S ?? null, updatedAt: item[A.updatedAt]?.S ?? null };
}

const tableMissing = (table: string) => () => {
  throw new FindingsError(
    `the ledger table ${table} does not exist: the stack's occurrence ledger is not deployed (run pulumi up)`,
  );
};

/** The campaign's state, read consistently (absent: live). */
export async function readCampaignState(d: Deadline, l: Ledger, campaignId: string): Promise<CampaignStateRecord> {
  return recordOf(campaignId, await readStateItem(d, l, campaignId));
}

async function readStateItem(d: Deadline, l: Ledger, campaignId: string) {
  const answer = await awsCall(
    d,
    `campaign ${campaignId}: GetItem ${campaignStateKey(campaignTag(campaignId))} in ${l.table}`,
    (o) => l.ddb.send(new GetItemCommand({ TableName: l.table, Key: keyOf(campaignId), ConsistentRead: true }), o),
    tableMissing(l.table),
  );
  return answer.Item;
}

/** One state written: when, to what, and why (the pauses and resumes of a campaign, a guardrail's among them). */
export interface StateChange {
  state: string;
  at: string;
  reason: string | null;
}

/** The item's history, oldest first (an item written before the history was kept has none). */
function historyOf(item: Record<string, AttributeValue> | undefined): StateChange[] {
  return (item?.[A.history]?.L ?? []).flatMap((e) =>
    e.M?.state?.S && e.M.at?.S ? [{ state: e.M.state.S, at: e.M.at.S, reason: e.M.reason?.S ?? null }] : [],
  );
}

/** The state with its history, for the report (a failed read is the report's line, the time limit ends it). */
export async function campaignStateWithHistory(
  d: Deadline,
  l: Ledger,
  campaignId: string,
): Promise<(CampaignStateRecord & { history: StateChange[] }) | { error: string }> {
  try {
    const item = await readStateItem(d, l, campaignId);
    return { ...recordOf(campaignId, item), history: historyOf(item) };
  } catch (e) {
    if (!(e instanceof FindingsError) || d.expired) throw e;
    return { error: e.message };
  }
}

export interface StateWrite {
  previous: CampaignStateRecord;
  written: CampaignStateRecord;
  /** When the write succeeded (stateClock, epoch ms): the wait is measured from here. */
  writtenAt: number;
  /** It was cancelled already: the item is kept as it was (the first cancel's time and reason). */
  alreadyCancelled: boolean;
}

/**
 * Sets the campaign's state (and `updated_at`; `reason`, or none). Cancelled is final: every write is conditional on
 * the item not being cancelled. Cancelling a cancelled campaign keeps the item as the first cancel wrote it (a state
 * already cancelled then is cancelled now too); pausing or resuming one is a finding saying since when and why.
 */
export async function setCampaignState(
  d: Deadline,
  l: Ledger,
  campaignId: string,
  state: CampaignState,
  reason?: string,
): Promise<StateWrite> {
  const updatedAt = new Date(stateClock.now()).toISOString();
  const what = `campaign ${campaignId}: UpdateItem ${campaignStateKey(campaignTag(campaignId))} in ${l.table} (state ${state})`;
  const answer = await awsCall(
    d,
    what,
    async (o) => {
      try {
        return await l.ddb.send(new UpdateItemCommand(stateUpdate(l.table, campaignId, state, updatedAt, reason)), o);
      } catch (e) {
        if (isAwsError(e, "ConditionalCheckFailedException")) return undefined;
        throw e;
      }
    },
    tableMissing(l.table),
  );
  const writtenAt = stateClock.now();
  if (answer !== undefined) {
    const written = { state, reason: reason ?? null, updatedAt };
    return { previous: recordOf(campaignId, answer.Attributes), written, writtenAt, alreadyCancelled: false };
  }
  const cancelled = await readCampaignState(d, l, campaignId).catch(() => undefined);
  if (state !== "cancelled") throw cancelledAlready(campaignId, state, cancelled);
  // The condition failed on a cancelled item: the read only says since when (an unreadable one is no less cancelled).
  const kept = cancelled?.state === "cancelled" ? cancelled : { state, reason: null, updatedAt: null };
  return { previous: kept, written: kept, writtenAt, alreadyCancelled: true };
}

function stateUpdate(table: string, campaignId: string, state: CampaignState, updatedAt: string, reason?: string) {
  const values: Record<string, AttributeValue> = { ":state": { S: state }, ":at": { S: updatedAt } };
  if (reason !== undefined) values[":reason"] = { S: reason };
  values[":cancelled"] = { S: "cancelled" };
  values[":none"] = { L: [] };
  values[":change"] = {
    L: [{ M: { state: { S: state }, at: { S: updatedAt }, ...(reason ? { reason: { S: reason } } : {}) } }],
  };
  // Each write appends itself to the history (a write whose condition fails appends nothing).
  const history = "#history = list_append(if_not_exists(#history, :none), :change)";
  return {
    TableName: table,
    Key: keyOf(campaignId),
    UpdateExpression:
      reason === undefined
        ? `SET #state = :state, #at = :at, ${history} REMOVE #reason`
        : `SET #state = :state, #at = :at, #reason = :reason, ${history}`,
    ConditionExpression: "attribute_not_exists(#state) OR #state <> :cancelled",
    ExpressionAttributeNames: { "#state": A.state, "#at": A.updatedAt, "#reason": A.reason, "#history": A.history },
    ExpressionAttributeValues: values,
    ReturnValues: "ALL_OLD" as const,
  };
}

/** The finding for a paused or live write that met a cancelled campaign, with when and why it was cancelled. */
function cancelledAlready(campaignId: string, state: CampaignState, now?: CampaignStateRecord): FindingsError {
  const since = now?.updatedAt ? ` since ${now.updatedAt}` : "";
  const why = now?.reason ? ` (reason: ${now.reason})` : "";
  return new FindingsError(
    `campaign ${campaignId} is cancelled${since}${why}: a cancelled campaign never sends again, so it cannot be set ${state}; launch it again under a new campaign id`,
  );
}

export interface StateChangeWait {
  /** From then on no execution that read the state before the write can still be sending (ISO). */
  sendsEndBy: string;
  /** The wait reached that instant before the command ended. */
  reached: boolean;
}

/**
 * Waits until every send that read the state before `writtenAt` has ended, with progress on stderr. When the
 * command's time limit cannot cover that, it does not wait: `reached` false, and the instant says until when.
 */
export async function waitForStateChange(d: Deadline, campaignId: string, writtenAt: number): Promise<StateChangeWait> {
  const until = writtenAt + stateChangeWaitSeconds() * 1000;
  const sendsEndBy = new Date(until).toISOString();
  if (until - stateClock.now() > d.endsAt - Date.now()) return { sendsEndBy, reached: false };
  for (let left = until - stateClock.now(); left > 0 && !d.expired; left = until - stateClock.now()) {
    d.progress(
      `campaign ${campaignId}: waiting ${Math.ceil(left / 1000)} s more for sends already under way (until ${sendsEndBy})`,
    );
    await stateClock.sleep(Math.min(left, WAIT_PROGRESS_MS), d);
  }
  return { sendsEndBy, reached: stateClock.now() >= until };
}

/** The state for a report: a failed read is that line's only (campaign-status), the time limit ends the command. */
export async function campaignStateOrError(
  d: Deadline,
  l: Ledger,
  campaignId: string,
): Promise<CampaignStateRecord | { error: string }> {
  try {
    return await readCampaignState(d, l, campaignId);
  } catch (e) {
    if (!(e instanceof FindingsError) || d.expired) throw e;
    return { error: e.message };
  }
}
