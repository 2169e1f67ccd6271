/**
 * What the campaign-state commands share on the command line: the --reason flag, checked, and a state in words.
 */
import type { CampaignStateRecord } from "../aws/campaign-state";
import { UsageError } from "../../../infra/core/errors";

/** Longer than any reason worth keeping, short enough for one report line. */
const MAX_REASON_CHARS = 500;

/** --reason TEXT, with the command's own help line. */
export function reasonFlag(help: string) {
  return { reason: { type: "string", value: "TEXT", help } } as const;
}

/** The reason as given, or a UsageError: one line of 1 to MAX_REASON_CHARS characters. */
export function reasonFromFlag(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (!text || /[\r\n]/.test(text) || text.length > MAX_REASON_CHARS)
    throw new UsageError(`--reason: give one line of 1 to ${MAX_REASON_CHARS} characters`);
  return text;
}

/** `live`, or `paused since <ISO> (reason: …)`. */
export function describeState(s: CampaignStateRecord): string {
  if (s.state === "live") return "live";
  const since = s.updatedAt ? ` since ${s.updatedAt}` : "";
  return `${s.state}${since}${s.reason ? ` (reason: ${s.reason})` : ""}`;
}
