/** The texts of a plan (summary.json `sms`, and the launch's lines about them): parts per step and template, legal hours. */
import { count, counted } from "../text/format";
import type { SmsSteps } from "./sms-steps";

export interface SmsSummary {
  /** Texts planned (one a recipient and text step) and their message parts, what pacing and cost count. */
  texts: number;
  parts: number;
  maxSegments: number;
  /** The presets ("us,ca"), or "none". */
  legalHours: string;
  legalHoursMiss: "delay" | "skip";
  /** The flexible window each text was placed with room for before its legal window closes. */
  windowCheckedMinutes: number;
  /** Texts moved to the next legal instant, or not sent (each in notes.csv with its reason). */
  moved: number;
  skipped: number;
  /** Per text step: its template, its encoding and parts with every variable empty, its texts and their parts. */
  byStep: { step: number; template: string; encoding: string; fixedSegments: number; texts: number; parts: number }[];
}

export function smsSummary(sms: SmsSteps): SmsSummary {
  const t = sms.tally;
  const byStep = sms.textSteps.map((k) => {
    const template = sms.o.templates.get(k)!;
    return {
      step: sms.steps[k].number,
      template: template.name,
      encoding: template.fixed.encoding,
      fixedSegments: template.fixed.segments,
      texts: t.texts[k],
      parts: t.parts[k],
    };
  });
  return {
    texts: byStep.reduce((n, s) => n + s.texts, 0),
    parts: byStep.reduce((n, s) => n + s.parts, 0),
    maxSegments: sms.o.maxSegments,
    legalHours: sms.o.legalHours.length ? sms.o.legalHours.join(",") : "none",
    legalHoursMiss: sms.o.legalHoursMiss,
    windowCheckedMinutes: sms.windowMinutes,
    moved: t.moved,
    skipped: t.skipped,
    byStep,
  };
}

/** The summary's lines about texts (summary-text.ts). */
export function smsLines(s: SmsSummary | null | undefined): string[] {
  if (!s) return [];
  const steps = s.byStep
    .map(
      (b) => `step ${b.step} ${b.template}: ${counted(b.texts, "text")}, ${counted(b.parts, "part")} (${b.encoding})`,
    )
    .join("; ");
  const legal =
    s.legalHours === "none"
      ? "legal hours: none (--legal-hours not given)"
      : `legal hours ${s.legalHours} (--legal-hours-miss ${s.legalHoursMiss}, each send's ${s.windowCheckedMinutes}-minute window inside them): ${count(s.moved)} moved, ${count(s.skipped)} skipped (notes.csv; a row left with no send: rejects.csv)`;
  return [
    `  texts: ${counted(s.texts, "text")}, ${counted(s.parts, "message part")} (at most ${s.maxSegments} a text): ${steps}`,
    `  ${legal}`,
  ];
}
