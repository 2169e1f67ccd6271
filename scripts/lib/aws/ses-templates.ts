/**
 * SES's side of the template check: a real launch asks GetEmailTemplate for every template it uses before anything is
 * uploaded or started (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetEmailTemplate.html).
 */
import { GetEmailTemplateCommand, SendEmailCommand, SESv2Client } from "@aws-sdk/client-sesv2";
import { awsCall, Deadline } from "./call";
import { isAwsError } from "./clients";
import { TemplateError } from "../../../infra/core/plan/templates";

/**
 * Stops (exit 2) when SES lacks one of `names`, naming each missing one; any other failure is one line (exit 1). The
 * stack's roles may send only the templates it deploys (`deployed`, its output templateNames): a template outside them is
 * refused too, since every send of it would be denied.
 */
export async function requireSesTemplates(
  d: Deadline,
  ses: SESv2Client,
  names: string[],
  deployed?: string[],
): Promise<void> {
  if (deployed?.length) {
    const outside = names.filter((n) => !deployed.includes(n));
    if (outside.length)
      throw new TemplateError(
        `${outside.map((n) => `"${n}"`).join(", ")}: not among the stack's templates (stack output templateNames: ${deployed.join(", ")}); its roles may send only those: add the folder to the stack's templates and run pulumi up`,
      );
  }
  const missing: string[] = [];
  for (const name of names) {
    const found = await awsCall(d, `SES GetEmailTemplate ${name}`, async (o) => {
      try {
        await ses.send(new GetEmailTemplateCommand({ TemplateName: name }), o);
        return true;
      } catch (e) {
        if (isAwsError(e, "NotFoundException")) return false;
        throw e;
      }
    });
    if (!found) missing.push(name);
  }
  if (missing.length)
    throw new TemplateError(
      `SES has no template ${missing.map((n) => `"${n}"`).join(", ")} in this Region: nothing uploaded or started; deploy it (templates/<name>/ and pulumi up) or create it in SES`,
    );
}

/** A test send (scripts/send-test.ts): one mail now, with the template and data, the stack's configuration set, tagged campaign=test. */
export async function sendTestEmail(
  d: Deadline,
  ses: SESv2Client,
  m: { from: string; to: string; template: string; data: Record<string, unknown>; configurationSetName: string },
): Promise<string> {
  const sent = await awsCall(d, `SES SendEmail (template ${m.template}) to ${m.to}`, (o) =>
    ses.send(
      new SendEmailCommand({
        FromEmailAddress: m.from,
        Destination: { ToAddresses: [m.to] },
        Content: { Template: { TemplateName: m.template, TemplateData: JSON.stringify(m.data) } },
        ConfigurationSetName: m.configurationSetName,
        EmailTags: [{ Name: "campaign", Value: "test" }],
      }),
      o,
    ),
  );
  return sent.MessageId ?? "";
}
