/**
 * A row's text steps (docs/sms.md, "Launching texts"), beside the email path of plan.ts: the row's `phone` (E.164,
 * or national with `country`, read as libphonenumber does: infra/core/zones/phone.ts), each text's instant under legal
 * hours (sms-legal.ts), its body rendered from templates/<name>/sms.txt with the row's data and its message parts
 * (infra/core/sms/segments.ts), held to --max-segments. A row that cannot be texted is rejected with its reason
 * (missing-phone, invalid-phone, missing-template-data, too-many-segments, legal-hours), never dropped.
 */
import { PHONE_COLUMN, readPhone } from "../../../infra/core/zones/phone";
import { InputError } from "../../../infra/core/errors";
import { countSegments } from "../../../infra/core/sms/segments";
import { renderSms, segmentsProblem, SmsTemplate } from "../../../infra/core/plan/sms-templates";
import { hasValue, STEP_VARIABLE } from "../../../infra/core/plan/templates";
import { LegalHoursPreset } from "../../../infra/core/sms/legal-hours";
import { QuietPolicy } from "../../../infra/core/timing/quiet-time";
import { Step } from "../../../infra/core/timing/send-time";
import { Columns } from "../recipients/recipient-columns";
import { RecipientRow, Reject } from "../recipients/recipient-rows";
import { TemplateError } from "../../../infra/core/plan/templates";
import { nearest } from "../../../infra/core/text/nearest";
import { ZoneDecisions } from "./decision-types";
import { SmsLegalHours } from "./sms-legal";
import { nothingLeft } from "./step-outcomes";
import { volumeWindowMinutes } from "./window";

/** What the launcher is asked to do with text steps (PlanRequest.sms). */
export interface SmsRequest {
  /** Each text step's template, by step index. */
  templates: ReadonlyMap<number, SmsTemplate>;
  maxSegments: number;
  legalHours: readonly LegalHoursPreset[];
  legalHoursMiss: QuietPolicy;
}

/** One row's texts: its number, and per step index the body and parts (undefined: not a text, or not sent). */
export interface RowTexts {
  phone: string;
  bodies: (string | undefined)[];
  segments: number[];
}

/** A row's texts planned: its decisions with the texts placed, and what legal hours did to them. */
export interface PlannedTexts {
  decided: ZoneDecisions;
  texts: RowTexts;
  moved: number;
  skipped: number;
}

/** The texts' counts, for the summary. */
export interface SmsTally {
  texts: number[];
  parts: number[];
  moved: number;
  skipped: number;
}

/**
 * The flexible window texts are placed with room for before their legal window closes, as the launcher and
 * size-window choose it: the given --window-minutes, else the longer of the quiet-time window and the window the
 * list's bound of schedules needs at the rate (at most a day); without legal hours, the quiet-time window.
 */
export function textWindowMinutes(o: {
  legalHours: readonly LegalHoursPreset[];
  givenMinutes?: number;
  quietWindow: number;
  schedulesBound: number;
  tps: number;
}): number {
  if (o.legalHours.length === 0) return o.quietWindow;
  return o.givenMinutes ?? Math.max(o.quietWindow, Math.min(volumeWindowMinutes(o.schedulesBound, o.tps), 1_440));
}

/** Whether `sms.row` rejected the row. */
export function isTextReject(r: PlannedTexts | Reject): r is Reject {
  return "reason" in r;
}

export class SmsSteps {
  readonly tally: SmsTally;
  private readonly legal: SmsLegalHours;
  readonly textSteps: number[];
  private readonly dataColumns: { index: number; name: string }[];
  /** Each number texted so far, with its row: a later row with the same number is a duplicate. */
  private readonly numbers = new Map<string, { line: number; id: string }>();

  constructor(
    readonly o: SmsRequest,
    readonly steps: readonly Step[],
    columns: Columns,
    /** The flexible window every text was placed with room for (sms-legal.ts): the plan's must not be longer. */
    readonly windowMinutes: number,
    file: string,
  ) {
    this.textSteps = steps.flatMap((s, k) => (s.channel === "sms" ? [k] : []));
    if (this.textSteps.length && columns.phone === undefined)
      throw new InputError(
        `${file}:1: step ${steps[this.textSteps[0]].number} is a text: the header needs a "${PHONE_COLUMN}" column (E.164, or national with "country"; found: ${columns.header.join(", ")})`,
      );
    this.legal = new SmsLegalHours(
      { presets: o.legalHours, miss: o.legalHoursMiss, windowMinutes },
      new Set(this.textSteps),
    );
    this.dataColumns = columns.data.map((index) => ({ index, name: columns.header[index] }));
    this.tally = { texts: steps.map(() => 0), parts: steps.map(() => 0), moved: 0, skipped: 0 };
    refuseUnknownVariables(o.templates, steps, new Set(this.dataColumns.map((c) => c.name)), file);
  }

