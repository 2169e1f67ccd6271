/** The --conversions file of campaign-report: read, then checked against the report's variants and recipients. */
import { InputError } from "../../../infra/core/errors";
import { CampaignReport, HOLDOUT_NAME } from "./campaign-report";
import { n } from "./report-text";

/**
 * A conversions file: `variant,conversions` then one line per variant (and `holdout`), counts as whole numbers. Each
 * problem is one InputError naming the file and line. Which names are allowed (the campaign's variants) and how many
 * conversions a variant can have (its recipients) is checked against the report: see conversionsProblem.
 */
export function parseConversions(text: string, file: string): Map<string, number> {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  while (lines.length && lines[lines.length - 1].trim() === "") lines.pop();
  if (lines[0]?.trim().replace(/\s*,\s*/, ",") !== "variant,conversions")
    throw new InputError(`${file} line 1: the header must be variant,conversions`);
  const out = new Map<string, number>();
  lines.slice(1).forEach((raw, i) => {
    const where = `${file} line ${i + 2}`;
    const cells = raw.split(",").map((c) => c.trim());
    if (cells.length !== 2 || !/^[A-Za-z0-9_-]{1,32}$/.test(cells[0]))
      throw new InputError(
        `${where}: "${raw}" is not variant,conversions (a variant name, holdout or no-variant, then a count)`,
      );
    if (!/^\d{1,15}$/.test(cells[1]))
      throw new InputError(`${where}: conversions "${cells[1]}" must be a whole number 0 or more`);
    if (out.has(cells[0])) throw new InputError(`${where}: ${cells[0]} is given twice`);
    out.set(cells[0], Number(cells[1]));
  });
  if (out.size === 0)
    throw new InputError(`${file}: no conversions (one line per variant and holdout after the header)`);
  return out;
}

/** Why the conversions do not fit the campaign (an unknown variant, more conversions than recipients), or undefined. */
export function conversionsProblem(r: CampaignReport, file: string): string | undefined {
  const known = [...r.variants.map((v) => v.variant), HOLDOUT_NAME];
  for (const c of r.conversions ?? []) {
    if (!known.includes(c.variant))
      return `${file}: variant ${c.variant} is not in campaign ${r.campaign} (it has ${known.join(", ")})`;
    if (c.conversions > c.recipients)
      return `${file}: ${c.variant} has ${n(c.conversions)} conversions but ${n(c.recipients)} recipients in the launch records`;
  }
  return undefined;
}
