import { atExpression } from "../../../infra/core/plan/schedule-expression";
import { Columns, STEP_KEY } from "../recipients/recipient-columns";
import { TemplateDataJson } from "../recipients/row-size";
import { scheduleName } from "../../../infra/core/plan/naming";
import { PlanLineParts, planLineFromParts, planLineParts } from "../../../infra/core/plan/plan-row";
import { Step } from "../../../infra/core/timing/send-time";
import { ZoneSource, zoneSourceOf } from "../../../infra/core/zones/zone-names";
import { Audience, NO_VARIANT, templatesByVariant } from "../recipients/audience";
import { RecipientRow } from "../recipients/recipient-rows";
import { ZoneDecisions } from "./decision-types";
import { quotedNoteLines, zoneFields } from "./plan-files";
import { RowTexts } from "./sms-steps";

/**
 * What every planned row with one answer of the decider (its decisions) shares, prepared on the first row with that
 * answer object: its plan lines' shared parts (per step sent, the same for every group: the variant and its template
 * are pieces of the line), its notes quoted, and its rows counted per group but not yet tallied. Kept on the answer
 * (`prepared`): a row reads this instead of each step's decision, which with thousands of answers in a list's own
 * order missed the CPU's caches (see docs/benchmarks.md). The decider keeps one answer per zone spelling and timing
 * values (decisions.ts), so this is prepared once for each.
 */
export interface Prepared {
  owner: PlanLines;
  decided: ZoneDecisions;
  /** Each step's lines' shared parts, three a step (planLineParts) in one array; "" for a step not sent or a text. */
  parts: PlanLineParts;
  /** A text step's parts (smsLines), three a step like `parts`; "" for a step not sent or an email; none without texts. */
  smsParts: PlanLineParts | undefined;
  /** What closes a text step's line: its until and same-subject limit. */
  smsUntil: readonly string[];
  notes: readonly string[];
  zoneSource: ZoneSource;
  /** notes.csv's zone_source and zone_candidates fields (plan-files.ts zoneFields). */
  zoneFields: string;
  /** Rows counted since the tally last took them in (PlanTally.flush), per group slot, and in all. */
  untallied: number[];
  untalliedRows: number;
}

/**
 * A recipient's plan lines. Everything that does not change per row is serialized once: each step's template per
 * variant, and the variant; times come from the decisions, which rows share (prepared).
 */
export class PlanLines {
  /** `templateJson[step][slot]`: slot is the variant index, or the last slot for no variant. */
  private readonly templateJson: string[][];
  private readonly variantJson: string[];
  private readonly templateData: TemplateDataJson;
  /** What closes each step's template data: its step number. */
  private readonly stepJson: string[];
  private readonly stepNumbers: number[];
  private readonly lines: string[] = [];
  constructor(columns: Columns, steps: (Step & { template: string })[], audience: Audience) {
    this.templateData = new TemplateDataJson(columns);
    this.stepJson = steps.map((s) => `"${STEP_KEY}":"${s.number}"}`);
    this.stepNumbers = steps.map((s) => s.number);
    this.templateJson = templatesByVariant(
      audience,
      steps.map((s) => s.template),
    ).map((byGroup) => byGroup.map((t) => JSON.stringify(t)));
    this.variantJson = [...audience.variants.map((v) => JSON.stringify(v.name)), "null"];
  }

  /** The group's slot in per-group tables: the variant index, or the last slot for no variant. */
  slotOf(group: number): number {
    return group === NO_VARIANT ? this.variantJson.length - 1 : group;
  }

