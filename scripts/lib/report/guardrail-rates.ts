/**
 * The report's guardrails section: the campaign's bounce and complaint rates per send (as the guardrail alarms count
 * them) over the report's range, against the stack's thresholds, and the campaign's state in the ledger (a pause with
 * its time and reason: a guardrail's reason starts `guardrail: `). Pure: the report's totals and the state in, words
 * out.
 */
import { GUARDRAIL_REASON_PREFIX, Guardrails, percent } from "../../../infra/core/send/guardrails";
import type { CampaignState } from "../../../infra/core/send/ledger";

/** A campaign's state as the ledger holds it (the shape campaign-state.ts reads). */
export interface StateRecord {
  state: CampaignState;
  reason: string | null;
  updatedAt: string | null;
  /** Every state written, oldest first (pause-campaign, resume-campaign, cancel-campaign and the guardrails). */
  history?: { state: string; at: string; reason: string | null }[];
}

export interface GuardrailRate {
  kind: "bounce" | "complaint";
  /** Events per send over the report's range; null with no send. */
  rate: number | null;
  threshold: number;
  /** The rate is at or above the threshold, over at least minSends sends. */
  reached: boolean;
}

export interface GuardrailSection {
  /** The stack's thresholds (stack output guardrailSettings); null when the stack has no guardrails or says none. */
  settings: Guardrails | null;
  sends: number;
  rates: GuardrailRate[];
  /** The campaign's state in the ledger, or why it could not be read; null without the ledger. */
  state: (StateRecord & { byGuardrail: boolean }) | { error: string } | null;
}

export function guardrailSection(
  total: { sent: number; bounced: number; complained: number },
  settings: Guardrails | null,
  state: StateRecord | { error: string } | null,
): GuardrailSection {
  const rate = (x: number) => (total.sent > 0 ? x / total.sent : null);
  const rates: GuardrailRate[] = settings
    ? (
        [
          ["bounce", total.bounced, settings.bounceRate],
          ["complaint", total.complained, settings.complaintRate],
        ] as const
      ).map(([kind, events, threshold]) => {
        const r = rate(events);
        return { kind, rate: r, threshold, reached: r !== null && total.sent >= settings.minSends && r >= threshold };
      })
    : [];
  const withCause =
    state && !("error" in state)
      ? { ...state, byGuardrail: state.reason?.startsWith(GUARDRAIL_REASON_PREFIX) ?? false }
      : state;
  return { settings, sends: total.sent, rates, state: withCause };
}

/** The section as lines (console and page alike). */
export function guardrailLines(g: GuardrailSection): string[] {
  const lines: string[] = [];
  if (g.settings) {
    const each = g.rates.map(
      (r) =>
        `${r.kind}s ${r.rate === null ? "-" : percent(Number(r.rate.toFixed(6)))} (threshold ${percent(r.threshold)}${r.reached ? ": reached" : ""})`,
    );
    lines.push(
      `guardrails (per send, over the report's range; the alarms look at the last ${g.settings.window}, from ${g.settings.minSends} sends): ${each.join(", ")}`,
    );
  } else lines.push("guardrails: none in this stack (no guardrailSettings output)");
  const s = g.state;
  if (s && "error" in s) lines.push(`state: not read: ${s.error}`);
  else if (s && s.state === "live")
    lines.push(s.updatedAt ? `state: live (set at ${s.updatedAt})` : "state: live (never paused)");
  else if (s) {
    const by = s.byGuardrail ? "by a guardrail " : "";
    lines.push(
      `state: ${s.state} ${by}since ${s.updatedAt ?? "(time not recorded)"}${s.reason ? ` (reason: ${s.reason})` : ""}`,
    );
  }
  // The pauses and resumes with their times, oldest first: a pause the campaign was resumed from shows too.
  if (s && !("error" in s))
    for (const c of s.history ?? [])
      lines.push(
        `${c.state === "paused" ? "paused" : c.state === "live" ? "resumed" : c.state} at ${c.at}${c.reason ? ` (reason: ${c.reason})` : ""}`,
      );
  return lines;
}
