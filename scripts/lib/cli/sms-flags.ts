/**
 * Texts paced by the sending number: `--sms-mps` (message parts per second of the pool) and `--sms-daily-cap` (texts
 * per UTC day, a 10DLC number's daily cap), shared by size-window and launch-campaign (docs/sms.md, "Pacing").
 */
import { DEFAULT_SMS_MPS, MAX_SMS_MPS } from "../../../infra/core/sms/sms-config";
import type { Step } from "../../../infra/core/timing/send-time";
import type { SmsPace } from "../planning/size-window";
import { int } from "./parsers";

/** The group of RATE_FLAGS (campaign-flags.ts) these flags are shown in. */
const GROUP = "Window and rate";

export const SMS_PACE_FLAGS = {
  "sms-mps": {
    type: "string",
    value: "N",
    parse: int(1, MAX_SMS_MPS),
    help: "texts: message parts per second the pool sends (about 3 a toll-free number, 1 a 10DLC number, 100 a short code)",
    defaultHelp: `the stack output smsMps, else ${DEFAULT_SMS_MPS}`,
    group: GROUP,
    with: "tps",
  },
  "sms-daily-cap": {
    type: "string",
    value: "N",
    parse: int(1),
    help: "texts: at most N sends per UTC day (a 10DLC number's daily cap); the rest move to the next day, as --ramp",
    group: GROUP,
    with: "ramp",
  },
} as const;

/** Parts each text is counted at until the plan carries each body's: the most a launch lets through (--max-segments). */
export const DEFAULT_PARTS_PER_TEXT = 3;

/**
 * The pace of a campaign's texts, or undefined for one without: a campaign has texts when a step is of channel sms
 * (or `--channel sms`), or when `--sms-mps` or `--sms-daily-cap` is given. The pool's rate is the flag's, else the stack
 * output `smsMps`, else one 10DLC number's; each text counts as `--max-segments` parts (default 3), the most a text may
 * take.
 */
export function smsPaceFromFlags(
  f: { "sms-mps"?: number; "sms-daily-cap"?: number; channel?: unknown; "max-segments"?: unknown },
  steps: readonly Step[],
  stackMps?: number,
): SmsPace | undefined {
  const texts =
    f.channel === "sms" ||
    steps.some((s) => (s as { channel?: unknown }).channel === "sms") ||
    f["sms-mps"] !== undefined ||
    f["sms-daily-cap"] !== undefined;
  if (!texts) return undefined;
  const [mps, source] =
    f["sms-mps"] !== undefined
      ? [f["sms-mps"], "--sms-mps"]
      : stackMps !== undefined
        ? [stackMps, "the stack output smsMps"]
        : [DEFAULT_SMS_MPS, "one 10DLC number, default"];
  const parts = Number(f["max-segments"] ?? DEFAULT_PARTS_PER_TEXT);
  return {
    mps,
    source,
    partsPerText: Number.isInteger(parts) && parts >= 1 ? parts : DEFAULT_PARTS_PER_TEXT,
    ...(f["sms-daily-cap"] !== undefined ? { dailyCap: f["sms-daily-cap"] } : {}),
  };
}
