/**
 * The templates a campaign or journey needs, checked before anything is planned: each one the run uses (per step and
 * variant, `{variant}` replaced) must be in the templates folder, and each recipient's data must hold every variable
 * its templates use outside a block (infra/core/plan/templates.ts), the variables the send itself fills aside. The check
 * of the data is made once per distinct set of columns with a value (not blank), not per row: a row costs a few comparisons (the 1M-row dry run stays within a few percent).
 */
import { nearest } from "../../../infra/core/text/nearest";
import * as fs from "fs";
import { Audience, NO_VARIANT, templatesByVariant } from "../recipients/audience";
import {
  EmailTemplate,
  FolderReader,
  hasValue,
  lackingVariable,
  providedVariables,
  readTemplateFolder,
  SES_UNSUBSCRIBE_VARIABLE,
} from "../../../infra/core/plan/templates";
import { UNSUBSCRIBE_TEMPLATE_KEY } from "../../../infra/core/consent/unsubscribe";
import { TemplateError } from "../../../infra/core/plan/templates";

/** The default templates folder, used when it exists and `--templates` is not given. */
export const DEFAULT_TEMPLATES_DIR = "templates";

/** The templates read from a folder, by name. */
export interface TemplateSet {
  dir: string;
  templates: Map<string, EmailTemplate>;
}

/** The local file system, as the template reader takes it. */
export const fileSystem: FolderReader = {
  exists: (p) => fs.existsSync(p),
  list: (p) => fs.readdirSync(p, { withFileTypes: true }).map((e) => ({ name: e.name, isFolder: e.isDirectory() })),
  read: (p) => fs.readFileSync(p, "utf8"),
};

/**
 * `--templates DIR|none`: the folder's templates; `none` (templates kept in SES only) or no flag and no `templates/`
 * folder: undefined, no local check. A folder named but absent, or one holding a bad template, stops (exit 2).
 */
export function loadTemplates(flag: string | undefined, io: FolderReader = fileSystem): TemplateSet | undefined {
  if (flag === "none") return undefined;
  const dir = flag ?? DEFAULT_TEMPLATES_DIR;
  if (flag === undefined && !io.exists(dir)) return undefined;
  if (!io.exists(dir))
    throw new TemplateError(`--templates ${dir}: no such folder (give a templates folder, or --templates none)`);
  return { dir, templates: readTemplateFolder(dir, io) };
}

/** A step of a campaign or journey: its number and SES template (undefined when a tool is not told it). */
export interface TemplateStep {
  number: number;
  template?: string;
  /** A text step's template is its sms.txt (sms-templates.ts), not an email's: not looked up here. */
  channel?: "email" | "sms";
}

/**
 * Which template each step and group uses, and what uses each template ("step 1 (variant A)", "step 2"). With
 * variants every recipient has one, so the no-variant group is left out; a step without a template is not checked.
 */
export function templateUses(steps: TemplateStep[], audience: Audience): Map<string, string[]> {
  const uses = new Map<string, string[]>();
  const table = stepTemplateTable(steps, audience);
  table.forEach((bySlot, k) =>
    bySlot.forEach((name, slot) => {
      if (name === undefined || !slotUsed(audience, slot)) return;
      const what = `step ${steps[k].number}${slot < audience.variants.length ? ` (variant ${audience.variants[slot].name})` : ""}`;
      uses.set(name, [...(uses.get(name) ?? []), what]);
    }),
  );
  return uses;
}

/**
 * ` (did you mean "spring-sale"?)` when the folder has a template whose name is a likely misspelling's; never one the
 * run uses already (`used`: variant B's "f-B" is not variant A's "f-A" misspelt).
 */
export function didYouMean(name: string, set: TemplateSet, used: ReadonlySet<string> = new Set()): string {
  const near = nearest(
    name,
    [...set.templates.keys()].filter((t) => !used.has(t)),
  );
  return near ? ` (did you mean "${near}"?)` : "";
}

/** Stops (exit 2) when a template the run uses is not in the folder, naming each and what uses it. */
export function requireTemplates(set: TemplateSet, uses: Map<string, string[]>): void {
  const missing = [...uses].filter(([name]) => !set.templates.has(name));
  if (!missing.length) return;
  const list = missing
    .map(([name, by]) => `"${name}" (${by.join(", ")})${didYouMean(name, set, new Set(uses.keys()))}`)
    .join("; ");
  throw new TemplateError(
    `${missing.length === 1 ? "template" : "templates"} not in ${set.dir}/: ${list}; add ${missing.map(([n]) => `${set.dir}/${n}/`).join(", ")}, or give --templates none if your templates are kept in SES only`,
  );
}

/** `table[step][slot]`: the template name, or undefined for a step without one. */
function stepTemplateTable(steps: TemplateStep[], audience: Audience): (string | undefined)[][] {
  const named = templatesByVariant(
    audience,
    steps.map((s) => s.template ?? ""),
  );
  return named.map((bySlot, k) =>
    bySlot.map((n) =>
      (k > 0 && steps[k].template === undefined) || n === "" || steps[k].channel === "sms" ? undefined : n,
    ),
  );
}

const slotUsed = (audience: Audience, slot: number) =>
  audience.variants.length ? slot < audience.variants.length : true;

/**
 * The per-row check of the template data: does a row's data hold every variable each of its templates uses outside a
 * block? Only the columns some template requires are looked at; a row is keyed by which of them are empty (a bit
 * each), and each key's answer per group and step is computed once.
 */
