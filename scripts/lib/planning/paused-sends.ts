/**
 * What redrive makes of a send a pause held (its entry recorded `skipped`, reason `paused`): the campaign's missed-time
 * policy decides, as the launcher's does for a send due before its cutoff (missed.ts), the redrive's own time
 * (redriveAt: now + REDRIVE_DELAY_MS, up to the minute) being the cutoff and the held occurrence (the pointer's
 * scheduled time) the time that was missed:
 * - `skip`: not sent again;
 * - `send-now`: sent at the redrive's time when it is late by less than the grace, else not sent again;
 * - `next-day`: sent at the plan row's local time (`send_at` in its `timezone`; a bulk line's is UTC) on the first
 *   later day whose instant is not before the redrive's time.
 * Then quiet time, as redrive applies it to every send (outOfQuiet). The sender holds a send when it fires, at or after
 * its scheduled time, so by the redrive that time has always passed: a held send is always a missed one. A recurring
 * row's occurrence is never sent again, whatever the policy: the launcher sends no missed occurrence either (--missed
 * does not apply to --every), and its next one follows. Pure: no AWS SDK.
 */
import { FindingsError } from "../../../infra/core/errors";
import { parseSendAt } from "../../../infra/core/plan/schedule-expression";
import { QuietTime } from "../../../infra/core/timing/quiet-time";
import { zonedInstant } from "../../../infra/core/timing/send-time";
import { FoundRow, outOfQuiet, RecipientOutcome, redriveAt, RedriveTime } from "./dead-letters";
import { LaunchMissed } from "./launch-record";
import { missedFate, MissedFate, MISSED_POLICIES } from "./missed";

/** The policy a held send follows: its launch record's, or the one redrive was given (--missed, --grace-minutes). */
export interface HeldPolicy extends LaunchMissed {
  from: "launch record" | "--missed";
}

/** What the policy did to one held send, for the report. */
export interface HeldOutcome extends HeldPolicy {
  /** How late the held occurrence is at the redrive's time, in whole minutes. */
  lateMinutes: number;
  /** Sent again at the redrive's time, moved to a later day, or not sent again. */
  outcome: "sent-now" | "next-day" | "not-re-sent";
  /** When it is sent again (after quiet time), ISO 8601 in UTC; null when it is not. */
  at: string | null;
  reason: string;
}

/** The held send's outcome, and its time when it is sent again. */
export interface HeldFate {
  held: HeldOutcome;
  time?: RedriveTime;
}

/**
 * The policy held sends of a launch follow: `override` (--missed), else the one its record states. A record that
 * states none decides nothing: what a mail that cannot be taken back becomes is not guessed.
 */
export function heldPolicy(
  override: LaunchMissed | undefined,
  launch: { missed: LaunchMissed | null; record: string },
): HeldPolicy | { reason: string } {
  if (override) return { ...override, from: "--missed" };
  if (launch.missed) return { ...launch.missed, from: "launch record" };
  return {
    reason: `held by a pause, and the launch record ${launch.record} states no missed-time policy (missed): not re-sent; redrive with --missed ${MISSED_POLICIES.join("|")} to decide`,
  };
}

/** Whether the ledger's outcome of an entry is one a pause held. */
export const isHeld = (o: Pick<RecipientOutcome, "outcome" | "reason">) =>
  o.outcome === "skipped" && o.reason === "paused";

const MINUTE = 60_000;
const DAY = 86_400_000;

/**
 * The fate of a send held at `scheduledTime`, of plan row `found`, redriven at `nowMs` under policy `p`, with the
 * campaign's quiet time over the redrive's window.
 */
export function heldFate<L>(
  scheduledTime: string,
  found: FoundRow<L>,
  p: HeldPolicy,
  nowMs: number,
  quiet: { quiet: QuietTime | null; windowMinutes: number | undefined },
): HeldFate {
  const cutoffMs = redriveAt(nowMs);
  const dueMs = Date.parse(scheduledTime);
  const lateMinutes = Math.floor((cutoffMs - dueMs) / MINUTE);
  const decided = (outcome: HeldOutcome["outcome"], reason: string, time?: RedriveTime): HeldFate => ({
    held: { ...p, lateMinutes, outcome, at: time ? new Date(time.atMs).toISOString() : null, reason },
    time,
  });
  const by = `missed-time policy ${p.policy}${p.from === "--missed" ? " (--missed)" : ""}`;
  if (found.kind === "recipient" && found.row.start_date !== undefined)
    return decided(
      "not-re-sent",
      `missed while paused: a recurring send's missed occurrence is not sent again (its next occurrence follows), whatever the ${by}`,
    );
  const fate = fateOf(found, dueMs, p, cutoffMs);
  if (fate.outcome === "skipped")
    return decided(
      "not-re-sent",
      p.policy === "send-now"
        ? `missed while paused: ${lateMinutes} minutes late at ${new Date(cutoffMs).toISOString()}, not less than the grace of ${p.graceMinutes} minutes: ${by}`
        : `missed while paused: ${by}`,
    );
  // "on-time" cannot be (see above): then it goes as redrive sends any other send.
  const time = outOfQuiet(
    fate.outcome === "on-time" ? cutoffMs : fate.time.utcMs,
    found,
    quiet.quiet,
    quiet.windowMinutes,
  );
  const until = found.kind === "recipient" ? found.row.until : undefined;
  // A text keeps its planned legal window (its row's until): past it, a redriven text could only be skipped.
  if (until !== undefined && time.atMs >= Date.parse(until))
    return decided(
      "not-re-sent",
      `missed while paused: a text's legal window closed at ${until} (its plan's until), before the redrive's ${new Date(time.atMs).toISOString()}; launch it again to send it`,
    );
  const afterQuiet = time.quiet === "delayed" ? `, then after quiet time: ${new Date(time.atMs).toISOString()}` : "";
  if (fate.outcome === "next-day")
    return decided(
      "next-day",
      `moved to ${fate.time.utc}, ${found.row.send_at.slice(11, 16)} ${found.row.timezone} on the first later day past the redrive's time: ${by}${afterQuiet}`,
      time,
    );
  return decided(
    "sent-now",
    fate.outcome === "on-time"
      ? `re-sent now: its time had not passed${afterQuiet}`
      : `re-sent now: ${lateMinutes} minutes late, less than the grace of ${p.graceMinutes} minutes: ${by}${afterQuiet}`,
    time,
  );
}

/** The launcher's rule (missedFate) with the redrive's time as the cutoff, next-day trying every day up to past it. */
function fateOf<L>(found: FoundRow<L>, dueMs: number, p: HeldPolicy, cutoffMs: number): MissedFate {
  const zone = found.row.timezone;
  const local = parseSendAt(found.row.send_at);
  if (!local) throw new FindingsError(`${found.where}: send_at ${JSON.stringify(found.row.send_at)} is not a time`);
  const days = Math.max(1, Math.ceil((cutoffMs - zonedInstant(zone, local).utcMs) / DAY) + 1);
  return missedFate(zone, dueMs, local, { policy: p.policy, graceMinutes: p.graceMinutes, cutoffMs }, days);
}
