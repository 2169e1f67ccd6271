/**
 * Templates as files: `<dir>/<name>/{subject.txt,body.html,body.txt}`, one SES template per folder, in SES's Handlebars
 * syntax (https://docs.aws.amazon.com/ses/latest/dg/send-personalized-email-advanced.html). The stack deploys them and
 * the launcher, size-window, enrol and send-test read them: all through this module, so a folder means the same to
 * each. Pure: the folder is read through the `FolderReader` the caller gives (fs in practice).
 */
import Handlebars from "handlebars";
import { SES_NAME } from "./naming";
import { UNSUBSCRIBE_TEMPLATE_KEY } from "../consent/unsubscribe";
import { InputError } from "../errors";

/** A template folder that is not a template (a file missing, a name SES refuses, malformed Handlebars), or a template a run needs and lacks: exit 2. */
export class TemplateError extends InputError {}

/** The files of a template folder, each required: SES's Subject, Html and Text parts. */
export const TEMPLATE_FILES = { subject: "subject.txt", html: "body.html", text: "body.txt" } as const;
type Part = keyof typeof TEMPLATE_FILES;

/** SES takes at most 500 KB of Html and Text together (CreateTemplate). */
export const MAX_TEMPLATE_BODY_BYTES = 500 * 1024;

/** The variable the planner adds to every send's data: the step number. */
export const STEP_VARIABLE = "step";

export interface EmailTemplate {
  name: string;
  subject: string;
  html: string;
  text: string;
  /** Variables used outside any block (`{{first_name}}`): a send whose data lacks one of them is refused. */
  required: string[];
  /** Variables used only in a block or as its condition (`{{#if city}}…{{city}}…{{/if}}`): they may be absent. */
  optional: string[];
  /** Uses the check cannot read (`body.html:3: {{name}} inside {{#each items}} …`): said before planning. */
  unchecked: string[];
}

/** What this module needs of a file system; `fs` has it (readdirSync with file types, readFileSync). */
export interface FolderReader {
  exists(path: string): boolean;
  /** The entries of a folder: names and whether each is a folder. */
  list(path: string): { name: string; isFolder: boolean }[];
  read(path: string): string;
}

/** Why `name` cannot be an SES template name, or undefined: 1–64 of A-Z a-z 0-9 _ -. */
export function templateNameProblem(name: string): string | undefined {
  return SES_NAME.test(name) ? undefined : `"${name}" is not an SES template name (1–64 characters of A-Z a-z 0-9 _ -)`;
}

/**
 * Every template of `dir` by name, each checked: its name, its three files, its size, its Handlebars. A folder that is
 * not a template (a name SES refuses, a file missing, malformed Handlebars) stops with one line naming the file and
 * what is wrong (TemplateError). Files beside the template folders (a README) are not templates and are left alone,
 * nor is a folder of a text message only (`sms.txt`, none of the email's files: not an SES template).
 */
export function readTemplateFolder(dir: string, io: FolderReader): Map<string, EmailTemplate> {
  if (!io.exists(dir)) throw new TemplateError(`${dir}: no such templates folder`);
  const templates = new Map<string, EmailTemplate>();
  const folders = io
    .list(dir)
    .filter((e) => e.isFolder)
    .map((e) => e.name)
    .sort();
  for (const name of folders) {
    const problem = templateNameProblem(name);
    if (problem) throw new TemplateError(`${dir}/${name}: ${problem}; rename the folder`);
    // A text's folder (sms.txt alone: sms-templates.ts) is not an SES template.
    if (isSmsOnlyFolder(`${dir}/${name}`, io)) continue;
    templates.set(name, readTemplate(`${dir}/${name}`, name, io));
  }
  return templates;
}

/** The file of a text's template (sms-templates.ts). */
export const SMS_TEMPLATE_FILE = "sms.txt";

/** A folder holding sms.txt and none of an email's files: a text's template only. */
export function isSmsOnlyFolder(folder: string, io: FolderReader): boolean {
  return (
    io.exists(`${folder}/${SMS_TEMPLATE_FILE}`) &&
    Object.values(TEMPLATE_FILES).every((f) => !io.exists(`${folder}/${f}`))
  );
}

