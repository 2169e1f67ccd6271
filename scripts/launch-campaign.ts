/**
 * Plans a campaign from a recipient CSV and launches it on a deployed stack. See COMMAND (its --help).
 */
import { randomBytes } from "crypto";
import * as path from "path";
import { Deadline } from "./lib/aws/call";
import { cloudWatchClient, s3Client, sesClient, ssmClient } from "./lib/aws/clients";
import { readUnsubscribeKey } from "./lib/aws/unsubscribe-key";
import { readContactListOptOuts } from "./lib/aws/contact-opt-outs";
import { BulkSigning, PLACEHOLDER_UNSUBSCRIBE_URL } from "./lib/planning/unsubscribe-links";
import { requireSesTemplates } from "./lib/aws/ses-templates";
import { campaignTemplates, warnNotChecked } from "./lib/templates/campaign-templates";
import {
  bulkRatesFromFlags,
  nowFromFlag,
  rateFromFlags,
  paceFromFlags,
  recipientOptionsFromFlags,
  timingFromFlags,
  recurringWindowRefusal,
} from "./lib/cli/campaign-flags";
import { scheduler } from "../infra/core/plan/quotas";
import { Command } from "./lib/cli/flags";
import { LAUNCH_FLAGS, LAUNCH_GROUP } from "./lib/cli/launch-flags";
import {
  refuseOneTimeFlagsWithEvery,
  scheduleQuotaFrom,
  stackOf,
  windowMinutesFromFlags,
} from "./lib/cli/launch-checks";
import { discardUnread, LaunchFlags, launchPlan, LaunchReport, Run } from "./lib/cli/launch-run";
import { graceMinutesFlag, missedPolicyFlag } from "./lib/cli/timing-flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";
import { commandMain, Io, runMain } from "./lib/cli/run";
import { progressReporter } from "./lib/cli/progress";
import { checkLaunchId, planObjectKey } from "./lib/aws/launch";
import { StreamingPlanUpload } from "./lib/aws/plan-upload";
import { openS3Object, parseS3Url } from "./lib/aws/s3-objects";
import { quietWindowShortfall } from "./lib/planning/window";
import { rampFromFlag, withDailyCap } from "./lib/planning/ramp";
import { smsPaced } from "./lib/planning/size-window";
import { smsPaceFromFlags } from "./lib/cli/sms-flags";
import { smsBulkEntriesPerLine } from "./lib/planning/sms-bulk";
import { planCampaign } from "./lib/planning/plan";
import { PlanSummary } from "./lib/planning/plan-summary";
import { OutputLock } from "./lib/planning/output-folder";
import { scheduleQuotaFinding } from "./lib/planning/schedule-quota";
import { requireOutputs, StackOutputs } from "./lib/aws/stack-outputs";
import { FindingsError, UsageError } from "../infra/core/errors";
import { PlanKeyTaken } from "./lib/aws/plan-upload";
import { nothingToSendReasons } from "./lib/planning/nothing-to-send";
import { readConfigFile } from "./lib/cli/config-file";
import { smsRequestFromFlags, textWindowShortfall } from "./lib/cli/sms-launch";
import {
  NOT_CHECKED_IN_A_DRY_RUN,
  preflightBeforePlanning,
  preflightOfPlan,
  rateWithAccount,
  sandboxCollector,
} from "./lib/cli/preflight";

const FLAGS = LAUNCH_FLAGS;

export const COMMAND: Command<typeof FLAGS> = {
  script: "launch-campaign",
  usage: [
    "--campaign ID --recipients FILE --template NAME --date YYYY-MM-DD --hour H [flags] --dry-run",
    "--campaign ID --recipients FILE --template NAME (a send-time rule) (--stack NAME | --outputs FILE)",
    "--config campaign.yaml [flags] (--dry-run | --stack NAME | --outputs FILE)",
  ],
  summary: `Plans a schedule per recipient and step into DIR/plan.jsonl (rejects.csv), sizes the window, then launches it.`,
  flags: FLAGS,
  regroup: { Stack: LAUNCH_GROUP, "Recipient list": "Campaign" },
  exitCodes: EXIT_CODES["launch-campaign"],
  changesAws: true,
  reports: true,
  reference: "docs/launching.md",
};

/** The CLI; returns the exit code. Output goes through `io` so tests can run it in-process. */
export const main = commandMain(COMMAND, async (f, io) => {
  const locks: OutputLock[] = [];
  try {
    return await planAndLaunch(f, io, locks);
  } finally {
    for (const lock of locks) lock.release();
  }
});

