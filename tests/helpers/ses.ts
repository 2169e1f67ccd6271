import { GetEmailTemplateCommand, ListContactsCommand, SESv2Client } from "@aws-sdk/client-sesv2";
import { AwsClientStub, mockClient } from "aws-sdk-client-mock";

/**
 * For a describe block whose launches are about something else: SES answers GetEmailTemplate for every template (a
 * real launch asks before anything is uploaded) and ListContacts with an empty contact list (a bulk launch reads it
 * first). Mocked from before() to after(), so other blocks see the real client.
 */
export function sesHasEveryTemplate(): { calls: () => string[] } {
  let ses: AwsClientStub<SESv2Client> | undefined;
  before(() => {
    ses = mockClient(SESv2Client);
    ses
      .on(GetEmailTemplateCommand)
      .callsFake((input) => ({ TemplateName: input.TemplateName, TemplateContent: { Subject: "s" } }));
    ses.on(ListContactsCommand).resolves({ Contacts: [] });
  });
  after(() => ses?.restore());
  return { calls: () => (ses?.commandCalls(GetEmailTemplateCommand) ?? []).map((c) => c.args[0].input.TemplateName!) };
}
