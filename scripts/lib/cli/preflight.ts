/**
 * A real launch's preflight: what SES and the mailbox providers check, asked before anything is uploaded. Before
 * planning: the SES account (GetAccount: sending enabled, the sandbox, the quotas), the From domain's DKIM
 * (GetEmailIdentity), its DMARC record (DNS) and one-click unsubscribe (the stack's outputs). After planning, before
 * the upload is completed: the peak per second against MaxSendRate, each UTC day against Max24HourSend, and in the
 * sandbox every planned address against the verified identities. Each finding is one line saying what to fix; an
 * error stops the launch (exit 2), a warning too unless --force (docs/launching.md#preflight says which is which).
 */
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { CloudWatchClient, DescribeAlarmsCommand } from "@aws-sdk/client-cloudwatch";
import { FindingsError, InputError } from "../../../infra/core/errors";
import { GUARDRAIL_KINDS } from "../../../infra/core/send/guardrails";
import { awsCall, Deadline } from "../aws/call";
import { readSesAccount, readSesIdentity, SesAccount, verifiedIdentities } from "../aws/ses-account";
import { StackOutputs } from "../aws/stack-outputs";
import { lookupDmarc } from "../aws/dmarc";
import { PlanSummary } from "../planning/plan-summary";
import { EffectiveTps } from "../planning/window";
import { count, counted } from "../text/format";
import { Io } from "./run";

export interface Finding {
  level: "error" | "warning";
  /** The check's name in --json (sending, sandbox, dkim, dmarc, unsubscribe, account-guardrail, rate, daily-quota). */
  check: string;
  line: string;
}

/** What the checks before planning found, and what the later ones need. */
export interface AccountPreflight {
  account: SesAccount;
  fromAddress?: string;
  findings: Finding[];
}

/** What a dry run does not check (it makes no AWS call or DNS lookup), for its report. */
export const NOT_CHECKED_IN_A_DRY_RUN =
  "not checked (no AWS call or DNS lookup): SES sending and sandbox, DKIM, DMARC, one-click unsubscribe, the account's guardrail alarms, the peak against MaxSendRate, each UTC day against Max24HourSend";

const error = (check: string, line: string): Finding => ({ level: "error", check, line });
const warning = (check: string, line: string): Finding => ({ level: "warning", check, line });

/** The checks before planning (SES calls and the DNS lookup, each bounded by the command's deadline). */
export async function accountPreflight(
  d: Deadline,
  ses: SESv2Client,
  outputs: StackOutputs,
  bulk: boolean,
  cloudWatch?: CloudWatchClient,
): Promise<AccountPreflight> {
  const account = await readSesAccount(d, ses);
  const findings = accountFindings(account);
  const fromAddress = outputs.fromAddress;
  if (!fromAddress)
    findings.push(
      error(
        "dkim",
        "missing stack output fromAddress: the From address's DKIM and DMARC cannot be checked; save the stack's outputs again (pulumi stack output --json)",
      ),
    );
  else {
    findings.push(...(await dkimFindings(d, ses, fromAddress)));
    findings.push(...(await dmarcFindings(fromAddress, d.signal)));
  }
  findings.push(...unsubscribeFindings(outputs, bulk));
  if (cloudWatch && outputs.guardrailAlarmPrefix)
    findings.push(...(await accountGuardrailFindings(d, cloudWatch, outputs.guardrailAlarmPrefix)));
  return { account, fromAddress, findings };
}

/**
 * The account's guardrail: while one of its reputation alarms is in ALARM, every campaign of the stack was paused, but
 * a campaign launched now would not be (the pause sets the campaigns armed when the alarm fired): the launch stops,
 * a warning that --force passes (SES's reputation rates move slowly; the operator may have dealt with the cause).
 */