/**
 * main's work, in the order a reader follows: check the flags, plan (the plan streams to S3 as it is written when
 * launching), refuse what must not be launched (the upload is then aborted: nothing becomes visible), complete and
 * check the upload, start the fan-out (one execution per plan object), follow it with --wait. The output folder's
 * lock goes into `locks`, held until the plan is uploaded and started.
 */
async function planAndLaunch(f: LaunchFlags, io: Io, locks: OutputLock[]): Promise<number> {
  refuseFileClock(f.config, f["dry-run"]);
  const run = await prepareRun(f, io);
  // A local list must not be one of the files the run removes and rewrites in its folder: refused before any is touched.
  const lock = OutputLock.acquire(
    run.f.out ?? path.join("out", run.campaignId),
    run.request.input ? [] : [run.request.file],
  );
  locks.push(lock);
  // The plan's key must be known when its first part is sent: --launch-id, else the plan's hash when the whole plan
  // fits one part (sent at the end), else a key unique to this upload.
  let launchId = run.launchIdFlag;
  const uploadId = `${new Date().toISOString().replace(/[-:]|\.\d+Z$/g, "")}-${randomBytes(4).toString("hex")}`;
  const upload =
    run.target &&
    new StreamingPlanUpload(
      run.deadline,
      s3Client(run.target.region),
      run.target.bucketName,
      (n) => planObjectKey(run.campaignId, launchId ?? uploadId, n),
      undefined,
      run.progress,
    );
  let completed = false;
  try {
    const summary = await planCampaign({
      ...run.request,
      out: lock,
      planSink: upload,
      localPlan: !run.f["no-local-plan"],
    }).finally(() => run.rows.end());
    launchId ??= summary.planSha256.slice(0, 16);
    const report = new LaunchReport(run, summary, launchId, io);
    const refusal = refusalOf(run, summary, report);
    if (refusal || !upload) {
      await abortUpload(upload, io);
      return report.finish(refusal ? 1 : 0, refusal ? [refusal] : dryRunLines(report));
    }
    const failed = await preflightOfPlan(run.deadline, sesClient(run.target!.region), run.preflight!, summary, {
      force: run.f.force,
      io,
      data: report.data,
    });
    if (failed) {
      await abortUpload(upload, io);
      return report.finish(2, [failed]);
    }
    const objects = await upload.complete().catch((e) => {
      if (!(e instanceof PlanKeyTaken)) throw e;
      throw new FindingsError(`launch id ${launchId} already holds another plan (${e.where}); use another --launch-id`);
    });
    completed = true;
    return await launchPlan(run, summary, launchId, objects, report, (refused) =>
      discardUnread(upload, refused, uploadId, io),
    );
  } catch (e) {
    if (!completed) await abortUpload(upload, io);
    run.deadline.dispose();
    throw e;
  }
}