  /** What the rows with `decided` share, prepared on the first of them. */
  prepared(decided: ZoneDecisions): Prepared {
    const p = decided.prepared as Prepared | undefined;
    if (p !== undefined && p.owner === this) return p;
    const smsUntil: string[] = [];
    let smsParts: string[] | undefined;
    const parts = decided.steps.flatMap(({ step, time, recurring, text }, k) => {
      if (!time) return ["", "", ""];
      // send_at, IANA zone names and ISO instants hold nothing JSON escapes.
      const p = planLineParts({
        send_at: `"${time.send_at}"`,
        timezone: `"${time.timezone}"`,
        step: String(step.number),
        utc: `"${time.utc}"`,
        schedule_expression: `"${recurring ? recurring.expression : atExpression(time.send_at)}"`,
        ...(recurring && { start_date: `"${recurring.startDate}"`, end_date: `"${recurring.endDate}"` }),
      });
      if (step.channel !== "sms") return p;
      // A text's line: the email row's fields, then channel, phone, body, segments, until (sms-input.ts).
      smsParts ??= new Array<string>(3 * decided.steps.length).fill("");
      const limit = text?.sameSubjectLimit === undefined ? "" : `,"same_subject_limit":${text.sameSubjectLimit}`;
      smsParts[3 * k] = p[0];
      smsParts[3 * k + 1] = p[1];
      smsParts[3 * k + 2] = `${p[2].slice(0, -2)},"channel":"sms","phone":`;
      smsUntil[k] = `,"until":"${text!.until}"${limit}}\n`;
      return ["", "", ""];
    });
    const zoneSource = zoneSourceOf(decided.status);
    const fields = zoneFields(zoneSource, decided.candidates);
    const notes = quotedNoteLines(decided.notes, fields);
    const untallied = new Array<number>(this.variantJson.length).fill(0);
    const made: Prepared = {
      owner: this,
      decided,
      parts,
      smsParts,
      smsUntil,
      notes,
      zoneSource,
      zoneFields: fields,
      untallied,
      untalliedRows: 0,
    };
    return (decided.prepared = made);
  }

  /** The row's lines, in the group with `slot`. */
  of(row: RecipientRow, p: Prepared, slot: number): string {
    // Personalization: every other column, as strings, plus the step; serialized once per row.
    const dataPrefix = this.templateData.prefix(row.fields);
    const emailJson = JSON.stringify(row.email);
    const idJson = JSON.stringify(row.id);
    const variantJson = this.variantJson[slot];
    const lines = this.lines;
    lines.length = 0;
    const parts = p.parts;
    for (let k = 0; 3 * k < parts.length; k++) {
      if (parts[3 * k] === "") continue;
      // Schedule names hold nothing JSON escapes.
      const name = `"${scheduleName(row.id, this.stepNumbers[k])}"`;
      const template = this.templateJson[k][slot];
      lines.push(
        planLineFromParts(parts, 3 * k, name, emailJson, template, dataPrefix + this.stepJson[k], idJson, variantJson),
      );
    }
    // Joined, not appended line by line: a flat string hashes and writes without flattening a rope first.
    return lines.join("");
  }

  /** The row's text lines (the SMS path beside `of`, which writes its emails), in the group with `slot`. */
  smsLines(row: RecipientRow, p: Prepared, slot: number, texts: RowTexts): string {
    const sms = p.smsParts;
    if (sms === undefined) return "";
    const dataPrefix = this.templateData.prefix(row.fields);
    const emailJson = JSON.stringify(row.email);
    const idJson = JSON.stringify(row.id);
    const phoneJson = JSON.stringify(texts.phone);
    let out = "";
    for (let k = 0; 3 * k < sms.length; k++) {
      if (sms[3 * k] === "" || texts.bodies[k] === undefined) continue;
      const name = `"${scheduleName(row.id, this.stepNumbers[k])}"`;
      const head = planLineFromParts(
        sms,
        3 * k,
        name,
        emailJson,
        this.templateJson[k][slot],
        dataPrefix + this.stepJson[k],
        idJson,
        this.variantJson[slot],
      );
      out += `${head}${phoneJson},"body":${JSON.stringify(texts.bodies[k])},"segments":${texts.segments[k]}${p.smsUntil[k]}`;
    }
    return out;
  }
}
