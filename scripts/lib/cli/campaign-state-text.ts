/**
 * What the campaign-state commands share on the command line: the --reason flag, checked, and a state in words.
 */
import type { CampaignStateRecord } from "../aws/campaign-state";
import { checked } from "./parsers";

/** Longer than any reason worth keeping, short enough for one report line. */
const MAX_REASON_CHARS = 500;

/** The reason as given, trimmed: one line of 1 to MAX_REASON_CHARS characters. */
const REASON = checked(
  "reason",
  "a reason",
  (raw) => {
    const text = raw.trim();
    return !text || /[\r\n]/.test(text) || text.length > MAX_REASON_CHARS
      ? `give one line of 1 to ${MAX_REASON_CHARS} characters`
      : undefined;
  },
  { value: (raw) => raw.trim(), quote: false },
);

/** --reason TEXT; `note`: what the state is (paused, cancelled). */
export function reasonFlag<N extends string>(note: N) {
  return {
    reason: {
      type: "string",
      value: "TEXT",
      parse: REASON,
      help: "kept with the campaign's state (campaign-status shows it)",
      note,
    },
  } as const;
}

/** `live`, or `paused since <ISO> (reason: …)`. */
export function describeState(s: CampaignStateRecord): string {
  if (s.state === "live") return "live";
  const since = s.updatedAt ? ` since ${s.updatedAt}` : "";
  return `${s.state}${since}${s.reason ? ` (reason: ${s.reason})` : ""}`;
}