async function accountGuardrailFindings(d: Deadline, cw: CloudWatchClient, prefix: string): Promise<Finding[]> {
  const names = GUARDRAIL_KINDS.map((k) => `${prefix}account-${k.kind}`);
  let answer;
  try {
    answer = await awsCall(d, `DescribeAlarms ${names.join(", ")}`, (o) =>
      cw.send(new DescribeAlarmsCommand({ AlarmNames: names, AlarmTypes: ["MetricAlarm"] }), o),
    );
  } catch (e) {
    // Not read (permissions, an outage): said, and --force launches all the same; the time limit still ends the run.
    if (!(e instanceof FindingsError) || d.expired) throw e;
    return [
      warning(
        "account-guardrail",
        `the account's guardrail alarms could not be read (${e.message}): whether the account's reputation paused the stack's campaigns is unknown; allow cloudwatch:DescribeAlarms, or --force`,
      ),
    ];
  }
  return (answer.MetricAlarms ?? [])
    .filter((a) => a.StateValue === "ALARM")
    .map((a) =>
      warning(
        "account-guardrail",
        `the account's guardrail alarm ${a.AlarmName} is in ALARM${a.StateUpdatedTimestamp ? ` since ${a.StateUpdatedTimestamp.toISOString()}` : ""} (SES ${a.MetricName ?? "reputation"} at or above its threshold): it paused every campaign of the stack, and this one would go out; launch once it is back to OK (see SES's reputation dashboard), or --force`,
      ),
    );
}

function accountFindings(a: SesAccount): Finding[] {
  const found: Finding[] = [];
  if (!a.sendingEnabled)
    found.push(
      error(
        "sending",
        "SES sending is disabled for this account in this Region (GetAccount SendingEnabled false): SES would refuse every send; see the SES console's account dashboard and re-enable sending (or ask AWS Support if SES paused it)",
      ),
    );
  if (a.enforcementStatus === "SHUTDOWN")
    found.push(
      error(
        "sending",
        "the SES account's enforcement status is SHUTDOWN: SES has paused its sending; correct the cause shown in the SES console's reputation dashboard and ask AWS to resume it",
      ),
    );
  if (a.enforcementStatus === "PROBATION")
    found.push(
      warning(
        "sending",
        "the SES account is under review (enforcement status PROBATION): a large send with bounces or complaints may get it paused; fix the cause shown in the SES console's reputation dashboard first (--force to launch anyway)",
      ),
    );
  if (a.maxSendRate === undefined || a.max24HourSend === undefined)
    found.push(
      error(
        "rate",
        "SES GetAccount gave no SendQuota (MaxSendRate, Max24HourSend): the campaign's rate and days cannot be checked; retry, or check the account in the SES console",
      ),
    );
  return found;
}

/**
 * DKIM of the From domain's identity (mail from an address identity without one is signed for amazonses.com, which
 * does not align with the From domain, so it fails DMARC); without a domain identity, the address's own is read to
 * say whether SES can send from it at all.
 */
async function dkimFindings(d: Deadline, ses: SESv2Client, fromAddress: string): Promise<Finding[]> {
  const domain = fromAddress.split("@").pop()!.toLowerCase();
  const identity = await readSesIdentity(d, ses, domain);
  if (!identity) {
    const address = await readSesIdentity(d, ses, fromAddress);
    return [
      error(
        "dkim",
        address?.verifiedForSending
          ? `SES has no domain identity ${domain}: mail from ${fromAddress} is DKIM-signed for amazonses.com, not ${domain}, and fails DMARC alignment; verify ${domain} in SES with Easy DKIM (sendtime:senderIdentity ${domain}, pulumi up) and publish its DKIM records`
          : `SES has no identity ${domain} or ${fromAddress} verified in this Region: SES would refuse to send from ${fromAddress}; deploy the stack's sender identity (pulumi up) and publish its DKIM records (stack output dkimTokens)`,
      ),
    ];
  }
  if (identity.dkimStatus !== "SUCCESS")
    return [
      error(
        "dkim",
        `the DKIM of ${domain} is ${identity.dkimStatus ?? "not set up"} in SES (GetEmailIdentity), not SUCCESS: publish its three DKIM CNAME records (stack output dkimTokens) and wait for SES to verify them; Gmail and Yahoo require DKIM of bulk senders`,
      ),
    ];
  if (identity.dkimSigningEnabled === false)
    return [
      error(
        "dkim",
        `DKIM signing is turned off for ${domain} in SES (DkimAttributes.SigningEnabled false): turn it on (PutEmailIdentityDkimAttributes), or mail fails DMARC alignment`,
      ),
    ];
  return [];
}

