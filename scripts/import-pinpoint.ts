/**
 * Moves an Amazon Pinpoint audience and campaign to sendtime. See USAGE.
 */
import * as path from "path";
import { scheduler } from "../infra/rules/quotas";
import { CAMPAIGN_PREFIX, campaignIdProblem } from "../infra/rules/naming";
import { s3Client } from "./lib/aws/clients";
import { DEFAULT_S3_TIMEOUTS, parseS3Url, s3ExportSources } from "./lib/aws/s3-export";
import { Io, parseFlags, processIo, runMain, secondsFlag } from "./lib/cli/run";
import { CampaignMapping, FlagNames, LaunchSettings, mapCampaign } from "./lib/pinpoint/campaign";
import { DEFAULT_VALUE_SEPARATOR } from "./lib/pinpoint/endpoints";
import { importEndpoints, ImportSummary, localExportSources } from "./lib/pinpoint/import";
import * as fs from "fs";
import { CampaignShapeError, UsageError } from "../infra/rules/errors";

const USAGE = `
Usage: import-pinpoint [--endpoints PATH | s3://BUCKET/PREFIX/] [--out DIR] [--value-separator SEP]
         [--campaign FILE] [--campaign-id ID] [--recipients FILE] [--region R] [--timeout-seconds S] [--json]

Endpoints: reads a Pinpoint endpoint export (what aws pinpoint create-export-job writes: one EndpointResponse JSON
object per line; each file plain or gzip, recognised by its first bytes; a file, a directory, or every object under
an s3:// prefix, in key order) and writes DIR/recipients.csv for launch-campaign and DIR/skipped.csv
(file,line,endpoint_id,user_id,reason,detail) for every endpoint left out.

  One row per ACTIVE, opted-in (OptOut NONE) EMAIL endpoint with an address SES accepts:
    id         User.UserId, or the endpoint's Id when it has no user id
    email      Address
    timezone   Demographic.Timezone (empty when missing: launch-campaign then uses --default-timezone)
    other      one column per name in the endpoint's Attributes and the User.UserAttributes, named as the attribute
               (trimmed). A name that is a control column (id, email, timezone, send_at, send_hour, send_minute,
               step) or that two attributes share (ignoring case, e.g. an endpoint and a user attribute "plan")
               becomes attr_<name> (endpoint) or user_<name> (user), then _2, _3 … should that clash too.
               A multi-valued attribute ["Science","Music"] is joined with --value-separator (default "${DEFAULT_VALUE_SEPARATOR}"):
               Science${DEFAULT_VALUE_SEPARATOR}Music. Metrics, Location and other Demographic fields are not imported.
  Consent comes first, over everything read: an address (trimmed, lower-cased) that any endpoint opts out (OptOut
  other than NONE, on any channel or status, in any file) is imported from no endpoint. An endpoint Id read on
  several lines (e.g. two export jobs under one prefix) counts its line with the latest EffectiveDate; a line
  without a readable EffectiveDate may be the latest, so it ties. Of tied lines one that opts out wins (an opt-out
  is never overridden by a tie), otherwise the first read counts; the other lines are listed as superseded.
  Skipped, with the reason: not-email (another ChannelType), inactive (EndpointStatus not ACTIVE), opted-out
  (OptOut not NONE), invalid-address, missing-id, invalid-text (a line that is not valid UTF-8, or an id or value
  holding a lone UTF-16 surrogate: never merged with another id), imprecise-number (a number past 2^53 in an id or
  value: its digits are lost when read; export it as a string), superseded (a later or tied line of the endpoint
  counts), opted-out-elsewhere (another endpoint opts the address out: the detail names its file and line),
  duplicate-user (the user already has a row: the first usable EMAIL endpoint of a user in export order is kept),
  duplicate-id (an endpoint Id already used as an id).
  Memory stays nearly flat: the export is read once (its outcomes go to a temporary file under DIR, read back once
  every opt-out is known); the ids written and the endpoint Ids are kept in compact exact sets (4.4 to 6.7 bytes an id,
  the ids in temporary files) and about 17 bytes more an endpoint Id.

Campaign: given what aws pinpoint get-campaign prints (--campaign FILE), prints the launch-campaign command with
the same schedule, quiet time, template(s), treatments and holdout, and send rate, and one line for every setting
that has no sendtime equivalent saying what to do instead.

  --out DIR               where recipients.csv and skipped.csv go (default out/pinpoint)
  --campaign-id ID        the sendtime campaign id (default: the Pinpoint campaign's Name, lower case, - for others)
  --recipients FILE       the CSV the command names (default DIR/recipients.csv)
  --region R              S3 region (default: the SDK's configuration)
  --timeout-seconds S     bound on each S3 call, and on a read that stalls (default ${DEFAULT_S3_TIMEOUTS.callTimeoutMs / 1000})
  --json                  {"endpoints": {...counts, repeatedIds, columns, output}, "campaign": {"command": [argv], "commandLine",
                          "launch", "notes": [{"setting", "value", "instead"}]}}

AWS access uses the standard SDK configuration: region, credential chain, AWS_ENDPOINT_URL_S3.
Exit codes: 0 ok; 1 the campaign cannot be a sendtime campaign (event-triggered, hourly: the notes say what to use);
2 bad flags or input (one line: file, line or key, what is allowed).
`;