export class TemplateDataCheck {
  /** The columns the templates require: header index and name. */
  private readonly watched: { index: number; name: string }[];
  /** `templates[step][slot]`. */
  private readonly templates: (EmailTemplate | undefined)[][];
  private readonly stepNumbers: number[];
  private readonly answers = new Map<number | string, (string | undefined)[][]>();
  /** Whether any template requires anything (otherwise every row passes at no cost). */
  readonly active: boolean;
  /** The variables the send has whatever the row holds (templates.ts providedVariables). */
  private readonly provided: string[];

  constructor(
    set: TemplateSet,
    steps: TemplateStep[],
    audience: Audience,
    columns: { header: string[]; data: number[] },
    bulk = false,
  ) {
    this.templates = stepTemplateTable(steps, audience).map((bySlot) =>
      bySlot.map((n) => (n === undefined ? undefined : set.templates.get(n))),
    );
    this.provided = providedVariables(bulk);
    const required = new Set(this.templates.flat().flatMap((t) => t?.required ?? []));
    this.watched = columns.data
      .map((index) => ({ index, name: columns.header[index] }))
      .filter((c) => required.has(c.name));
    this.stepNumbers = steps.map((s) => s.number);
    this.active = this.templates.flat().some((t) => t !== undefined && t.required.length > 0);
  }

  /**
   * The first variable (and its template and step) the row's data lacks for a step in `sent` (step indices), in the
   * group `group` (a variant index or NO_VARIANT), or undefined.
   */
  lacking(
    fields: string[],
    group: number,
    sent: (k: number) => boolean,
  ): { variable: string; template: string; step: number } | undefined {
    if (!this.active) return undefined;
    const key = this.keyOf(fields);
    let byStep = this.answers.get(key);
    if (byStep === undefined) {
      const present = new Set(this.watched.filter((c) => hasValue(fields[c.index])).map((c) => c.name));
      byStep = this.templates.map((bySlot) =>
        bySlot.map((t) => (t ? lackingVariable(t, (v) => present.has(v), this.provided) : undefined)),
      );
      this.answers.set(key, byStep);
    }
    const slot = group === NO_VARIANT ? this.templates[0].length - 1 : group;
    for (let k = 0; k < byStep.length; k++) {
      const variable = byStep[k][slot];
      if (variable !== undefined && sent(k))
        return { variable, template: this.templates[k][slot]!.name, step: this.stepNumbers[k] };
    }
    return undefined;
  }

  /** Which watched columns have a value (hasValue): a bit each (up to 30 columns), else a string of 0s and 1s. */
  private keyOf(fields: string[]): number | string {
    const w = this.watched;
    if (w.length <= 30) {
      let key = 0;
      for (let b = 0; b < w.length; b++) if (hasValue(fields[w[b].index])) key |= 1 << b;
      return key;
    }
    return w.map((c) => (hasValue(fields[c.index]) ? "1" : "0")).join("");
  }
}

/** The rejects.csv text of a row whose data lacks a variable. */
export function lackingText(l: { variable: string; template: string; step: number }): string {
  const what = `no value for "${l.variable}", which template ${l.template} (step ${l.step}) uses outside an {{#if}} block`;
  // The variables sendtime or SES fill in one kind of send only (providedVariables): the row cannot be the fix.
  if (l.variable === UNSUBSCRIBE_TEMPLATE_KEY)
    return `${what}: sendtime fills it only in a bulk send (--bulk); a plain send's one-click link is SES's {{${SES_UNSUBSCRIBE_VARIABLE}}}`;
  if (l.variable === SES_UNSUBSCRIBE_VARIABLE)
    return `${what}: SES fills it only in a plain send (a bulk send has no list management); a bulk send's link is {{${UNSUBSCRIBE_TEMPLATE_KEY}}}`;
  return `${what}; give the row a value, or put the variable inside {{#if ${l.variable}}}…{{/if}}`;
}

/** "template t: body.html:3: {{name}} inside …": each use the check cannot read, in the templates `names`. */
export function uncheckedForms(set: TemplateSet | undefined, names: readonly string[]): string[] {
  if (!set) return [];
  return names.flatMap((n) => (set.templates.get(n)?.unchecked ?? []).map((u) => `template ${n}: ${u}`));
}

/**
 * Before planning: the templates folder (`--templates`), and every template the steps and variants use checked in it
 * (exit 2 naming a missing one and what uses it). Returns the folder (none: no local check) and the names used, which a
 * real launch also asks SES for.
 */
export function campaignTemplates(
  flag: string | undefined,
  steps: TemplateStep[],
  audience: Audience,
  io: FolderReader = fileSystem,
): { set?: TemplateSet; names: string[]; notChecked: string[] } {
  const set = loadTemplates(flag, io);
  const uses = templateUses(steps, audience);
  if (set) requireTemplates(set, uses);
  const names = [...uses.keys()];
  return { set, names, notChecked: uncheckedForms(set, names) };
}

/** Before planning: one warning line on stderr for each use the check cannot read (campaignTemplates' notChecked). */
export function warnNotChecked(notChecked: readonly string[], err: (text: string) => void): void {
  for (const line of notChecked) {
    const at = line.indexOf(": ");
    err(`warning: ${line.slice(0, at)}: not checked: ${line.slice(at + 2)}\n`);
  }
}
