/**
 * One test mail (scripts/send-test.ts): its template data, from JSON or from one row of a recipient list as the
 * launcher would send it, and a local rendering of it as one HTML page (subject, HTML part, text part).
 */
import Handlebars from "handlebars";
import { EmailTemplate, hasValue, lackingVariable, STEP_VARIABLE } from "../../../infra/core/plan/templates";
import { InputError } from "../../../infra/core/errors";
import { TemplateError } from "../../../infra/core/plan/templates";
import { recipientColumns } from "../recipients/recipient-columns";
import { CsvEncoding, openRecipientCsv } from "../recipients/recipients";

export type TemplateData = Record<string, unknown>;

/** `--data JSON`: an object; `step` is "1" unless given, as in step 1 of a campaign. */
export function dataFromJson(raw: string): TemplateData {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (e) {
    throw new InputError(`--data: not JSON (${(e as Error).message})`);
  }
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new InputError(`--data: a JSON object of the template's variables`);
  return { [STEP_VARIABLE]: "1", ...(v as TemplateData) };
}

/** The row of `file` whose id is `id`, as its plan line's template data: every personalization column and step "1". */
export async function dataFromRow(file: string, id: string, encoding: CsvEncoding = "utf8"): Promise<TemplateData> {
  const csv = await openRecipientCsv(file, encoding);
  const columns = recipientColumns(file, csv.header);
  for await (const rec of csv.records) {
    if (rec.fields[columns.id] !== id) continue;
    if (rec.fields.length !== columns.header.length)
      throw new InputError(
        `${file}:${rec.line}: ${rec.fields.length} fields where the header has ${columns.header.length}`,
      );
    const data: TemplateData = Object.create(null);
    for (const i of columns.data) data[columns.header[i]] = rec.fields[i];
    return { ...data, [STEP_VARIABLE]: "1" };
  }
  throw new InputError(`${file}: no row with id "${id}"`);
}

/** Stops (exit 2) when the data lacks a variable the template uses outside a block: SES would refuse to render it. */
export function requireData(t: EmailTemplate, data: TemplateData): void {
  const lacking = lackingVariable(t, (v) => hasValue(data[v]));
  if (lacking !== undefined)
    throw new TemplateError(
      `template ${t.name} uses "${lacking}" outside an {{#if}} block and the data has no value for it (a launch rejects such a row: missing-template-data)`,
    );
}

/** The mail as SES's Handlebars renders it: subject, HTML and text. */
export function renderMail(t: EmailTemplate, data: TemplateData): { subject: string; html: string; text: string } {
  const render = (text: string, escape: boolean) =>
    Handlebars.compile(text, { noEscape: !escape, strict: false })(data);
  return { subject: render(t.subject, false), html: render(t.html, true), text: render(t.text, false) };
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** One page to look at: the subject, the HTML part in a frame of its own (its styles stay its own), the text part. */
export function previewPage(templateName: string, mail: { subject: string; html: string; text: string }): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(mail.subject)} — ${escapeHtml(templateName)}</title></head>
<body style="font-family: sans-serif; max-width: 60rem; margin: 1rem auto">
<p>Template <code>${escapeHtml(templateName)}</code>, rendered locally with Handlebars (SES renders the same syntax).</p>
<h1 id="subject">${escapeHtml(mail.subject)}</h1>
<h2>HTML part</h2>
<iframe id="html" title="HTML part" style="width: 100%; height: 32rem; border: 1px solid #ccc" srcdoc="${escapeHtml(mail.html)}"></iframe>
<h2>Text part</h2>
<pre id="text" style="white-space: pre-wrap; border: 1px solid #ccc; padding: 1rem">${escapeHtml(mail.text)}</pre>
</body>
</html>
`;
}