/** launch-campaign's flags (the contract the command follows); the notes name them too. */
const LAUNCH_FLAGS = {
  campaign: "--campaign",
  recipients: "--recipients",
  template: "--template",
  date: "--date",
  hour: "--hour",
  minute: "--minute",
  at: "--at",
  every: "--every",
  until: "--until",
  defaultTimezone: "--default-timezone",
  missed: "--missed",
  quietHours: "--quiet-hours",
  quiet: "--quiet",
  variant: "--variant",
  holdout: "--holdout",
  tps: "--tps",
};
const NOTE_FLAGS: FlagNames = { ...LAUNCH_FLAGS, campaignId: "--campaign-id" };

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(
    argv,
    {
      endpoints: { type: "string" },
      out: { type: "string" },
      "value-separator": { type: "string" },
      campaign: { type: "string" },
      "campaign-id": { type: "string" },
      recipients: { type: "string" },
      region: { type: "string" },
      "timeout-seconds": { type: "string" },
      json: { type: "boolean", default: false },
    },
    USAGE,
  );
  if (f.endpoints === undefined && f.campaign === undefined) throw new UsageError("give --endpoints, --campaign or both (see --help)");
  const outDir = f.out ?? path.join("out", "pinpoint");
  const timeoutMs = Math.round(
    secondsFlag("timeout-seconds", f["timeout-seconds"], 0.1, 3600, DEFAULT_S3_TIMEOUTS.callTimeoutMs / 1000) * 1000,
  );
  if (f["campaign-id"] !== undefined && campaignIdProblem(f["campaign-id"]))
    throw new UsageError(`--campaign-id: ${campaignIdProblem(f["campaign-id"])}`);
  const campaign = f.campaign === undefined ? undefined : readCampaign(f.campaign, f["campaign-id"]);

  let endpoints: ImportSummary | undefined;
  if (f.endpoints !== undefined) {
    const s3At = parseS3Url(f.endpoints);
    const sources = s3At
      ? await s3ExportSources(s3Client(f.region), s3At, { callTimeoutMs: timeoutMs, idleTimeoutMs: timeoutMs })
      : localExportSources(f.endpoints);
    endpoints = await importEndpoints({
      sources,
      outDir,
      separator: f["value-separator"] ?? DEFAULT_VALUE_SEPARATOR,
      progress: (t) => io.err(`${t}\n`),
    });
  }
  const recipients = f.recipients ?? endpoints?.output.recipients ?? path.join(outDir, "recipients.csv");
  const command = campaign?.launch ? launchArgs(campaign.launch, recipients) : undefined;
  if (f.json) {
    const campaignJson = campaign && {
      command: command ?? null,
      commandLine: command ? commandLine(command) : null,
      launch: campaign.launch ?? null,
      notes: campaign.notes,
    };
    io.out(JSON.stringify({ endpoints, campaign: campaignJson }, null, 2) + "\n");
  } else {
    const lines = [...(endpoints ? formatEndpoints(endpoints) : []), ...(campaign ? formatCampaign(campaign, command) : [])];
    io.out(lines.join("\n") + "\n");
  }
  return campaign && !campaign.launch ? 1 : 0;
}

