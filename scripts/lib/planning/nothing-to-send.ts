/**
 * Why a plan has no schedule, in one clause per cause, for the console line that stops the launch: the reasons are
 * in rejects.csv row by row, but the operator must not have to open it to learn that the date has passed.
 */
import type { PlanSummary } from "./plan-summary";

const n = (x: number) => x.toLocaleString("en-US");
const plural = (x: number, one: string, many = `${one}s`) => `${n(x)} ${x === 1 ? one : many}`;

export function nothingToSendReasons(s: PlanSummary): string[] {
  if (s.rows === 0) return ["the recipient list has no rows"];
  const reasons: string[] = [];
  const others = Object.entries(s.rejected.byReason).filter(
    ([reason, count]) => reason !== "send-time-passed" && count,
  );
  const otherRows = others.reduce((t, [, count]) => t + (count ?? 0), 0);
  const passed = s.missed.skipped;
  if (passed > 0) {
    const passedRows = s.rejected.byReason["send-time-passed"] ?? 0;
    const whose = passedRows === s.rows - otherRows ? "every row's time has passed" : "some sends' time has passed";
    reasons.push(
      `${whose} (${plural(passed, "send")} due before ${s.missed.cutoff}, --missed ${s.missed.policy}): give a later --date, or --missed next-day to send each the next day at the same time`,
    );
  }
  if (s.quiet && s.quiet.skipped > 0)
    reasons.push(
      `${plural(s.quiet.skipped, "send")} fell in quiet time (--quiet skip; --quiet delay sends them when it ends)`,
    );
  if (otherRows > 0) {
    const byReason = others.map(([reason, count]) => `${reason} ${n(count!)}`).join(", ");
    reasons.push(`${plural(otherRows, "row")} rejected (${byReason}; rejects.csv)`);
  }
  if (s.heldOut > 0) reasons.push(`${plural(s.heldOut, "recipient")} held out`);
  return reasons;
}
