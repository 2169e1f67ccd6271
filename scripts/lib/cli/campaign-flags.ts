/**
 * The flags size-window and launch-campaign share, parsed once: when the campaign sends (--date, --hour, --minute,
 * --step, --default-timezone), the rate its sends must hold (--tps, or --invocation-tps and --ses-rate), and --now.
 */
import { intFlag, positiveFlag, UsageError } from "./run";
import { effectiveTps, EffectiveTps } from "../core/window";

export const SEND_TIME_FLAGS = {
  date: { type: "string" },
  hour: { type: "string" },
  minute: { type: "string" },
  step: { type: "string", multiple: true },
  "default-timezone": { type: "string" },
  now: { type: "string" },
} as const;

export const RATE_FLAGS = {
  tps: { type: "string" },
  "invocation-tps": { type: "string" },
  "ses-rate": { type: "string" },
} as const;

export interface SendTimeFlags {
  date: string;
  hour: number;
  minute: number;
  stepFlags: string[];
  defaultTimezone: string;
}

export function sendTimeFromFlags(f: {
  date?: string;
  hour?: string;
  minute?: string;
  step?: string[];
  "default-timezone"?: string;
}): SendTimeFlags {
  if (f.date === undefined) throw new UsageError("--date YYYY-MM-DD is required");
  return {
    date: f.date,
    hour: intFlag("hour", f.hour, 0, 23),
    minute: intFlag("minute", f.minute, 0, 59, 0),
    stepFlags: f.step ?? [],
    defaultTimezone: f["default-timezone"] ?? "UTC",
  };
}

/** --now as epoch milliseconds (default: the current time). */
export function nowFromFlag(raw: string | undefined): number {
  if (raw === undefined) return Date.now();
  const now = Date.parse(raw);
  if (Number.isNaN(now)) throw new UsageError(`--now ${raw}: expected an ISO 8601 time such as 2026-12-01T08:00:00Z`);
  return now;
}

export function rateFromFlags(f: { tps?: string; "invocation-tps"?: string; "ses-rate"?: string }): EffectiveTps {
  if (f.tps !== undefined && (f["invocation-tps"] !== undefined || f["ses-rate"] !== undefined)) {
    throw new UsageError("--tps replaces --invocation-tps and --ses-rate: give one or the others");
  }
  const optional = (name: string, raw: string | undefined) => (raw === undefined ? undefined : positiveFlag(name, raw));
  return effectiveTps({
    tps: optional("tps", f.tps),
    invocationTps: optional("invocation-tps", f["invocation-tps"]),
    sesRate: optional("ses-rate", f["ses-rate"]),
  });
}