function readCampaign(file: string, campaignId: string | undefined): CampaignMapping {
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new UsageError(`${file}: ${err.code ? `cannot read (${err.code})` : `not JSON (${err.message})`}`);
  }
  try {
    return mapCampaign(json, { campaignId, maxIdLength: scheduler.nameMaxLength - CAMPAIGN_PREFIX.length, flags: NOTE_FLAGS });
  } catch (e) {
    if (e instanceof CampaignShapeError) throw new UsageError(`${file}: ${e.message}`);
    throw e;
  }
}

/** launch-campaign's arguments for the settings (its flag names live here, not in the core). */
export function launchArgs(l: LaunchSettings, recipients: string): string[] {
  const f = LAUNCH_FLAGS;
  const a = [f.campaign, l.campaignId, f.recipients, recipients, f.template, l.template];
  const t = l.sendTime;
  const at = (hour: number, minute: number, zone: string) => [f.hour, String(hour), f.minute, String(minute), f.defaultTimezone, zone];
  if (t.kind === "instant") a.push(f.at, t.at);
  else if (t.kind === "local") a.push(f.date, t.date, ...at(t.hour, t.minute, t.defaultTimezone));
  else a.push(f.every, t.every, f.until, t.until, ...at(t.hour, t.minute, t.defaultTimezone));
  if (l.quietHours) a.push(f.quietHours, `${l.quietHours.start}-${l.quietHours.end}`, f.quiet, l.quietHours.policy);
  for (const v of l.variants) a.push(f.variant, `${v.name}:${v.percent}:${v.template}`);
  if (l.holdoutPercent !== undefined) a.push(f.holdout, String(l.holdoutPercent));
  if (l.tps !== undefined) a.push(f.tps, String(l.tps));
  return a;
}

/** The command as one shell line: arguments with characters a POSIX shell would treat specially are single-quoted. */
export function commandLine(args: string[]): string {
  const quote = (a: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  return ["npm run -s launch-campaign --", ...args.map(quote)].join(" ");
}

function formatEndpoints(s: ImportSummary): string[] {
  const n = (x: number) => x.toLocaleString("en-US");
  const reasons = Object.entries(s.skipped.byReason)
    .map(([r, c]) => `${r} ${n(c!)}`)
    .join(", ");
  return [
    `Pinpoint endpoints: ${n(s.endpoints)} read from ${n(s.files)} file${s.files === 1 ? "" : "s"} → ${n(s.recipients)} recipients, ${n(s.skipped.total)} skipped${reasons ? ` (${reasons})` : ""}`,
    `  ids: ${n(s.idsFrom.UserId)} from User.UserId, ${n(s.idsFrom.Id)} from the endpoint Id`,
    ...(s.repeatedIds
      ? [`  endpoint Ids read more than once: ${n(s.repeatedIds)} (each counts its latest line; the others are skipped as superseded)`]
      : []),
    `  zones: ${n(s.zones.missing)} without Demographic.Timezone, ${n(s.zones.unknown)} not an IANA zone name (launch-campaign gives both --default-timezone)`,
    `  columns: ${s.columns.join(", ")}`,
    `  files: ${s.output.recipients}, ${s.output.skipped}`,
  ];
}

function formatCampaign(c: CampaignMapping, command: string[] | undefined): string[] {
  const lines = command
    ? ["", "Campaign as a sendtime launch (add --dry-run first, then --stack or --outputs):", `  ${commandLine(command)}`]
    : ["", "Campaign: no launch-campaign equivalent (see below)."];
  if (c.notes.length) lines.push("", "Settings to act on (Pinpoint setting: value → what to do in sendtime):");
  for (const x of c.notes) lines.push(`  - ${x.setting}: ${x.value} → ${x.instead}`);
  return lines;
}
