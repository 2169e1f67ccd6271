/**
 * Templates as files: `<dir>/<name>/{subject.txt,body.html,body.txt}`, one SES template per folder, in SES's Handlebars
 * syntax (https://docs.aws.amazon.com/ses/latest/dg/send-personalized-email-advanced.html). The stack deploys them and
 * the launcher, size-window, enrol and send-test read them: all through this module, so a folder means the same to
 * each. Pure: the folder is read through the `FolderReader` the caller gives (fs in practice).
 */
import Handlebars from "handlebars";
import { TemplateError } from "./errors";
import { SES_NAME } from "./naming";

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
 * what is wrong (TemplateError). Files beside the template folders (a README) are not templates and are left alone.
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
    templates.set(name, readTemplate(`${dir}/${name}`, name, io));
  }
  return templates;
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
  for (const [part, file] of Object.entries(TEMPLATE_FILES) as [Part, string][]) {
    const found = templateVariables(parts[part], `${folder}/${file}`);
    found.required.forEach((v) => required.add(v));
    found.optional.forEach((v) => optional.add(v));
  }
  for (const v of required) optional.delete(v);
  return { name, ...parts, required: [...required].sort(), optional: [...optional].sort() };
}

/**
 * The variables a Handlebars text uses: outside any block (required) or only inside `{{#if}}`, `{{#unless}}`,
 * `{{#each}}`, `{{#with}}` blocks, their `{{else}}` parts and conditions (optional). A path `{{a.b}}` needs its first
 * part `a`; `this`, `../x` and `@index`-style data are not variables of the send's data. Malformed Handlebars is one line
 * naming `file` (and Handlebars' line).
 */
export function templateVariables(text: string, file: string): { required: Set<string>; optional: Set<string> } {
  let program: hbs.AST.Program;
  try {
    program = Handlebars.parse(text);
  } catch (e) {
    const lines = String((e as Error).message).split("\n");
    throw new TemplateError(
      `${file}: malformed Handlebars: ${lines[0].replace(/:$/, "")}${lines.length > 1 ? `: ${lines[lines.length - 1]}` : ""}`,
    );
  }
  const required = new Set<string>();
  const optional = new Set<string>();
  const use = (node: hbs.AST.Node | undefined, inBlock: boolean) => {
    if (!node) return;
    if (node.type === "PathExpression") {
      const p = node as hbs.AST.PathExpression;
      if (p.data || p.depth > 0 || p.parts.length === 0) return;
      (inBlock ? optional : required).add(p.parts[0]);
    } else if (node.type === "SubExpression") {
      const s = node as hbs.AST.SubExpression;
      s.params.forEach((x) => use(x, inBlock));
      s.hash?.pairs.forEach((x) => use(x.value, inBlock));
    }
  };
  const walk = (p: hbs.AST.Program | undefined, inBlock: boolean) => {
    for (const s of p?.body ?? []) {
      if (s.type === "MustacheStatement") {
        const m = s as hbs.AST.MustacheStatement;
        // `{{name}}` is a variable; `{{helper a b}}` calls a helper with variables a and b.
        if (m.params.length === 0 && !m.hash) use(m.path, inBlock);
        m.params.forEach((x) => use(x, inBlock));
        m.hash?.pairs.forEach((x) => use(x.value, inBlock));
      } else if (s.type === "BlockStatement") {
        const b = s as hbs.AST.BlockStatement;
        b.params.forEach((x) => use(x, true));
        walk(b.program, true);
        walk(b.inverse, true);
      } else if (s.type === "PartialStatement" || s.type === "PartialBlockStatement") {
        const line = (s as hbs.AST.PartialStatement).loc?.start.line;
        throw new TemplateError(
          `${file}:${line}: partials ({{> name}}) cannot be checked or sent as one SES template; inline it`,
        );
      }
    }
  };
  walk(program, false);
  for (const v of required) optional.delete(v);
  return { required, optional };
}

/**
 * The first variable of `template` that `has` says the data lacks (the step number is always there), or undefined.
 * A value is lacking when it is absent or empty: SES would render `Hi ,` — a variable that may be empty belongs in an
 * `{{#if}}` block, where an empty value is false.
 */
export function lackingVariable(template: EmailTemplate, has: (variable: string) => boolean): string | undefined {
  return template.required.find((v) => v !== STEP_VARIABLE && !has(v));
}

/** One line per journey step whose template `templates` lacks (`journey onboarding step 2: template "x" is not in …`). */
export function journeyTemplateProblems(
  journeys: { name: string; steps: { template: string }[] }[],
  templates: ReadonlySet<string> | Map<string, unknown>,
  dir: string,
): string[] {
  return journeys.flatMap((j) =>
    j.steps
      .map((s, k) => ({ s, k }))
      .filter(({ s }) => !templates.has(s.template))
      .map(
        ({ s, k }) =>
          `journey ${j.name} step ${k + 1}: template "${s.template}" is not in ${dir} (add ${dir}/${s.template}/)`,
      ),
  );
}