async function dmarcFindings(fromAddress: string, signal: AbortSignal): Promise<Finding[]> {
  const domain = fromAddress.split("@").pop()!.toLowerCase();
  const r = await lookupDmarc(domain, signal);
  if (r.kind === "found") return [];
  if (r.kind === "several")
    return [
      error(
        "dmarc",
        `${r.name} has ${r.records} DMARC records (TXT v=DMARC1): receivers then apply none (RFC 7489 §6.6.3); keep one`,
      ),
    ];
  if (r.kind === "none")
    return [
      error(
        "dmarc",
        `no DMARC record for ${domain} (DNS TXT ${r.names.join(", ")}): Gmail and Yahoo require one of bulk senders; publish a TXT record at _dmarc.${domain}, e.g. "v=DMARC1; p=none; rua=mailto:dmarc@${domain}"`,
      ),
    ];
  return [
    warning(
      "dmarc",
      `the DMARC record of ${domain} could not be checked (DNS TXT ${r.name}: ${r.problem}): check that _dmarc.${domain} has one, then launch again, or --force to launch without this check`,
    ),
  ];
}

/** One-click unsubscribe (RFC 8058): SES adds it to sends with the stack's contact list; bulk sends carry the stack's endpoint. */
function unsubscribeFindings(outputs: StackOutputs, bulk: boolean): Finding[] {
  if (outputs.contactListName && outputs.unsubscribeTopic && (!bulk || outputs.unsubscribeUrl)) return [];
  return [
    error(
      "unsubscribe",
      "the stack has no one-click unsubscribe (no stack outputs contactListName and unsubscribeTopic): set sendtime:unsubscribeContactList and sendtime:unsubscribeTopic, run pulumi up and save its outputs again; Gmail and Yahoo require one-click unsubscribe of bulk senders",
    ),
  ];
}

/** The checks of the plan: the peak per second, each UTC day, and in the sandbox the addresses. */
export function planFindings(
  account: SesAccount,
  summary: PlanSummary,
  sandbox?: { addresses: Set<string>; verified: Set<string> },
): Finding[] {
  const found: Finding[] = [];
  const peak = summary.window.peakTps;
  if (account.maxSendRate !== undefined && peak !== undefined && peak > account.maxSendRate)
    found.push(
      error(
        "rate",
        `the campaign's peak is ${count(peak)} emails/s with its ${summary.window.minutes}-minute window, above the account's SES maximum send rate of ${count(account.maxSendRate)}/s (GetAccount MaxSendRate): leave --ses-rate and --tps out (the window is then sized on MaxSendRate), or ask AWS to raise the rate`,
      ),
    );
  const quota = account.max24HourSend;
  if (quota !== undefined && quota >= 0) {
    const over = summary.utcDays.filter((day) => day.sends > quota);
    if (over.length)
      found.push(
        error(
          "daily-quota",
          `${over.map((day) => `${day.date} (UTC) has ${count(day.sends)} sends`).join(", ")}, above the account's SES quota of ${count(quota)} a day (GetAccount Max24HourSend): spread the campaign over days with --ramp, or ask AWS to raise the quota`,
        ),
      );
    const first = summary.utcDays[0];
    const sent = account.sentLast24Hours ?? 0;
    if (first && first.sends <= quota && first.sends + sent > quota)
      found.push(
        warning(
          "daily-quota",
          `${first.date} (UTC) has ${count(first.sends)} sends and the account sent ${count(sent)} in the last 24 hours (GetAccount SentLast24Hours): together above its quota of ${count(quota)} a day if that sending goes on; --force to launch anyway`,
        ),
      );
  }
  if (sandbox) found.push(...sandboxFindings(sandbox.addresses, sandbox.verified));
  return found;
}

/** In the sandbox SES sends only to verified identities: an address, or any address of a verified domain. */
function sandboxFindings(addresses: Set<string>, verified: Set<string>): Finding[] {
  const unverified = [...addresses].filter((a) => !verified.has(a) && !verified.has(a.split("@").pop()!));
  if (!unverified.length) return [];
  const shown = unverified.slice(0, 5).join(", ") + (unverified.length > 5 ? ", …" : "");
  return [
    error(
      "sandbox",
      `the SES account is in the sandbox (GetAccount ProductionAccessEnabled false), which sends only to verified identities, and ${counted(unverified.length, "planned address", "planned addresses")} of ${count(addresses.size)} ${unverified.length === 1 ? "is" : "are"} not (${shown}): request production access (SES console, account dashboard), or verify them`,
    ),
  ];
}