function readTemplate(folder: string, name: string, io: FolderReader): EmailTemplate {
  const parts = {} as Record<Part, string>;
  for (const [part, file] of Object.entries(TEMPLATE_FILES) as [Part, string][]) {
    const path = `${folder}/${file}`;
    if (!io.exists(path))
      throw new TemplateError(`${path}: missing; a template folder holds ${Object.values(TEMPLATE_FILES).join(", ")}`);
    parts[part] = io.read(path);
  }
  if (parts.subject.trim() === "")
    throw new TemplateError(`${folder}/${TEMPLATE_FILES.subject}: empty; SES needs a subject`);
  // A trailing line break in subject.txt is the editor's, not the subject's.
  parts.subject = parts.subject.replace(/\r?\n$/, "");
  if (/[\r\n]/.test(parts.subject))
    throw new TemplateError(`${folder}/${TEMPLATE_FILES.subject}: a subject is one line`);
  const bytes = Buffer.byteLength(parts.html) + Buffer.byteLength(parts.text);
  if (bytes > MAX_TEMPLATE_BODY_BYTES)
    throw new TemplateError(
      `${folder}: body.html and body.txt hold ${bytes} bytes; SES takes at most ${MAX_TEMPLATE_BODY_BYTES}`,
    );
  const required = new Set<string>();
  const optional = new Set<string>();
  const unchecked: string[] = [];
  for (const [part, file] of Object.entries(TEMPLATE_FILES) as [Part, string][]) {
    const found = templateVariables(parts[part], `${folder}/${file}`);
    found.required.forEach((v) => required.add(v));
    found.optional.forEach((v) => optional.add(v));
    unchecked.push(...found.unchecked.map((u) => u.slice(folder.length + 1)));
  }
  for (const v of required) optional.delete(v);
  return { name, ...parts, required: [...required].sort(), optional: [...optional].sort(), unchecked };
}

/** The variables of one Handlebars text: required, optional, and the uses the check cannot read (one line each). */
export interface TemplateVariables {
  required: Set<string>;
  optional: Set<string>;
  /** `file:line: {{form}} …why`: a use whose variable the check cannot tell; the run says so before planning. */
  unchecked: string[];
}

/** A context a path can reach: the row's data (the first), or the value of an enclosing {{#with}} or {{#each}}. */
interface Context {
  /** `{{#each items}}`, for messages; undefined for the row's data. */
  block?: string;
  /** What a field of its value is, in words: "each item", "city". */
  fieldOf?: string;
}

/**
 * The variables a Handlebars text uses: outside any block (required) or only inside `{{#if}}`, `{{#unless}}`,
 * `{{#each}}`, `{{#with}}` blocks, their `{{else}}` parts and conditions (optional). A variable is read as
 * `{{name}}` (or `{{a.b}}`: its first part), `{{@root.name}}`, `{{lookup . 'name'}}` (`this`, `@root` or `../` up to
 * the row), as a helper's argument or in a subexpression; `{{this}}` in a `{{#with x}}` is x, `{{../name}}` there the
 * row's. What cannot be told is listed in `unchecked` with its line: a field of a block's value (a row's values are
 * text), `{{lookup . field}}` (the variable is named by data), a path above the row, a decorator. Malformed Handlebars
 * is one line naming `file` (and Handlebars' line).
 */
export function templateVariables(text: string, file: string): TemplateVariables {
  let program: hbs.AST.Program;
  try {
    program = Handlebars.parse(text);
  } catch (e) {
    const lines = String((e as Error).message).split("\n");
    throw new TemplateError(
      `${file}: malformed Handlebars: ${lines[0].replace(/:$/, "")}${lines.length > 1 ? `: ${lines[lines.length - 1]}` : ""}`,
    );
  }
  const found: TemplateVariables = { required: new Set(), optional: new Set(), unchecked: [] };
  new VariableWalker(file, found).program(program, [{}], false);
  for (const v of found.required) found.optional.delete(v);
  found.unchecked = [...new Set(found.unchecked)];
  return found;
}