  /** The row's decisions with its texts placed and its texts, or why it is rejected. */
  row(row: RecipientRow, decided: ZoneDecisions): PlannedTexts | Reject {
    const reject = (reason: Reject["reason"], text: string): Reject => ({ line: row.line, id: row.id, reason, text });
    const first = this.steps[this.textSteps[0]].number;
    const read = readPhone(row.phone, row.country);
    if (read === undefined)
      return reject(
        "missing-phone",
        `no phone: step ${first} is a text; give the row a phone (E.164, +1 907 555 0100, or national with country)`,
      );
    if ("problem" in read) return reject("invalid-phone", read.problem);
    const earlier = this.numbers.get(read.e164);
    if (earlier)
      return reject(
        "duplicate-phone",
        `number ${read.e164} is also row ${earlier.id}'s (line ${earlier.line}); a number is texted once a campaign`,
      );
    // Legal hours are the recipient's local time: a zone that is only the default is a guess, and texting by it could
    // break them (a toll-free number texted at 08:00 UTC is 03:00 in New York).
    if (this.o.legalHours.length && decided.status === "defaulted")
      return reject(
        "unknown-zone",
        `legal hours (--legal-hours ${this.o.legalHours.join(",")}) need the recipient's zone: none given or inferred from the row (its number has no area-code zone); give it a timezone, postal_code or latitude/longitude`,
      );
    const legal = this.legal.apply(decided, read.e164);
    if (nothingLeft(legal.decided.steps) !== undefined) {
      // Its texts are skipped too (counted), and the row, left with no send, is in rejects.csv.
      this.tally.skipped += legal.skipped;
      return reject("legal-hours", legal.decided.notes.filter((n) => n.includes("(text) not sent")).join("; "));
    }
    const texts: RowTexts = { phone: read.e164, bodies: [], segments: [] };
    let data: Record<string, string> | undefined;
    for (const k of this.textSteps) {
      if (!legal.decided.steps[k].time) continue;
      const t = this.o.templates.get(k)!;
      data ??= this.dataOf(row);
      const lacking = t.required.find((v) => v !== STEP_VARIABLE && !hasValue(data![v]));
      if (lacking !== undefined)
        return reject(
          "missing-template-data",
          `no value for "${lacking}", which text template ${t.name} (step ${this.steps[k].number}) uses outside an {{#if}} block; give the row a value, or put the variable inside {{#if ${lacking}}}…{{/if}}`,
        );
      const body = renderSms(t, { ...data, [STEP_VARIABLE]: String(this.steps[k].number) });
      const count = countSegments(body);
      const problem = segmentsProblem(count, this.o.maxSegments);
      if (problem) return reject("too-many-segments", `text of step ${this.steps[k].number} (${t.name}): ${problem}`);
      texts.bodies[k] = body;
      texts.segments[k] = count.segments;
    }
    this.numbers.set(read.e164, { line: row.line, id: row.id });
    return { decided: legal.decided, texts, moved: legal.moved, skipped: legal.skipped };
  }

  /** Counts a planned row's texts, and what legal hours did to them. */
  count(p: PlannedTexts): void {
    for (const k of this.textSteps) {
      if (p.texts.bodies[k] === undefined) continue;
      this.tally.texts[k]++;
      this.tally.parts[k] += p.texts.segments[k];
    }
    this.tally.moved += p.moved;
    this.tally.skipped += p.skipped;
  }

  private dataOf(row: RecipientRow): Record<string, string> {
    const data: Record<string, string> = Object.create(null);
    for (const c of this.dataColumns) data[c.name] = row.fields[c.index];
    return data;
  }
}

/**
 * Before any row is planned: every variable a text template uses outside a block must be a column of the list (or
 * the step, which the planner adds); else the launch stops with one line naming the template, the variable and the
 * columns.
 */
function refuseUnknownVariables(
  templates: ReadonlyMap<number, SmsTemplate>,
  steps: readonly Step[],
  columns: ReadonlySet<string>,
  file: string,
): void {
  for (const [k, t] of templates) {
    const unknown = t.required.find((v) => v !== STEP_VARIABLE && !columns.has(v));
    if (unknown === undefined) continue;
    const near = nearest(unknown, [...columns]);
    throw new TemplateError(
      `text template ${t.name} (step ${steps[k].number}) uses "${unknown}" outside an {{#if}} block and ${file} has no such column${near ? ` (did you mean "${near}"?)` : ""}; its columns: ${[...columns].join(", ") || "none"}`,
    );
  }
}