/** In the sandbox: the identities every planned address is checked against (ListEmailIdentities). */
export async function sandboxIdentities(d: Deadline, ses: SESv2Client): Promise<Set<string>> {
  return verifiedIdentities(d, ses);
}

/** A preflight check failed: exit 2, like bad input (the account, identity or DNS must be fixed first). */
export class PreflightError extends InputError {}

/**
 * Prints each finding on stderr, errors first, one line each (a warning passed with --force says so). Returns the
 * line that stops the launch when one does (any error, or a warning without --force), else undefined.
 */
export function enforceFindings(findings: Finding[], force: boolean, io: Io): string | undefined {
  const stops = (x: Finding) => x.level === "error" || !force;
  const ordered = [...findings].sort((a, b) => Number(b.level === "error") - Number(a.level === "error"));
  for (const x of ordered) io.err(`${stops(x) ? "error" : "warning"}: ${x.line}${stops(x) ? "" : " (--force)"}\n`);
  const stopping = findings.filter(stops);
  if (!stopping.length) return undefined;
  const onlyWarnings = stopping.every((x) => x.level === "warning");
  return `Not launched: ${counted(stopping.length, "preflight check")} failed (above); nothing uploaded or started${onlyWarnings ? " (--force launches despite warnings)" : ""}.`;
}

/** What a run keeps of its preflight: the account read before planning, and in the sandbox the planned addresses. */
export interface RunPreflight extends AccountPreflight {
  /** In the sandbox: the planned addresses (lower-cased, the first SANDBOX_ADDRESSES of them). */
  sandboxAddresses?: Set<string>;
}

/** The sandbox's quota is 200 sends a day: a list with more addresses fails the daily check anyway. */
const SANDBOX_ADDRESSES = 10_000;

/** A real launch's checks before planning; stops (PreflightError, exit 2) on what --force does not pass. */
export async function preflightBeforePlanning(
  d: Deadline,
  ses: SESv2Client,
  outputs: StackOutputs,
  o: { bulk: boolean; force: boolean; io: Io; cloudWatch?: CloudWatchClient },
): Promise<RunPreflight> {
  const checked = await accountPreflight(d, ses, outputs, o.bulk, o.cloudWatch);
  const stop = enforceFindings(checked.findings, o.force, o.io);
  if (stop) throw new PreflightError(stop);
  return { ...checked, sandboxAddresses: checked.account.productionAccess ? undefined : new Set() };
}

/** The planner's hook that collects a sandbox launch's addresses; undefined out of the sandbox. */
export function sandboxCollector(p: RunPreflight | undefined): ((email: string) => void) | undefined {
  const addresses = p?.sandboxAddresses;
  if (!addresses) return undefined;
  return (email) => {
    if (addresses.size < SANDBOX_ADDRESSES) addresses.add(email.trim().toLowerCase());
  };
}

/**
 * The checks of the plan, before its upload is completed: the line that stops the launch, or undefined. The
 * findings go to stderr and into `data.preflight` (--json).
 */
export async function preflightOfPlan(
  d: Deadline,
  ses: SESv2Client,
  p: RunPreflight,
  summary: PlanSummary,
  o: { force: boolean; io: Io; data: Record<string, unknown> },
): Promise<string | undefined> {
  const sandbox = p.sandboxAddresses && { addresses: p.sandboxAddresses, verified: await sandboxIdentities(d, ses) };
  const findings = [...p.findings, ...planFindings(p.account, summary, sandbox)];
  o.data.preflight = { checked: true, account: p.account, findings };
  return enforceFindings(planFindings(p.account, summary, sandbox), o.force, o.io);
}

/** --ses-rate's default at launch: the account's MaxSendRate (unless --tps or --ses-rate is given). */
export function rateWithAccount(
  rate: EffectiveTps,
  f: { tps?: string; "ses-rate"?: string },
  p: RunPreflight | undefined,
  bulk: boolean,
): EffectiveTps {
  const max = p?.account.maxSendRate;
  if (f.tps !== undefined || f["ses-rate"] !== undefined || max === undefined || !(max > 0)) return rate;
  const account = { tps: max, source: "SES maximum send rate, GetAccount MaxSendRate" };
  // An invocation sends up to 50 bulk emails: a bulk plan's emails are held to SES's rate alone.
  return bulk || max < rate.tps ? account : rate;
}
