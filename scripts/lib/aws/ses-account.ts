/**
 * What a launch reads of the SES account before it sends (SES API v2): the account's state and quotas
 * (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetAccount.html), the From identity's DKIM
 * (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetEmailIdentity.html), and in the sandbox the verified
 * identities (ListEmailIdentities), every call within the command's deadline.
 */
import {
  GetAccountCommand,
  GetEmailIdentityCommand,
  GetEmailIdentityResponse,
  ListEmailIdentitiesCommand,
  SESv2Client,
} from "@aws-sdk/client-sesv2";
import { allPages, awsCall, Deadline } from "./call";
import { isAwsError } from "./clients";

/** GetAccount's answer, as the checks use it. Quotas: -1 is unlimited (SendQuota.Max24HourSend). */
export interface SesAccount {
  sendingEnabled: boolean;
  productionAccess: boolean;
  /** HEALTHY, PROBATION or SHUTDOWN; absent when SES gives none. */
  enforcementStatus?: string;
  maxSendRate?: number;
  max24HourSend?: number;
  sentLast24Hours?: number;
}

export async function readSesAccount(d: Deadline, ses: SESv2Client): Promise<SesAccount> {
  const a = await awsCall(d, "SES GetAccount", (o) => ses.send(new GetAccountCommand({}), o));
  return {
    // Absent reads as false: a check that cannot see the account enabled does not pass.
    sendingEnabled: a.SendingEnabled === true,
    productionAccess: a.ProductionAccessEnabled === true,
    enforcementStatus: a.EnforcementStatus,
    maxSendRate: a.SendQuota?.MaxSendRate,
    max24HourSend: a.SendQuota?.Max24HourSend,
    sentLast24Hours: a.SendQuota?.SentLast24Hours,
  };
}

/** An identity's sending and DKIM state, or undefined when SES has no such identity (NotFoundException). */
export interface SesIdentity {
  name: string;
  type?: string;
  verifiedForSending: boolean;
  dkimStatus?: string;
  dkimSigningEnabled?: boolean;
}

export async function readSesIdentity(d: Deadline, ses: SESv2Client, name: string): Promise<SesIdentity | undefined> {
  const r = await awsCall(d, `SES GetEmailIdentity ${name}`, async (o) => {
    try {
      return await ses.send(new GetEmailIdentityCommand({ EmailIdentity: name }), o);
    } catch (e) {
      if (isAwsError(e, "NotFoundException")) return undefined;
      throw e;
    }
  });
  return r && identityOf(name, r);
}

function identityOf(name: string, r: GetEmailIdentityResponse): SesIdentity {
  return {
    name,
    type: r.IdentityType,
    verifiedForSending: r.VerifiedForSendingStatus === true,
    dkimStatus: r.DkimAttributes?.Status,
    dkimSigningEnabled: r.DkimAttributes?.SigningEnabled,
  };
}

/** The identities verified for sending (addresses and domains, lower-cased): every page of ListEmailIdentities. */
export async function verifiedIdentities(d: Deadline, ses: SESv2Client): Promise<Set<string>> {
  const names = new Set<string>();
  const pages = allPages(
    d,
    "SES ListEmailIdentities",
    (token, o) => ses.send(new ListEmailIdentitiesCommand({ NextToken: token, PageSize: 1000 }), o),
    (p) => p.NextToken,
  );
  for await (const page of pages)
    for (const i of page.EmailIdentities ?? [])
      if (i.IdentityName && i.VerificationStatus === "SUCCESS") names.add(i.IdentityName.toLowerCase());
  return names;
}
