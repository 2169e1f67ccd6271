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
import { deadlineFromFlag, outputsFromFlags, stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";
import { Command } from "./lib/cli/flags";
import { templateFlag } from "./lib/cli/campaign-flags";
import { Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { loadTemplates } from "./lib/templates/campaign-templates";
import {
  dataFromJson,
  dataFromRow,
  previewPage,
  renderMail,
  requireData,
  TemplateData,
} from "./lib/templates/test-mail";

const FLAGS = {
  template: { type: "string", value: "NAME", help: "the template" },
  templates: {
    type: "string",
    value: "DIR|none",
    path: true,
    words: ["none"],
    help: "the templates folder (default templates/); a render needs it, a send checks the data against it",
  },
  data: { type: "string", value: "JSON", help: "the mail's data, a JSON object (step is 1 unless it sets it)" },
  recipients: { type: "string", value: "CSV", path: true, help: "or the data of one row of this list", with: "row" },
  row: { type: "string", value: "ID", help: "the row's id" },
  render: {
    type: "string",
    value: "FILE.html",
    path: true,
    help: "render locally into one page: subject, HTML part, text part",
  },
  to: {
    type: "string",
    value: "ADDRESS",
    help: "or send now through SES with the stack's sender and configuration set, tagged campaign=test",
  },
  ...timeoutFlag(60),
  ...stackFlags(),
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "send-test",
  usage: [
    "--template NAME (--data JSON | --recipients CSV --row ID) --render FILE.html",
    "--template NAME (--data JSON | --recipients CSV --row ID) --to ADDRESS (--stack NAME | --outputs FILE)",
  ],
  summary: `One mail of a template with one recipient's data, rendered locally (Handlebars, as SES) or sent now through SES
(GetEmailTemplate first). A variable used outside an {{#if}} block with no value in the data stops the run, as a launch
rejects such a row.`,
  flags: FLAGS,
  exitCodes: EXIT_CODES["send-test"],
  reference: "docs/templates.md",
};

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(argv, COMMAND);
  if (f.template === undefined) throw new UsageError("--template NAME is required (see --help)");
  const name = templateFlag(f.template);
  if ((f.data === undefined) === (f.recipients === undefined))
    throw new UsageError("give --data JSON or --recipients CSV --row ID");
  if ((f.recipients === undefined) !== (f.row === undefined))
    throw new UsageError("--recipients and --row go together");
  if ((f.render === undefined) === (f.to === undefined))
    throw new UsageError("give --render FILE.html or --to ADDRESS");
  if (f.to !== undefined && !isEmailAddress(f.to)) throw new UsageError(`--to ${f.to}: not an email address`);

  const set = loadTemplates(f.render !== undefined && f.templates === "none" ? undefined : f.templates);
  const local = set?.templates.get(name);
  if (f.render !== undefined && !local)
    throw new TemplateError(
      `template "${name}" is not in ${set ? `${set.dir}/` : "a templates folder (none found)"}: --render needs its files`,
    );
  const data: TemplateData = f.data !== undefined ? dataFromJson(f.data) : await dataFromRow(f.recipients!, f.row!);
  if (local) requireData(local, data);

  if (f.render !== undefined) {
    const page = previewPage(name, renderMail(local!, data));
    try {
      fs.writeFileSync(f.render, page);
    } catch (e) {
      throw new UsageError(
        `--render ${f.render}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      );
    }
    io.out(`Rendered ${name} to ${f.render}\n`);
    return 0;
  }

  const outputs = requireOutputs(outputsFromFlags(f), ["configurationSetName", "fromAddress"], {});
  const deadline = deadlineFromFlag(f["timeout-seconds"], 60, (t) => io.err(`${t}\n`));
  try {
    const ses = sesClient(outputs.region);
    await requireSesTemplates(deadline, ses, [name], outputs.templateNames);
    const messageId = await sendTestEmail(deadline, ses, {
      from: outputs.fromAddress,
      to: f.to!,
      template: name,
      data,
      configurationSetName: outputs.configurationSetName,
    });
    io.out(`Sent ${name} to ${f.to} (SES message id ${messageId}, tag campaign=test)\n`);
    return 0;
  } finally {
    deadline.dispose();
  }
}
