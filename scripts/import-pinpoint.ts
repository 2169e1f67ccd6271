/**
 * Moves an Amazon Pinpoint audience and campaign to sendtime. See COMMAND (its --help).
 */
import * as path from "path";
import { scheduler } from "../infra/core/plan/quotas";
import { CAMPAIGN_PREFIX, campaignIdProblem } from "../infra/core/plan/naming";
import { s3Client } from "./lib/aws/clients";
import { DEFAULT_S3_TIMEOUTS, parseS3Url, s3ExportSources } from "./lib/aws/s3-export";
import { commandMain, Io, runMain } from "./lib/cli/run";
import { Command, FlagValues } from "./lib/cli/flags";
import { beforeDeadline, Deadline } from "./lib/aws/call";
import { outputsFromFlags, stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { dryRunFlag, jsonFlag, nowFlag, OUT, RECIPIENTS } from "./lib/cli/common-flags";
import { smsVoiceClient } from "./lib/aws/clients";
import { OptOutPutResult, putOptedOutNumbers } from "./lib/aws/sms-opt-out-list";
import { campaignFileText } from "./lib/cli/config-file";
import { LAUNCH_FLAGS as LAUNCH_TABLE } from "./lib/cli/launch-flags";
import { progressFlag, progressReporter } from "./lib/cli/progress";
import { EXIT_CODES } from "./lib/cli/exit-codes";
import { mapCampaign } from "./lib/pinpoint/campaign";
import { CampaignMapping, FlagNames, LaunchSettings } from "./lib/pinpoint/campaign-types";
import { DEFAULT_VALUE_SEPARATOR } from "./lib/pinpoint/endpoints";
import { importEndpoints, ImportSummary, localExportSources } from "./lib/pinpoint/import";
import * as fs from "fs";
import { UsageError } from "../infra/core/errors";
import { CampaignShapeError } from "./lib/pinpoint/campaign-types";
import { readInputFile } from "./lib/text/input-files";

const FLAGS = {
  endpoints: {
    type: "string",
    value: "PATH|s3://B/PREFIX/",
    help: "a Pinpoint endpoint export (a file, a directory or an S3 prefix; plain or gzip)",
  },
  out: {
    ...OUT,
    note: "recipients.csv, skipped.csv and (with --campaign-file) campaign.yaml",
    default: "out/pinpoint",
  },
  "value-separator": {
    type: "string",
    value: "SEP",
    help: "joins a multi-valued attribute's values",
    default: DEFAULT_VALUE_SEPARATOR,
    defaultHelp: `"${DEFAULT_VALUE_SEPARATOR}"`,
  },
  "campaign-file": {
    type: "string",
    value: "FILE",
    help: "what aws pinpoint get-campaign prints: prints the same campaign as a launch",
  },
  "campaign-id": {
    type: "string",
    value: "ID",
    help: "the sendtime campaign id (default: the Pinpoint campaign's Name, lower case)",
  },
  recipients: { ...RECIPIENTS, note: "the one the printed command names", defaultHelp: "DIR/recipients.csv" },
  ...nowFlag("a campaign whose start has passed by then is noted: its command would plan nothing"),
  "put-sms-opt-outs": {
    type: "boolean",
    help: "put the numbers of DIR/sms-opt-outs.csv into the stack's SMS opt-out list (output smsOptOutListName)",
    with: "endpoints",
  },
  "sms-opt-out-list": {
    type: "string",
    value: "NAME",
    help: "with --put-sms-opt-outs: the SMS opt-out list (name or ARN) instead of the stack output smsOptOutListName",
  },
  ...dryRunFlag("with --put-sms-opt-outs: says which list and how many numbers it would put"),
  ...stackFlags(),
  ...timeoutFlag(
    3_600,
    `each S3 call, and a read that stalls, is bounded by ${DEFAULT_S3_TIMEOUTS.callTimeoutMs / 1000} s`,
  ),
  ...jsonFlag(
    '{"endpoints": {counts, places, columns, output}, "campaign": {command, commandLine, file, launch, notes}}',
  ),
  ...progressFlag(),
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "import-pinpoint",
  usage: ["[--endpoints PATH | s3://BUCKET/PREFIX/] [--campaign-file FILE] [--out DIR] [flags] [--json]"],
  summary: `Endpoints: one recipients.csv row (id, email, timezone, the place columns latitude, longitude, postal_code, country
and phone, one column per attribute) per ACTIVE, opted-in EMAIL endpoint with an address SES accepts, the phone (E.164)
from the user's first SMS endpoint; a user with only SMS endpoints gets a row of its own (email empty); every endpoint
left out goes to skipped.csv (file,line,endpoint_id,user_id,reason,detail), opted-out numbers to sms-opt-outs.csv
(--put-sms-opt-outs puts them into the stack's SMS opt-out list).
An address any endpoint opts out is imported from none; an endpoint Id read twice counts its latest EffectiveDate.
Campaign: prints the launch-campaign command with the same schedule, quiet time, templates, treatments, holdout and
rate, writes it as DIR/campaign.yaml (\`launch-campaign --config\`), and says what to do for every setting it cannot map.`,
  flags: FLAGS,
  exitCodes: EXIT_CODES["import-pinpoint"],
  changesAws: true,
  reports: true,
  reference: "docs/pinpoint.md",
  renamed: { campaign: "campaign-file" },
};

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

export const main = commandMain(COMMAND, async (f, io): Promise<number> => {
  if (f.endpoints === undefined && f["campaign-file"] === undefined)
    throw new UsageError("give --endpoints, --campaign-file or both (see --help)");
  const deadline = new Deadline(f["timeout-seconds"]);
  try {
    return await beforeDeadline(deadline, "import-pinpoint", importAndPrint(f, io, deadline));
  } finally {
    deadline.dispose();
  }
});

async function importAndPrint(f: FlagValues<typeof FLAGS>, io: Io, deadline: Deadline): Promise<number> {
  const outDir = f.out ?? path.join("out", "pinpoint");
  if (f["campaign-id"] !== undefined && campaignIdProblem(f["campaign-id"]))
    throw new UsageError(`--campaign-id: ${campaignIdProblem(f["campaign-id"])}`);
  const now = f.now ?? Date.now();
  const file = f["campaign-file"];
  const campaign = file === undefined ? undefined : readCampaign(file, f["campaign-id"], now);

  let endpoints: ImportSummary | undefined;
  if (f.endpoints !== undefined) {
    const s3At = parseS3Url(f.endpoints);
    const sources = s3At ? await s3ExportSources(s3Client(f.region), s3At) : localExportSources(f.endpoints);
    const rows = progressReporter(io, f.progress, "importing");
    endpoints = await importEndpoints({
      sources,
      outDir,
      separator: f["value-separator"],
      progress: rows.report,
    }).finally(() => rows.end());
  }
  const smsOptOuts = endpoints && f["put-sms-opt-outs"] ? await putSmsOptOuts(f, io, endpoints, deadline) : undefined;
  const recipients = f.recipients ?? endpoints?.output.recipients ?? path.join(outDir, "recipients.csv");
  const command = campaign?.launch ? launchArgs(campaign.launch, recipients) : undefined;
  const campaignFile = command ? writeCampaignFile(outDir, command) : undefined;
  if (f.json) {
    const campaignJson = campaign && {
      command: command ?? null,
      commandLine: command ? commandLine(command) : null,
      file: campaignFile ?? null,
      launch: campaign.launch ?? null,
      notes: campaign.notes,
    };
    io.out(JSON.stringify({ endpoints, campaign: campaignJson, smsOptOuts: smsOptOuts ?? null }, null, 2) + "\n");
  } else {
    const lines = [
      ...(endpoints ? formatEndpoints(endpoints) : []),
      ...(smsOptOuts ? [formatOptOuts(smsOptOuts)] : []),
      ...(campaign ? formatCampaign(campaign, command, campaignFile) : []),
    ];
    io.out(lines.join("\n") + "\n");
  }
  if (endpoints && endpoints.recipients === 0) {
    // The rule for rows: skipped endpoints are listed with their reason; an import that leaves nothing to send is a finding.
    const reasons = Object.entries(endpoints.skipped.byReason)
      .map(([r, c]) => `${r} ${c}`)
      .join(", ");
    io.err(
      `error: no endpoint could be imported: ${endpoints.skipped.total} skipped${reasons ? ` (${reasons})` : ""}, listed in ${endpoints.output.skipped}\n`,
    );
    return 1;
  }
  return campaign && !campaign.launch ? 1 : 0;
}

/** --put-sms-opt-outs: the numbers the import listed (DIR/sms-opt-outs.csv) into the stack's opt-out list. */
async function putSmsOptOuts(
  f: FlagValues<typeof FLAGS>,
  io: Io,
  s: ImportSummary,
  deadline: Deadline,
): Promise<OptOutPutResult> {
  const outputs = f["sms-opt-out-list"] === undefined ? outputsFromFlags(f) : { region: f.region };
  const list = f["sms-opt-out-list"] ?? outputs.smsOptOutListName;
  if (!list)
    throw new UsageError(
      "--put-sms-opt-outs: missing stack output smsOptOutListName (a stack without sendtime:sms has none); give --stack NAME, --outputs FILE or --sms-opt-out-list NAME",
    );
  const numbers = fs
    .readFileSync(s.output.smsOptOuts, "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.split(",")[0])
    .filter((phone) => phone !== "");
  const progress = progressReporter(io, f.progress, "putting SMS opt-outs");
  try {
    return await putOptedOutNumbers(smsVoiceClient(outputs.region), deadline, list, numbers, {
      dryRun: f["dry-run"] === true,
      progress: (n) => progress.report(n, "numbers", numbers.length),
    });
  } finally {
    progress.end();
  }
}

function formatOptOuts(r: OptOutPutResult): string {
  const numbers = `${r.put.toLocaleString("en-US")} number${r.put === 1 ? "" : "s"}`;
  return r.dryRun
    ? `  SMS opt-outs (dry run): would put ${numbers} into the opt-out list ${r.list} (PutOptedOutNumber); nothing changed`
    : `  SMS opt-outs: put ${numbers} into the opt-out list ${r.list}`;
}

function readCampaign(file: string, campaignId: string | undefined, now: number): CampaignMapping {
  const text = readInputFile(file);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new CampaignShapeError(`${file}: not JSON (${(e as Error).message})`);
  }
  try {
    return mapCampaign(json, {
      campaignId,
      maxIdLength: scheduler.nameMaxLength - CAMPAIGN_PREFIX.length,
      flags: NOTE_FLAGS,
      now,
    });
  } catch (e) {
    // The same kind, with the file named.
    if (e instanceof CampaignShapeError) throw new CampaignShapeError(`${file}: ${e.message}`);
    throw e;
  }
}

/**
 * DIR/campaign.yaml: the same settings as the printed command, as a campaign file (launch-campaign --config); paths
 * relative to DIR. A file already there with other content is not overwritten (it may hold a user's edits).
 */
function writeCampaignFile(dir: string, command: string[]): string {
  const file = path.join(dir, "campaign.yaml");
  const text = `# launch-campaign --config ${file} (from import-pinpoint; flags given on the command line win)\n${campaignFileText(command, LAUNCH_TABLE, dir)}`;
  let existing: string | undefined;
  try {
    existing = fs.readFileSync(file, "utf8");
  } catch {
    existing = undefined;
  }
  if (existing !== undefined && existing !== text)
    throw new UsageError(
      `${file} exists with other settings (edited?): not overwritten; move it away or give another --out`,
    );
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(`${file}.${process.pid}.tmp`, text);
    fs.renameSync(`${file}.${process.pid}.tmp`, file);
  } catch (e) {
    throw new UsageError(`${file}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return file;
}

/** launch-campaign's arguments for the settings (its flag names live here, not in the core). */
export function launchArgs(l: LaunchSettings, recipients: string): string[] {
  const f = LAUNCH_FLAGS;
  const a = [f.campaign, l.campaignId, f.recipients, recipients, f.template, l.template];
  const t = l.sendTime;
  const at = (hour: number, minute: number, zone: string) => [
    f.hour,
    String(hour),
    f.minute,
    String(minute),
    f.defaultTimezone,
    zone,
  ];
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
      ? [
          `  endpoint Ids read more than once: ${n(s.repeatedIds)} (each counts its latest line; the others are skipped as superseded)`,
        ]
      : []),
    `  zones: ${n(s.zones.missing)} without Demographic.Timezone, ${n(s.zones.unknown)} not an IANA zone name (launch-campaign maps names it knows, then tries the place columns, then --default-timezone)`,
    formatPlaces(s.places),
    `  sms: ${count(s.sms.endpoints, "SMS endpoint")} → ${count(s.sms.intoEmailRows, "number")} of EMAIL rows, ${count(s.sms.ownRows, "row")} of their own (email empty); ${count(s.sms.optOuts, "opted-out number")} (never imported) in ${s.output.smsOptOuts}`,
    `  columns: ${s.columns.join(", ")}`,
    `  files: ${s.output.recipients}, ${s.output.skipped}, ${s.output.smsOptOuts}`,
  ];
}

/** "1 row", "2 rows". */
const count = (x: number, what: string) => `${x.toLocaleString("en-US")} ${what}${x === 1 ? "" : "s"}`;

function formatPlaces(p: ImportSummary["places"]): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const alpha3 = p.countryFromAlpha3 ? ` (${n(p.countryFromAlpha3)} from alpha-3)` : "";
  return (
    `  places: ${n(p.coordinates)} with latitude/longitude, ${n(p.postalCode)} a postal code, ${n(p.country)} a country${alpha3}, ` +
    `${n(p.phone)} a phone; from the user's SMS endpoint: ${n(p.fromSms.location)} Location, ${n(p.fromSms.timezone)} Demographic.Timezone`
  );
}

function formatCampaign(c: CampaignMapping, command: string[] | undefined, file: string | undefined): string[] {
  const lines = command
    ? [
        "",
        "Campaign as a sendtime launch (add --dry-run first, then --stack or --outputs):",
        `  ${commandLine(command)}`,
        `  or as a campaign file to keep in git: ${file}`,
        `  ${commandLine(["--config", file!])}`,
      ]
    : ["", "Campaign: no launch-campaign equivalent (see below)."];
  if (c.notes.length) lines.push("", "Settings to act on (Pinpoint setting: value → what to do in sendtime):");
  for (const x of c.notes) lines.push(`  - ${x.setting}: ${x.value} → ${x.instead}`);
  return lines;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
