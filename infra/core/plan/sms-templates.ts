/**
 * A text's template as a file (docs/sms.md, "Launching texts"): `<dir>/<name>/sms.txt`, Handlebars like an email's
 * (templates.ts), rendered by the planner per recipient into the plan row's `body` (the sender sends that text as it
 * is: End User Messaging SMS renders nothing). Its variables are read as an email template's are, and its size is
 * counted in message parts (infra/core/sms/segments.ts). Pure: the folder is read through a FolderReader.
 */
import Handlebars from "handlebars";
import { countSegments, SegmentCount } from "../sms/segments";
import { FolderReader, SMS_TEMPLATE_FILE, templateNameProblem, TemplateError, templateVariables } from "./templates";

export interface SmsTemplate {
  name: string;
  /** sms.txt as written, less the editor's trailing line break. */
  text: string;
  /** Variables used outside any block: a row without a value for one is rejected (missing-template-data). */
  required: string[];
  optional: string[];
  /** Uses the check cannot read, as templates.ts lists them. */
  unchecked: string[];
  /** The text with every variable empty: what every recipient's text is at least. */
  fixed: SegmentCount;
}

/** Every text template of `dir` (each folder holding sms.txt), by name, checked: its name and its Handlebars. */
export function readSmsTemplates(dir: string, io: FolderReader): Map<string, SmsTemplate> {
  const out = new Map<string, SmsTemplate>();
  if (!io.exists(dir)) return out;
  for (const e of io.list(dir)) {
    const file = `${dir}/${e.name}/${SMS_TEMPLATE_FILE}`;
    if (!e.isFolder || !io.exists(file)) continue;
    const problem = templateNameProblem(e.name);
    if (problem) throw new TemplateError(`${dir}/${e.name}: ${problem}; rename the folder`);
    out.set(e.name, smsTemplate(e.name, io.read(file), file));
  }
  return out;
}

/** One template from its text; `file` names it in messages. */
export function smsTemplate(name: string, written: string, file: string): SmsTemplate {
  const text = written.replace(/\r?\n$/, "");
  if (text.trim() === "") throw new TemplateError(`${file}: empty; a text needs a body`);
  const found = templateVariables(text, file);
  const folder = file.slice(0, file.length - SMS_TEMPLATE_FILE.length - 1);
  const required = [...found.required].sort();
  const optional = [...found.optional].filter((v) => !found.required.has(v)).sort();
  const unchecked = found.unchecked.map((u) => u.slice(folder.length + 1));
  const fixed = countSegments(renderSms({ name, text } as SmsTemplate, {}));
  return { name, text, required, optional, unchecked, fixed };
}

const COMPILED = new WeakMap<object, HandlebarsTemplateDelegate>();

/** The text for one recipient: the template rendered with their data, as is (a text has no HTML to escape). */
export function renderSms(t: Pick<SmsTemplate, "name" | "text">, data: Record<string, string>): string {
  let render = COMPILED.get(t);
  if (render === undefined) {
    render = Handlebars.compile(t.text, { noEscape: true, strict: false });
    COMPILED.set(t, render);
  }
  return render(data);
}

/** Why a text of `segments` parts is over the limit, or undefined. */
export function segmentsProblem(count: SegmentCount, maxSegments: number): string | undefined {
  if (count.segments <= maxSegments) return undefined;
  return `${count.segments} message parts (${count.units} ${count.encoding === "GSM-7" ? "GSM-7 septets" : "UCS-2 code units"}) where --max-segments is ${maxSegments}`;
}
