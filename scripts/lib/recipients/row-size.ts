/**
 * A row's personalization as plan JSON, and whether its plan lines could be too large for a Distributed Map batch or
 * SES TemplateData (recipient-rows.ts rejects such a row).
 */
import { MAX_PLAN_ROW_BYTES, planLineFromJson } from "../../../infra/core/plan/plan-row";
import { scheduler, ses } from "../../../infra/core/plan/quotas";
import { Columns, STEP_KEY } from "./recipient-columns";

/**
 * A row's personalization as JSON text, open for the step number: `{"first_name":"Ana","city":"Oslo",` (`{` without
 * any). The text JSON.stringify gives for an object of the columns' values (no prototype: a column named __proto__ is
 * data like any other), in its key order (integer-like names first); built from each column's key text, rendered once.
 */
export class TemplateDataJson {
  /** Column indices in JSON.stringify's key order, and each one's `{"name":` or `,"name":`. */
  private readonly order: number[];
  private readonly keys: string[];
  /** Reused: the keys and values of a row, then the closing comma. */
  private readonly pieces: string[];

  constructor(columns: Columns) {
    const probe: Record<string, number> = Object.create(null);
    for (const i of columns.data) probe[columns.header[i]] = i;
    this.order = Object.keys(probe).map((name) => probe[name]);
    this.keys = this.order.map((i, n) => (n === 0 ? "{" : ",") + JSON.stringify(columns.header[i]) + ":");
    this.pieces = new Array<string>(2 * this.order.length + 1).fill("");
    this.pieces[2 * this.order.length] = ",";
  }

  /** One flat string (joined, not concatenated into a rope): each of the row's plan lines copies it. */
  prefix(fields: string[]): string {
    const { order, keys, pieces } = this;
    if (order.length === 0) return "{";
    for (let n = 0; n < order.length; n++) {
      pieces[2 * n] = keys[n];
      pieces[2 * n + 1] = JSON.stringify(fields[order[n]]);
    }
    return pieces.join("");
  }
}

/**
 * Whether a row's plan lines could exceed what one Distributed Map batch or SES TemplateData takes, whatever its zone,
 * step, variant and template: the parts that vary are counted at their longest. Most rows are far below and pass on
 * their field lengths alone (a UTF-16 unit is at most 6 bytes of JSON).
 */
export class PlanLineBound {
  /** Bytes of a line without its row-specific parts, with zone, time, name, template and variant at their longest. */
  private readonly fixedBytes: number;
  private readonly stepJson: string;
  private readonly templateData: TemplateDataJson;

  constructor(
    private readonly columns: Columns,
    steps: number,
  ) {
    this.stepJson = `"${STEP_KEY}":"${steps}"}`;
    this.templateData = new TemplateDataJson(columns);
    const longest = (n: number) => `"${"x".repeat(n)}"`;
    this.fixedBytes = planLineFromJson({
      schedule_name: longest(scheduler.nameMaxLength),
      send_at: longest(19),
      timezone: longest(scheduler.timezoneMaxLength),
      email: "",
      template: longest(64),
      template_data: "",
      recipient_id: "",
      step: String(steps),
      utc: longest(24),
      variant: longest(32),
      schedule_expression: longest(256),
    }).length;
  }

  tooLarge(id: string, email: string, fields: string[]): boolean {
    let units = id.length + email.length;
    for (const i of this.columns.data) units += fields[i].length + this.columns.header[i].length + 6;
    if (this.fixedBytes + units * 6 + 64 <= Math.min(MAX_PLAN_ROW_BYTES, ses.maxTemplateDataChars)) return false;
    const templateData = this.templateData.prefix(fields) + this.stepJson;
    if (templateData.length > ses.maxTemplateDataChars) return true;
    const bytes =
      this.fixedBytes +
      Buffer.byteLength(templateData) +
      Buffer.byteLength(JSON.stringify(email)) +
      Buffer.byteLength(JSON.stringify(id));
    return bytes > MAX_PLAN_ROW_BYTES;
  }
}