type Expression = hbs.AST.Expression;
const CONTEXT_BLOCKS = new Set(["with", "each"]);

/** The source form of an expression, for messages (`.`, `field`, `'x'`, `(lookup . 'x')`). */
function shown(e: Expression): string {
  if (e.type === "SubExpression") {
    const s = e as hbs.AST.SubExpression;
    return `(${[shown(s.path), ...s.params.map(shown)].join(" ")})`;
  }
  if (e.type === "StringLiteral") return `'${(e as hbs.AST.StringLiteral).value}'`;
  return String((e as { original?: unknown }).original ?? e.type);
}

/** Walks a template's statements, resolving each path against the contexts it can reach. */
class VariableWalker {
  constructor(
    private readonly file: string,
    private readonly found: TemplateVariables,
  ) {}

  program(p: hbs.AST.Program | undefined, contexts: Context[], inBlock: boolean): void {
    for (const s of p?.body ?? []) {
      const line = s.loc?.start.line;
      if (s.type === "MustacheStatement") {
        const m = s as hbs.AST.MustacheStatement;
        const form = `{{${[shown(m.path), ...m.params.map(shown)].join(" ")}}}`;
        // `{{name}}` is a variable; `{{helper a b}}` calls a helper with variables a and b.
        if (m.params.length === 0 && !m.hash) this.use(m.path, contexts, inBlock, line, form);
        else this.call(m.path, m.params, m.hash, contexts, inBlock, line, form);
      } else if (s.type === "BlockStatement") {
        const b = s as hbs.AST.BlockStatement;
        const form = `{{#${[shown(b.path), ...b.params.map(shown)].join(" ")}}}`;
        this.call(b.path, b.params, b.hash, contexts, true, line, form);
        const helper = shown(b.path);
        const value = b.params[0];
        const inner: Context[] = CONTEXT_BLOCKS.has(helper)
          ? [
              ...contexts,
              { block: form, fieldOf: helper === "each" ? "each item" : value ? shown(value) : "its value" },
            ]
          : contexts;
        this.program(b.program, inner, true);
        this.program(b.inverse, contexts, true);
      } else if (s.type === "PartialStatement" || s.type === "PartialBlockStatement") {
        throw new TemplateError(
          `${this.file}:${line}: partials ({{> name}}) cannot be checked or sent as one SES template; inline it`,
        );
      } else if (s.type === "DecoratorBlock" || s.type === "Decorator") {
        this.unchecked(line, `a decorator ({{* …}})`, "is not read");
      }
    }
  }

  /** A helper call's arguments; `lookup` with the row (or a block's value) and a name reads that variable. */
  private call(
    path: Expression,
    params: Expression[],
    hash: hbs.AST.Hash | undefined,
    contexts: Context[],
    inBlock: boolean,
    line: number | undefined,
    form: string,
  ): void {
    const on = params[0] && this.contextOf(params[0], contexts);
    if (shown(path) === "lookup" && on !== undefined && params.length === 2) {
      const key = params[1];
      if (key.type === "StringLiteral" || key.type === "NumberLiteral") {
        const name = String((key as hbs.AST.StringLiteral).value);
        if (on === 0) this.add(name, inBlock);
        else this.unchecked(line, form, `reads a field of ${contexts[on].fieldOf}, and a row's values are text`);
      } else {
        this.use(key, contexts, inBlock, line, form);
        this.unchecked(line, form, "reads the variable the row's field names");
      }
      return;
    }
    for (const x of params) this.use(x, contexts, inBlock, line, form);
    for (const pair of hash?.pairs ?? []) this.use(pair.value, contexts, inBlock, line, form);
  }

