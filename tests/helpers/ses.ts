import {
  GetAccountCommand,
  GetEmailIdentityCommand,
  GetEmailTemplateCommand,
  ListContactsCommand,
  SESv2Client,
} from "@aws-sdk/client-sesv2";
import { AwsClientStub, mockClient } from "aws-sdk-client-mock";
import * as fs from "fs";
import * as path from "path";
import { dnsLookup } from "../../scripts/lib/aws/dmarc";
import type { Answer, SeenRequest } from "./aws-endpoint";

/** GetAccount of an account out of the sandbox, sending, with room (the SES v2 response's shape). */
export const HEALTHY_ACCOUNT = {
  SendingEnabled: true,
  ProductionAccessEnabled: true,
  EnforcementStatus: "HEALTHY",
  SendQuota: { Max24HourSend: 10_000_000, MaxSendRate: 10_000, SentLast24Hours: 0 },
};

/** GetEmailIdentity of a verified domain whose DKIM is verified. */
export const HEALTHY_DOMAIN = {
  IdentityType: "DOMAIN",
  VerifiedForSendingStatus: true,
  VerificationStatus: "SUCCESS",
  DkimAttributes: { SigningEnabled: true, Status: "SUCCESS", Tokens: ["a", "b", "c"] },
};

/** The outputs a real launch's preflight reads besides the launch's own: a From address and one-click unsubscribe. */
export const PREFLIGHT_OUTPUTS = {
  fromAddress: "news@mail.example.com",
  contactListName: "sendtime-dev",
  unsubscribeTopic: "news",
};

/** A local SES stand-in's answer to the preflight's calls (GetAccount, GetEmailIdentity), or undefined for others. */
export function healthySes(q: SeenRequest): Answer | undefined {
  const json = (body: unknown): Answer => ({ headers: { "content-type": "application/json" }, json: body });
  if (q.method === "GET" && q.url === "/v2/email/account") return json(HEALTHY_ACCOUNT);
  if (q.method === "GET" && q.url.startsWith("/v2/email/identities/")) return json(HEALTHY_DOMAIN);
  return undefined;
}

/**
 * For a describe block whose launches are about something else: SES answers GetEmailTemplate for every template (a
 * real launch asks before anything is uploaded), ListContacts with an empty contact list (a bulk launch reads it
 * first), and the preflight's GetAccount and GetEmailIdentity healthy; DMARC lookups find a record (a fake resolver,
 * never the network). Mocked from before() to after(), so other blocks see the real client.
 */
export function sesHasEveryTemplate(): { calls: () => string[] } {
  let ses: AwsClientStub<SESv2Client> | undefined;
  const realResolver = dnsLookup.resolver;
  before(() => {
    ses = mockClient(SESv2Client);
    ses
      .on(GetEmailTemplateCommand)
      .callsFake((input) => ({ TemplateName: input.TemplateName, TemplateContent: { Subject: "s" } }));
    ses.on(ListContactsCommand).resolves({ Contacts: [] });
    ses.on(GetAccountCommand).resolves(HEALTHY_ACCOUNT);
    ses.on(GetEmailIdentityCommand).resolves(HEALTHY_DOMAIN as never);
    dnsLookup.resolver = fakeDmarc;
  });
  after(() => {
    ses?.restore();
    dnsLookup.resolver = realResolver;
  });
  return { calls: () => (ses?.commandCalls(GetEmailTemplateCommand) ?? []).map((c) => c.args[0].input.TemplateName!) };
}

/** A resolver that finds "v=DMARC1; p=none" at every name. */
export const fakeDmarc = () => ({ resolveTxt: async () => [["v=DMARC1; p=none"]], cancel: () => {} });

/** A stack-outputs file holding only PREFLIGHT_OUTPUTS, for launches whose stack is given by flags (--bucket …). */
export function preflightOutputsFile(dir: string): string {
  const file = path.join(dir, `preflight-outputs-${++outputsFiles}.json`);
  fs.writeFileSync(file, JSON.stringify(PREFLIGHT_OUTPUTS));
  return file;
}
let outputsFiles = 0;
