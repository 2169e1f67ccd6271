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
  /** Each step's lines' shared parts, three a step (planLineParts) in one array; "" for a step not sent. */
  parts: PlanLineParts;
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
    const parts = decided.steps.flatMap(({ step, time, recurring }) => {
      if (!time) return ["", "", ""];
      // send_at, IANA zone names and ISO instants hold nothing JSON escapes.
      return planLineParts({
        send_at: `"${time.send_at}"`,
        timezone: `"${time.timezone}"`,
        step: String(step.number),
        utc: `"${time.utc}"`,
        schedule_expression: `"${recurring ? recurring.expression : atExpression(time.send_at)}"`,
        ...(recurring && { start_date: `"${recurring.startDate}"`, end_date: `"${recurring.endDate}"` }),
      });
    });
    const zoneSource = zoneSourceOf(decided.status);
    const fields = zoneFields(zoneSource, decided.candidates);
    const notes = quotedNoteLines(decided.notes, fields);
    const untallied = new Array<number>(this.variantJson.length).fill(0);
    const made: Prepared = {
      owner: this,
      decided,
      parts,
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
}
