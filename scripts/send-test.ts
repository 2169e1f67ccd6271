/**
 * One test mail of a template: rendered locally to an HTML page, or sent now through SES. See COMMAND (its --help).
 */
import * as fs from "fs";
import { isEmailAddress } from "../infra/core/send/email";
import { UsageError } from "../infra/core/errors";
import { TemplateError } from "../infra/core/plan/templates";
import { sesClient } from "./lib/aws/clients";
import { requireSesTemplates, sendTestEmail } from "./lib/aws/ses-templates";
import { requireOutputs } from "./lib/aws/stack-outputs";
import { reportingStackFlags } from "./lib/cli/aws-flags";
import { dryRunFlag, RECIPIENTS, TEMPLATE, TEMPLATES } from "./lib/cli/common-flags";
import { path as pathParser } from "./lib/cli/parsers";
import { required, runMain } from "./lib/cli/run";
import { stackCommand } from "./lib/cli/stack-command";
import { didYouMean, loadTemplates } from "./lib/templates/campaign-templates";
import {
  dataFromJson,
  dataFromRow,
  previewPage,
  renderMail,
  requireData,
  TemplateData,
} from "./lib/templates/test-mail";

const FLAGS = {
  template: TEMPLATE,
  templates: { ...TEMPLATES, note: "a render needs it, a send checks the data against it" },
  data: { type: "string", value: "JSON", help: "the mail's data, a JSON object (step is 1 unless it sets it)" },
  recipients: { ...RECIPIENTS, value: "CSV", note: "or the data of one row of this list", with: "row" },
  row: { type: "string", value: "ID", help: "the row's id" },
  render: {
    type: "string",
    value: "FILE.html",
    path: true,
    parse: pathParser(),
    help: "render locally into one page: subject, HTML part, text part",
  },
  address: {
    type: "string",
    value: "ADDRESS",
    help: "or send now through SES with the stack's sender and configuration set, tagged campaign=test",
  },
  ...dryRunFlag("with --address: check the template in SES and the data, send nothing"),
  ...reportingStackFlags({ seconds: 60, json: "{template, rendered} or {template, to, messageId, dryRun}" }),
} as const;

const DECLARATION = {
  script: "send-test",
  usage: [
    "--template NAME (--data JSON | --recipients CSV --row ID) --render FILE.html",
    "--template NAME (--data JSON | --recipients CSV --row ID) --address ADDRESS (--stack NAME | --outputs FILE)",
  ],
  summary: `One mail of a template with one recipient's data, rendered locally (Handlebars, as SES) or sent now through SES
(GetEmailTemplate first). A variable used outside an {{#if}} block with no value in the data stops the run, as a launch
rejects such a row.`,
  flags: FLAGS,
  changesAws: true,
  reference: "docs/templates.md",
  renamed: { to: "address" },
} as const;

/** What send-test did: rendered a page, or sent (or, in a dry run, would send) one mail. */
type TestMail =
  { template: string; rendered: string } | { template: string; to: string; messageId: string | null; dryRun: boolean };

export const { COMMAND, main } = stackCommand(
  DECLARATION,
  async ({ f, outputs, deadline }): Promise<TestMail> => {
    const name = required(f.template, "template", "NAME");
    if ((f.data === undefined) === (f.recipients === undefined))
      throw new UsageError("give --data JSON or --recipients CSV --row ID");
    if ((f.recipients === undefined) !== (f.row === undefined))
      throw new UsageError("--recipients and --row go together");
    if ((f.render === undefined) === (f.address === undefined))
      throw new UsageError("give --render FILE.html or --address ADDRESS");
    if (f.address !== undefined && !isEmailAddress(f.address))
      throw new UsageError(`--address ${f.address}: not an email address`);
    if (f["dry-run"] && f.address === undefined)
      throw new UsageError("--dry-run goes with --address (a render sends nothing)");

    const set = loadTemplates(f.render !== undefined && f.templates === "none" ? undefined : f.templates);
    const local = set?.templates.get(name);
    if (f.render !== undefined && !local)
      throw new TemplateError(
        `template "${name}" is not in ${set ? `${set.dir}/${didYouMean(name, set)}` : "a templates folder (none found)"}: --render needs its files`,
      );
    const data: TemplateData = f.data !== undefined ? dataFromJson(f.data) : await dataFromRow(f.recipients!, f.row!);
    if (local) requireData(local, data);

    if (f.render !== undefined) {
      writePage(f.render, previewPage(name, renderMail(local!, data)));
      return { template: name, rendered: f.render };
    }
    const o = requireOutputs(outputs(), ["configurationSetName", "fromAddress"], {});
    const ses = sesClient(o.region);
    await requireSesTemplates(deadline, ses, [name], o.templateNames);
    const mail = {
      from: o.fromAddress,
      to: f.address!,
      template: name,
      data,
      configurationSetName: o.configurationSetName,
    };
    const messageId = f["dry-run"] ? null : await sendTestEmail(deadline, ses, mail);
    return { template: name, to: f.address!, messageId, dryRun: f["dry-run"] };
  },
  { text: testMailText, exitCode: () => 0 },
);

function writePage(file: string, page: string): void {
  try {
    fs.writeFileSync(file, page);
  } catch (e) {
    throw new UsageError(
      `--render ${file}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
}

function testMailText(r: TestMail): string {
  if ("rendered" in r) return `Rendered ${r.template} to ${r.rendered}\n`;
  if (r.dryRun) return `Dry run: ${r.template} is in SES and the data fills it; nothing sent to ${r.to}\n`;
  return `Sent ${r.template} to ${r.to} (SES message id ${r.messageId}, tag campaign=test)\n`;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