/** The flags, checked and turned into a Run; the list in S3 is opened (one GetObject) so a missing one stops here. */
async function prepareRun(f: LaunchFlags, io: Io): Promise<Run> {
  const need = (name: "campaign" | "recipients" | "template") => {
    const v = f[name];
    if (v === undefined) throw new UsageError(`--${name} is required (see --help)`);
    return v;
  };
  const campaignId = need("campaign");
  const template = need("template");
  const timing = timingFromFlags(f, template);
  refuseOneTimeFlagsWithEvery(f);
  const missed = missedPolicyFlag(f.missed) ?? "skip";
  const now = nowFromFlag(f.now);
  const bulkRates = f.bulk ? bulkRatesFromFlags(f) : undefined;
  const flagRate = bulkRates?.emails ?? rateFromFlags(f);
  const { outputs, target } = stackOf(f, campaignId);
  const steps = timing.steps.map((s) => ({ ...s, template: s.template ?? template }));
  const sms = smsRequestFromFlags(f, steps, timing.audience, io);
  // The email steps' templates (SES's, checked locally and in SES); a text step's is its sms.txt (smsRequestFromFlags).
  const templates = campaignTemplates(f.templates, steps, timing.audience);
  const launchIdFlag = f["launch-id"] === undefined ? undefined : checkLaunchId(f["launch-id"]);
  const quota = scheduleQuotaFrom(f["max-schedules"], outputs.maxSchedules);
  const rows = progressReporter(io, f.progress, "planning");
  const progress = (text: string) => rows.say(text);
  const pollSeconds = f["poll-seconds"];
  const graceMinutes = graceMinutesFlag(f["grace-minutes"]);
  const windowMinutes = windowMinutesFromFlags(f, timing);
  const deadline = new Deadline(f["timeout-seconds"], progress);
  // The outputs a bulk launch needs are checked before any AWS call; then SES: a launch whose templates SES lacks
  // reads nothing from S3 and starts nothing.
  if (target && bulkRates) requireOutputs(outputs, [...BULK_LAUNCH_OUTPUTS], {});
  if (target) await requireSesTemplates(deadline, sesClient(target.region), templates.names, outputs.templateNames);
  const bulk = bulkRates !== undefined;
  const preflight =
    target &&
    (await preflightBeforePlanning(deadline, sesClient(target.region), outputs, {
      bulk,
      force: f.force,
      io,
      cloudWatch: cloudWatchClient(target.region),
    }));
  // Texts are paced by the number: the pool's message parts per second (--sms-mps, else the stack's smsMps).
  const smsPace = smsPaceFromFlags(f, timing.steps, outputs.smsMps);
  const rate = smsPaced(rateWithAccount(flagRate, f, preflight, bulk), smsPace);
  // s3://bucket/key.csv is streamed from S3 once, never copied to local disk.
  const recipients = need("recipients");
  const listInS3 = parseS3Url(recipients, "--recipients");
  const input = listInS3 ? await openS3Object(s3Client(outputs.region), listInS3) : undefined;
  const signing = bulkRates && (await bulkSigning(deadline, outputs, target !== undefined));
  const contactList = bulkRates && target ? await contactListOptOuts(deadline, outputs, progress) : undefined;
  const smsEntriesPerLine = smsPace && smsBulkEntriesPerLine(smsPace); // texts a bulk line of texts holds
  const request: Run["request"] = {
    campaignId,
    file: recipients,
    input: input && { stream: input.body, bytes: input.bytes },
    rule: timing.rule,
    steps,
    templates: templates.set,
    templatesNotChecked: templates.notChecked,
    defaultZone: timing.defaultZone,
    recipients: recipientOptionsFromFlags(f),
    quiet: timing.quiet,
    audience: timing.audience,
    missed: { policy: missed, graceMinutes },
    now,
    ...paceFromFlags(f, outputs.createScheduleTps),
    rate,
    window: windowMinutes === undefined ? undefined : { minutes: windowMinutes, source: "--window-minutes" },
    bulk: signing && bulkRates && { signing, rates: { ...bulkRates, emails: rate }, contactList, smsEntriesPerLine },
    progress: rows.report,
    onPlanned: sandboxCollector(preflight),
    ramp: withDailyCap(rampFlag(f, now), smsPace?.dailyCap, now),
    sms,
  };
  warnNotChecked(templates.notChecked, (t) => io.err(t));
  return { f, campaignId, target, quota, launchIdFlag, request, pollSeconds, deadline, progress, rows, preflight };
}

/**
 * The outputs a bulk launch needs: the unsubscribe endpoint and its key (to sign links), and the contact list and topic
 * whose opt-outs it rejects (SendBulkEmail has no ListManagementOptions, so SES would not drop them).
 */
const BULK_LAUNCH_OUTPUTS = [
  "unsubscribeUrl",
  "unsubscribeKeyParameter",
  "contactListName",
  "unsubscribeTopic",
] as const;

/** A real bulk launch's look at the contact list: every address opted out of the topic or of every topic. */
async function contactListOptOuts(d: Deadline, outputs: StackOutputs, progress: (text: string) => void) {
  const o = requireOutputs(outputs, [...BULK_LAUNCH_OUTPUTS], {});
  return readContactListOptOuts(
    d,
    sesClient(o.region),
    { contactListName: o.contactListName, topicName: o.unsubscribeTopic },
    progress,
  );
}

/**
 * What --bulk signs unsubscribe links with: for a launch, the stack's key (SSM, unsubscribeKeyParameter) and endpoint
 * (unsubscribeUrl); for a dry run, no key (no AWS call: the links are unsigned) and the stack's endpoint when its
 * outputs are given, else https://unsubscribe.invalid/. The endpoint must be an https URL.
 */