  /** An expression's variables: a path's, or a subexpression's arguments. */
  private use(e: Expression, contexts: Context[], inBlock: boolean, line: number | undefined, form: string): void {
    if (e.type === "SubExpression") {
      const s = e as hbs.AST.SubExpression;
      this.call(s.path, s.params, s.hash, contexts, inBlock, line, form);
      return;
    }
    if (e.type !== "PathExpression") return;
    const p = e as hbs.AST.PathExpression;
    if (p.data) {
      // `@root.name` is the row's; `@index`, `@key`, `@first`, `@last` are each's own data.
      if (p.parts[0] === "root" && p.parts.length > 1) this.add(p.parts[1], inBlock);
      return;
    }
    const at = contexts.length - 1 - p.depth;
    if (at < 0) return this.unchecked(line, form, "reaches above the row's data");
    if (p.parts.length === 0) return; // `this`: the row, or a block's value (its own condition's variable)
    if (at === 0) return this.add(p.parts[0], inBlock);
    this.unchecked(
      line,
      `{{${p.original}}} inside ${contexts[at].block}`,
      `reads a field of ${contexts[at].fieldOf}, and a row's values are text`,
    );
  }

  /** Which context an expression names (`.`, `this`, `../`, `@root`): its index in `contexts`, or undefined. */
  private contextOf(e: Expression, contexts: Context[]): number | undefined {
    if (e.type !== "PathExpression") return undefined;
    const p = e as hbs.AST.PathExpression;
    if (p.data) return p.parts.length === 1 && p.parts[0] === "root" ? 0 : undefined;
    const at = contexts.length - 1 - p.depth;
    return p.parts.length === 0 && at >= 0 ? at : undefined;
  }

  private add(name: string, inBlock: boolean): void {
    (inBlock ? this.found.optional : this.found.required).add(name);
  }

  private unchecked(line: number | undefined, form: string, why: string): void {
    this.found.unchecked.push(`${this.file}:${line}: ${form} ${why}`);
  }
}

/**
 * The first variable of `template` that `has` says the data lacks, or undefined; `provided` are filled by sendtime
 * (or SES) whatever the row holds (providedVariables). A value is lacking when it is absent, empty or only white
 * space: SES would render `Hi ,` — a variable that may be empty belongs in an `{{#if}}` block, where an empty value
 * is false.
 */
export function lackingVariable(
  template: EmailTemplate,
  has: (variable: string) => boolean,
  provided: readonly string[] = [STEP_VARIABLE],
): string | undefined {
  return template.required.find((v) => !provided.includes(v) && !has(v));
}

/** SES's own placeholder for its one-click unsubscribe link, filled in a send with ListManagementOptions. */
export const SES_UNSUBSCRIBE_VARIABLE = "amazonSESUnsubscribeUrl";

/**
 * The variables a campaign's send has whatever its row holds: the step number (the planner adds it); in a bulk send,
 * the entry's signed `unsubscribe_url` (bulk.ts); in a plain send, SES's `{{amazonSESUnsubscribeUrl}}`, which SES
 * fills from the stack's unsubscribe contact list (ListManagementOptions; a bulk send has none).
 */
export function providedVariables(bulk: boolean): string[] {
  return [STEP_VARIABLE, bulk ? UNSUBSCRIBE_TEMPLATE_KEY : SES_UNSUBSCRIBE_VARIABLE];
}

/** Whether a value of the send's data counts as given: not absent, not empty, not only white space. */
export function hasValue(value: unknown): boolean {
  return typeof value === "string" ? value.trim() !== "" : value !== undefined && value !== null;
}

/**
 * One line per journey email step whose template `templates` lacks (`journey onboarding step 2: template "x" is not
 * in …`). SMS steps' templates (sms.txt) are checked by infra/core/journeys/sms-steps.ts.
 */
export function journeyTemplateProblems(
  journeys: { name: string; steps: { template: string; channel?: string }[] }[],
  templates: ReadonlySet<string> | Map<string, unknown>,
  dir: string,
): string[] {
  return journeys.flatMap((j) =>
    j.steps
      .map((s, k) => ({ s, k }))
      .filter(({ s }) => s.channel !== "sms" && !templates.has(s.template))
      .map(
        ({ s, k }) =>
          `journey ${j.name} step ${k + 1}: template "${s.template}" is not in ${dir} (add ${dir}/${s.template}/)`,
      ),
  );
}