async function bulkSigning(d: Deadline, outputs: StackOutputs, launching: boolean): Promise<BulkSigning> {
  const baseUrl = launching
    ? requireOutputs(outputs, ["unsubscribeUrl", "unsubscribeKeyParameter"], {}).unsubscribeUrl
    : (outputs.unsubscribeUrl ?? PLACEHOLDER_UNSUBSCRIBE_URL);
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== "https:")
    throw new UsageError(`stack output unsubscribeUrl ${baseUrl}: expected an https URL (the endpoint's function URL)`);
  if (!launching)
    return {
      key: undefined,
      baseUrl,
      placeholder: true,
      source: `unsigned (a dry run makes no AWS call, so it has no key): the links' tokens are not valid${outputs.unsubscribeUrl ? "" : ", and the endpoint is a placeholder too (no stack outputs given)"}`,
    };
  const parameter = outputs.unsubscribeKeyParameter!;
  const key = await readUnsubscribeKey(d, ssmClient(outputs.region), parameter);
  return {
    key,
    baseUrl,
    placeholder: false,
    source: `signed with the key in SSM parameter ${parameter} (stack output unsubscribeKeyParameter)`,
  };
}

/**
 * `now:` in a campaign file fixes the clock of a dry run or a test; a file kept in git with it would, launched for
 * real, judge missed sends against a day long gone. Refused in one line before anything is read or planned.
 */
function refuseFileClock(config: string | undefined, dryRun: boolean): void {
  if (config === undefined || dryRun || !("now" in readConfigFile(config, COMMAND.flags))) return;
  throw new UsageError(
    `--config ${config}: key "now" is for dry runs and tests (it fixes the clock missed sends are judged by); remove it to launch, or add --dry-run`,
  );
}

/** Why this plan must not be launched (the schedule quota, no window that fits, nothing to send), or undefined. */
function refusalOf(run: Run, summary: PlanSummary, report: LaunchReport): string | undefined {
  const quotaFinding = scheduleQuotaFinding(
    { schedules: summary.schedules, recipients: summary.recipientsPlanned, steps: summary.steps.length },
    run.quota,
  );
  report.data.scheduleQuota = { ...run.quota, fits: !quotaFinding };
  if (quotaFinding) {
    const kept = run.f["no-local-plan"] ? "The plan is not kept (--no-local-plan)" : "The plan is kept for review";
    // Parts of a large plan go to S3 while it is written; the refusal aborts that upload, so none of it stays.
    const discarded = run.target ? " (any parts sent while planning are discarded: AbortMultipartUpload)" : "";
    return `${quotaFinding} ${kept}; nothing was uploaded or started${discarded}.`;
  }
  if (!summary.window.fits)
    return `Not launched: no flexible window up to ${scheduler.flexibleWindowMinutes.max} minutes keeps the peak within ${summary.window.effectiveTps}/s; it needs ${summary.window.requiredTps}/s (raise the quotas, or split the campaign). The plan is kept for review.`;
  const tooLong =
    summary.window.source === "computed" &&
    recurringWindowRefusal(run.request.rule, run.f.every, summary.window.minutes, "computed");
  if (tooLong) return `Not launched: ${tooLong}. The plan is kept for review.`;
  const quietShort =
    summary.window.quietCheckedMinutes !== undefined &&
    quietWindowShortfall(summary.window.minutes, summary.window.quietCheckedMinutes);
  if (quietShort) return `Not launched: ${quietShort}. The plan is kept for review.`;
  const textShort = textWindowShortfall(summary);
  if (textShort) return `Not launched: ${textShort}. The plan is kept for review.`;
  if (summary.schedules === 0) {
    const why = nothingToSendReasons(summary);
    return `Nothing would be sent: no schedule in the plan${why.length ? `: ${why.join("; ")}` : ""}${run.target ? "; nothing launched" : ""}.`;
  }
  return undefined;
}

/** --ramp, refused with --every: a recurring schedule is one schedule for every occurrence, not a send of one day. */
function rampFlag(f: LaunchFlags, now: number) {
  for (const flag of ["ramp", "sms-daily-cap"] as const)
    if (f[flag] !== undefined && f.every !== undefined)
      throw new UsageError(
        `--${flag} does not apply to --every ${f.every}: a recurring schedule sends every occurrence`,
      );
  return rampFromFlag(f.ramp, now);
}

/** A dry run's last lines: nothing uploaded or started, and what a launch's preflight checks that it did not. */
function dryRunLines(report: LaunchReport): string[] {
  report.data.preflight = { checked: false, notChecked: NOT_CHECKED_IN_A_DRY_RUN };
  return [`Dry run: nothing uploaded or started; ${NOT_CHECKED_IN_A_DRY_RUN}.`];
}

/** Aborts a plan upload that must not (or could not) be completed; what it could not clean up is a warning. */
async function abortUpload(upload: StreamingPlanUpload | undefined, io: Io): Promise<void> {
  for (const problem of (await upload?.abort()) ?? []) io.err(`warning: ${problem}\n`);
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
