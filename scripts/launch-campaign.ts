/**
 * Plans a campaign from a recipient CSV and launches it on a deployed stack. See COMMAND (its --help).
 */
import { randomBytes } from "crypto";
import * as path from "path";
import { SFNClient } from "@aws-sdk/client-sfn";
import { cleanupAt } from "../infra/state-machines/fanout-definition";
import { scheduler } from "../infra/core/plan/quotas";
import { Deadline } from "./lib/aws/call";
import { s3Client, sesClient, sfnClient, ssmClient } from "./lib/aws/clients";
import { readUnsubscribeKey } from "./lib/aws/unsubscribe-key";
import { readContactListOptOuts } from "./lib/aws/contact-opt-outs";
import { BulkSigning, PLACEHOLDER_UNSUBSCRIBE_URL } from "./lib/planning/unsubscribe-links";
import { requireSesTemplates } from "./lib/aws/ses-templates";
import { campaignTemplates, warnNotChecked } from "./lib/templates/campaign-templates";
import {
  bulkRatesFromFlags,
  campaignFlag,
  nowFromFlag,
  rateFromFlags,
  paceFromFlags,
  recipientOptionsFromFlags,
  templateFlag,
  timingFromFlags,
  recurringWindowRefusal,
} from "./lib/cli/campaign-flags";
import { count, counted, formatDuration, plural } from "./lib/text/format";
import { Command, FlagValues } from "./lib/cli/flags";
import { LAUNCH_FLAGS, LAUNCH_GROUP } from "./lib/cli/launch-flags";
import { graceMinutesFlag, missedPolicyFlag } from "./lib/cli/timing-flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";
import { intFlag, Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { ProgressReporter, progressReporter } from "./lib/cli/progress";
import {
  checkLaunchId,
  executionName,
  FanOutResult,
  followFanOut,
  MapRunItems,
  MIN_POLL_SECONDS,
  planObjectKey,
  startFanOut,
  uploadLaunchRecord,
} from "./lib/aws/launch";
import { PlanObject, StreamingPlanUpload } from "./lib/aws/plan-upload";
import { openS3Object, parseS3Url } from "./lib/aws/s3-objects";
import { longestFreeMinutes, MIN_GAP_MINUTES } from "../infra/core/timing/promises";
import { quietWindowShortfall } from "./lib/planning/window";
import { planCampaign } from "./lib/planning/plan";
import { PlanRequest } from "./lib/planning/plan-request";
import { PlanSummary } from "./lib/planning/plan-summary";
import { OutputLock } from "./lib/planning/output-folder";
import { ScheduleQuota, scheduleQuotaFinding } from "./lib/planning/schedule-quota";
import { buildLaunchRecord } from "./lib/planning/launch-record";
import { journeyNamed, requireOutputs, StackOutputs } from "./lib/aws/stack-outputs";
import { AlreadyLaunched, DeadlineExceeded, FindingsError, PlanKeyTaken, UsageError } from "../infra/core/errors";
import { deadlineFromFlag, outputsFromFlags } from "./lib/cli/aws-flags";
import { inferredText, mappedText } from "./lib/planning/row-zones";

const FLAGS = LAUNCH_FLAGS;

export const COMMAND: Command<typeof FLAGS> = {
  script: "launch-campaign",
  usage: [
    "--campaign ID --recipients FILE --template NAME --date YYYY-MM-DD --hour H [flags] --dry-run",
    "--campaign ID --recipients FILE --template NAME (a send-time rule) (--stack NAME | --outputs FILE)",
    "--config campaign.yaml [flags] (--dry-run | --stack NAME | --outputs FILE)",
  ],
  summary: `Plans one schedule per recipient per step into DIR/plan.jsonl (rejected rows: DIR/rejects.csv, with line and
reason), sizes the flexible window, then (without --dry-run) uploads the plan and starts the fan-out.`,
  flags: FLAGS,
  regroup: { Stack: LAUNCH_GROUP, "Recipient list": "Campaign" },
  exitCodes: EXIT_CODES["launch-campaign"],
  reference: "docs/launching.md",
};

type Flags = FlagValues<typeof FLAGS>;

if (require.main === module) runMain(() => main(process.argv.slice(2)));

/** The CLI; returns the exit code. Output goes through `io` so tests can run it in-process. */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const locks: OutputLock[] = [];
  try {
    return await planAndLaunch(argv, io, locks);
  } finally {
    for (const lock of locks) lock.release();
  }
}

/** Everything a run needs, checked before any file is written or any AWS call made (but the list's GetObject). */
interface Run {
  f: Flags;
  campaignId: string;
  /** Where and what to launch; undefined in a dry run. */
  target?: { bucketName: string; stateMachineArn: string; region?: string };
  quota: ScheduleQuota;
  /** --launch-id, or undefined: the plan's hash, known once it is written. */
  launchIdFlag?: string;
  request: Omit<PlanRequest, "out" | "planSink" | "localPlan">;
  pollSeconds: number;
  deadline: Deadline;
  /** stderr lines; they clear the planning progress line first (rows). */
  progress: (text: string) => void;
  rows: ProgressReporter;
}

/**
 * main's work, in the order a reader follows: check the flags, plan (the plan streams to S3 as it is written when
 * launching), refuse what must not be launched (the upload is then aborted: nothing becomes visible), complete and
 * check the upload, start the fan-out (one execution per plan object), follow it with --wait. The output folder's
 * lock goes into `locks`, held until the plan is uploaded and started.
 */
async function planAndLaunch(argv: string[], io: Io, locks: OutputLock[]): Promise<number> {
  const run = await prepareRun(parseFlags(argv, COMMAND), io);
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
      return report.finish(refusal ? 1 : 0, [refusal ?? "Dry run: nothing uploaded or started."]);
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
async function prepareRun(f: Flags, io: Io): Promise<Run> {
  const need = (name: "campaign" | "recipients" | "template") => {
    const v = f[name];
    if (v === undefined) throw new UsageError(`--${name} is required (see --help)`);
    return v;
  };
  const campaignId = campaignFlag(need("campaign"));
  const template = templateFlag(need("template"));
  const timing = timingFromFlags(f, template);
  if (f.bulk && f.every !== undefined)
    throw new UsageError(
      `--bulk does not apply to --every ${f.every}: a bulk schedule is one-time (at()) for the recipients who share its instant; a recurring send is one schedule per recipient`,
    );
  const recurringFlag =
    f.every !== undefined &&
    ([f.missed && "--missed", f["grace-minutes"] && "--grace-minutes"].find(Boolean) as string);
  if (recurringFlag)
    throw new UsageError(
      `${recurringFlag} does not apply to --every ${f.every}: occurrences before the launch's start (now + fan-out + margin) are simply not sent`,
    );
  const missed = missedPolicyFlag(f.missed) ?? "skip";
  const now = nowFromFlag(f.now);
  const bulkRates = f.bulk ? bulkRatesFromFlags(f) : undefined;
  const rate = bulkRates?.emails ?? rateFromFlags(f);
  const { outputs, target } = stackOf(f, campaignId);
  const steps = timing.steps.map((s) => ({ ...s, template: s.template ?? template }));
  const templates = campaignTemplates(f.templates, steps, timing.audience);
  const launchIdFlag = f["launch-id"] === undefined ? undefined : checkLaunchId(f["launch-id"]);
  const quota = scheduleQuotaFrom(f["max-schedules"], outputs.maxSchedules);
  const rows = progressReporter(io, f.progress, "planning");
  const progress = (text: string) => rows.say(text);
  const pollSeconds = intFlag("poll-seconds", f["poll-seconds"], MIN_POLL_SECONDS, 3_600, 5);
  const graceMinutes = graceMinutesFlag(f["grace-minutes"]);
  const windowMinutes = windowFromFlag(f["window-minutes"]);
  const tooLong =
    windowMinutes === undefined
      ? undefined
      : recurringWindowRefusal(timing.rule, f.every, windowMinutes, "--window-minutes");
  if (tooLong) throw new UsageError(tooLong);
  if (windowMinutes !== undefined && timing.quiet && windowMinutes > longestFreeMinutes(timing.quiet))
    throw new UsageError(
      `--window-minutes ${windowMinutes}: longer than the longest free time quiet time leaves (${longestFreeMinutes(timing.quiet)} minutes): every send's window would touch quiet time`,
    );
  const deadline = deadlineFromFlag(f["timeout-seconds"], 3_600, progress);
  // The outputs a bulk launch needs are checked before any AWS call; then SES: a launch whose templates SES lacks
  // reads nothing from S3 and starts nothing.
  if (target && bulkRates) requireOutputs(outputs, [...BULK_LAUNCH_OUTPUTS], {});
  if (target) await requireSesTemplates(deadline, sesClient(target.region), templates.names, outputs.templateNames);
  // s3://bucket/key.csv is streamed from S3 once, never copied to local disk.
  const recipients = need("recipients");
  const listInS3 = parseS3Url(recipients, "--recipients");
  const input = listInS3 ? await openS3Object(s3Client(outputs.region), listInS3) : undefined;
  const signing = bulkRates && (await bulkSigning(deadline, outputs, target !== undefined));
  const contactList = bulkRates && target ? await contactListOptOuts(deadline, outputs, progress) : undefined;
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
    bulk: signing && bulkRates && { signing, rates: bulkRates, contactList },
    progress: rows.report,
  };
  warnNotChecked(templates.notChecked, (t) => io.err(t));
  return { f, campaignId, target, quota, launchIdFlag, request, pollSeconds, deadline, progress, rows };
}

/**
 * The stack outputs and, when launching, where to launch. Stack outputs are needed to launch; a dry run uses them when
 * given (quota, region) but does not require them. A campaign may not share its group with one of the stack's journeys.
 */
function stackOf(f: Flags, campaignId: string): { outputs: StackOutputs; target?: Run["target"] } {
  const launching = !f["dry-run"];
  const outputs = launching || f.stack !== undefined || f.outputs !== undefined ? outputsFromFlags(f) : {};
  if (journeyNamed(outputs, campaignId))
    throw new UsageError(
      `--campaign ${campaignId}: this stack has a journey of that name, whose subscribers' schedules are in group campaign-${campaignId}; a campaign would share it (and its housekeeping would delete them): choose another id`,
    );
  if (!launching) return { outputs };
  const target = requireOutputs(outputs, ["bucketName", "stateMachineArn"], {
    bucketName: "bucket",
    stateMachineArn: "state-machine-arn",
  });
  return { outputs, target: { ...target, region: outputs.region } };
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

function windowFromFlag(raw: string | undefined): number | undefined {
  const { min, max } = scheduler.flexibleWindowMinutes;
  return raw === undefined ? undefined : intFlag("window-minutes", raw, min, max);
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
  if (summary.schedules === 0)
    return `Nothing would be sent: no schedule in the plan${run.target ? "; nothing launched" : ""}.`;
  return undefined;
}

/** Aborts a plan upload that must not (or could not) be completed; what it could not clean up is a warning. */
async function abortUpload(upload: StreamingPlanUpload | undefined, io: Io): Promise<void> {
  for (const problem of (await upload?.abort()) ?? []) io.err(`warning: ${problem}\n`);
}

/** The summary (text or --json) and what happened, printed once at the end. */
class LaunchReport {
  readonly data: Record<string, unknown>;
  readonly lines: string[] = [];
  constructor(
    private readonly run: Run,
    private readonly summary: PlanSummary,
    launchId: string,
    private readonly io: Io,
  ) {
    this.data = { ...summary, launchId, dryRun: !run.target };
    const shortfall = windowShortfall(summary);
    if (shortfall) io.err(`warning: --window-minutes ${summary.window.minutes} is${shortfall.slice(1)}\n`);
  }

  finish(code: number, lines: string[] = []): number {
    this.run.deadline.dispose();
    this.lines.push(...lines);
    this.io.out(
      this.run.f.json
        ? JSON.stringify(this.data, null, 2) + "\n"
        : [...formatSummary(this.summary), ...this.lines].join("\n") + "\n",
    );
    return code;
  }
}

/**
 * Stores the launch record and starts one execution per plan object. One object (the usual case): started, then
 * followed with --wait. Several (a plan above the ItemReader limit): started one after another, each once the one
 * before has ended (two at once would together ask for twice the CreateSchedule rate the fan-out is paced for), so
 * the command follows them whether or not --wait is given; a part that does not succeed stops the rest.
 */
async function launchPlan(
  run: Run,
  summary: PlanSummary,
  launchId: string,
  objects: PlanObject[],
  report: LaunchReport,
  discard: (refused: PlanObject[]) => Promise<void>,
): Promise<number> {
  const { deadline: d, target } = { deadline: run.deadline, target: run.target! };
  const s3 = s3Client(target.region);
  const sfn = sfnClient(target.region);
  const planKeys = objects.map((o) => o.key);
  const record = buildLaunchRecord(summary, { id: launchId, planKeys, at: new Date(run.request.now) });
  const stored = await uploadLaunchRecord(d, s3, target.bucketName, record).catch(async (e) => {
    await discard(objects);
    throw e;
  });
  if (stored.kept)
    run.progress(
      `s3://${target.bucketName}/${stored.key} already records this plan (an earlier launch of it): kept as it is`,
    );
  Object.assign(report.data, {
    plan: { bucket: target.bucketName, key: planKeys[0], keys: planKeys },
    launchRecord: stored.key,
  });
  const executions: { name: string; arn: string; key: string }[] = [];
  report.data.executions = executions;
  const results: FanOutResult[] = [];
  for (const [i, object] of objects.entries()) {
    const name = executionName(run.campaignId, launchId, i + 1);
    const arn = await startFanOut(d, sfn, target.stateMachineArn, name, {
      campaign_id: run.campaignId,
      plan_bucket: target.bucketName,
      plan_key: object.key,
      window_minutes: summary.window.minutes,
      // A recurring campaign's group stays until its last schedule has ended (its EndDate), not its first occurrence.
      cleanup_at: cleanupAt(new Date(summary.recurring?.lastEndDate ?? summary.lastSend!), summary.window.minutes),
    }).catch(async (e) => {
      // Refused for certain: this object and the ones after it are read by no execution of this run. Not after a
      // retried request: the execution found may be this run's own first attempt, reading this object.
      if (e instanceof AlreadyLaunched && !e.afterRetry) await discard(objects.slice(i));
      throw e;
    });
    executions.push({ name, arn, key: object.key });
    if (i === 0) report.data.execution = { name, arn };
    const of = objects.length > 1 ? ` part ${i + 1} of ${objects.length} (${count(object.lines)} schedules)` : "";
    report.lines.push(`Launched${of}: s3://${target.bucketName}/${object.key} → execution ${name}`, `  ${arn}`);
    if (objects.length === 1 && !run.f.wait) return report.finish(0);
    if (objects.length > 1) run.progress(report.lines.slice(-2).join("\n"));
    const result = await followPart(run, sfn, arn, objects.slice(i + 1), target.bucketName);
    results.push(result);
    if (result.status !== "SUCCEEDED" && i + 1 < objects.length) {
      report.lines.push(
        `Part ${i + 1} ended ${result.status}: the remaining ${counted(objects.length - i - 1, "part")} (${objects
          .slice(i + 1)
          .map((o) => o.key)
          .join(
            ", ",
          )}) not started. Re-run the launch with a new --launch-id when the cause is fixed (existing schedules are kept, missing ones created).`,
      );
      break;
    }
  }
  return report.finish(fanOutOutcome(results, report), []);
}

/**
 * After a launch refused for certain (nothing of this run reads `refused`): the objects this run wrote under a key
 * unique to its upload are deleted; one it wrote under a launch id or plan hash is left (an execution of that name
 * may read it) and named; one S3 already held is an earlier launch's, not ours to mention.
 */
async function discardUnread(
  upload: StreamingPlanUpload,
  refused: PlanObject[],
  uploadId: string,
  io: Io,
): Promise<void> {
  const written = refused.filter((o) => !o.preexisting);
  const ownKey = (o: PlanObject) => path.posix.basename(o.key).startsWith(`${uploadId}.`);
  for (const line of await upload.deleteUnread(written.filter(ownKey))) io.err(`${line}\n`);
  for (const o of written.filter((x) => !ownKey(x)))
    io.err(
      `warning: s3://${o.bucket}/${o.key} was written by this run and is left in place: an execution of the same name may read it (plans expire with the bucket's lifecycle rule)\n`,
    );
}

/** Follows one execution to its end; running out of time names the parts that were then not started. */
async function followPart(
  run: Run,
  sfn: SFNClient,
  executionArn: string,
  rest: PlanObject[],
  bucket: string,
): Promise<FanOutResult> {
  try {
    return await followFanOut(
      run.deadline,
      sfn,
      { executionArn, resultsBucket: bucket, pollSeconds: run.pollSeconds },
      run.progress,
    );
  } catch (e) {
    if (!(e instanceof DeadlineExceeded) || rest.length === 0) throw e;
    throw new DeadlineExceeded(
      `${e.message}. Not started: ${rest.map((o) => `s3://${bucket}/${o.key}`).join(", ")}; re-run the launch with a new --launch-id and a longer --timeout-seconds (existing schedules are kept, missing ones created)`,
    );
  }
}

/** The fan-out's line(s) over every part followed; exit 0 only when every part succeeded without a failed row. */
function fanOutOutcome(results: FanOutResult[], report: LaunchReport): number {
  const items = results.map((r) => r.items).filter((i): i is MapRunItems => i !== null);
  const total = items.reduce((n, i) => n + i.total, 0);
  const succeeded = items.reduce((n, i) => n + i.succeeded, 0);
  const failed = items.reduce((n, i) => n + i.failed + i.timedOut + i.aborted, 0);
  const status = results.every((r) => r.status === "SUCCEEDED")
    ? "SUCCEEDED"
    : results.find((r) => r.status !== "SUCCEEDED")!.status;
  const errors = results.map((r) => r.error).filter(Boolean);
  report.data.fanOut = results.length === 1 ? results[0] : { status, parts: results };
  report.lines.push(
    `Fan-out ${status}: ${items.length ? `${count(succeeded)} of ${count(total)} rows scheduled, ${failed} failed` : "no Map Run started"}${errors.length ? ` (${errors.join("; ")})` : ""}`,
  );
  for (const r of results)
    if (r.results)
      report.lines.push(`  results (failed batches, for redrive): s3://${r.results.bucket}/${r.results.key}`);
  return status === "SUCCEEDED" && failed === 0 ? 0 : 1;
}

/** --max-schedules, else the stack output maxSchedules, else Scheduler's default quota; says which. */
function scheduleQuotaFrom(flag: string | undefined, output: number | undefined): ScheduleQuota {
  if (flag !== undefined) return { maxSchedules: intFlag("max-schedules", flag, 1, 1e12), source: "--max-schedules" };
  if (output !== undefined) {
    if (!(Number.isInteger(output) && output > 0))
      throw new UsageError(`stack output maxSchedules ${output}: must be a whole number above 0`);
    return { maxSchedules: output, source: "stack output maxSchedules" };
  }
  return {
    maxSchedules: scheduler.maxSchedules,
    source: "EventBridge Scheduler's default quota; --max-schedules if yours is raised",
  };
}

function formatSummary(s: PlanSummary): string[] {
  const reasons = Object.entries(s.rejected.byReason)
    .map(([r, c]) => `${r} ${count(c!)}`)
    .join(", ");
  const lines = [
    `Campaign ${s.campaignId}: ${count(s.rows)} rows → ${count(s.recipientsPlanned)} recipients planned, ${count(s.schedules)} schedules; ${count(s.rejected.total)} rejected${reasons ? ` (${reasons})` : ""}${s.audience?.holdout.percent ? `; ${count(s.heldOut)} held out` : ""}`,
    `  send time: ${s.sendTime}`,
    ...(s.recurring
      ? [
          `  recurring: one schedule per recipient from ${s.recurring.startDate} (now + fan-out + margin) to the end of --until (local midnight, later when the last send's window runs past it; last ${s.recurring.lastEndDate ?? "-"}); each holds one of the Region's schedules until then`,
        ]
      : []),
    `  steps: ${s.steps.map((x) => `${x.step} ${x.offset} ${x.template}: ${count(x.schedules)}`).join("; ")}`,
    `  zones: ${count(s.zones.defaulted)} without a known zone → ${s.zones.defaultTimezone}, ${count(s.zones.canonicalised)} re-cased or trimmed${s.zones.mapped ? `, ${count(s.zones.mapped)} mapped (${mappedText(s.zones.unknown)}; notes.csv)` : ""}${inferredText(s.zones.bySource)}`,
    // A recurring schedule starts at the cutoff: nothing is missed, moved or sent now.
    ...(s.recurring
      ? []
      : [
          `  missed (--missed ${s.missed.policy}, due before ${s.missed.cutoff}): ${count(s.missed.skipped)} skipped, ${count(s.missed.sentNow)} sent now, ${count(s.missed.movedToNextDay)} moved to the next day`,
        ]),
  ];
  if (s.audience) {
    const groups = s.audience.variants.map(
      (v) => `${v.name} ${v.percent}% (${v.step1Template}): ${count(v.recipients)}`,
    );
    if (s.audience.holdout.percent)
      groups.push(`holdout ${s.audience.holdout.percent}%: ${count(s.audience.holdout.recipients)}`);
    // Right after the steps line, wherever it is (a recurring campaign has a line before it).
    const afterSteps = lines.findIndex((l) => l.startsWith("  steps:")) + 1;
    lines.splice(afterSteps, 0, `  ${s.audience.variants.length ? "variants" : "audience"}: ${groups.join("; ")}`);
  }
  if (s.quiet)
    lines.push(
      `  quiet time (${s.quiet.rule}, --quiet ${s.quiet.policy}, over each send's ${s.window.quietCheckedMinutes}-minute window): ${count(s.quiet.delayed)} delayed, ${count(s.quiet.skipped)} skipped`,
    );
  if (s.collisions.length)
    lines.push(
      `  collisions: ${s.collisions
        .map(
          (c) =>
            `step ${c.step} not planned for ${counted(c.recipients, "recipient")} (${c.reason === "out-of-order" ? "before" : `within ${MIN_GAP_MINUTES} minutes of`} step ${c.with})`,
        )
        .join("; ")}`,
    );
  if (s.templatesNotChecked) lines.push(`  templates: not checked: ${s.templatesNotChecked.join("; ")}`);
  if (s.idsDifferingOnlyInCase)
    lines.push(
      `  ids: ${count(s.idsDifferingOnlyInCase)} differ from an earlier id only in case or surrounding spaces (planned separately)`,
    );
  lines.push(
    s.recurring
      ? `  sends: first ${s.firstSend ?? "-"}; the window is sized on the occurrences of the first ${s.recurring.sizedOnDays} days (last ${s.lastSend ?? "-"})`
      : `  sends: first ${s.firstSend ?? "-"}, last ${s.lastSend ?? "-"}`,
    `  window: ${s.window.minutes} ${plural(s.window.minutes, "minute")} (${s.window.source}${windowShortfall(s) ?? ""}; ${count(s.window.effectiveTps)}/s, ${s.window.effectiveTpsSource})`,
    `  fan-out: ≈ ${formatDuration(s.fanOut.etaSeconds)} at ${count(s.fanOut.createTps)} CreateSchedule/s`,
    ...bulkLines(s),
    `  files: ${[`${s.files.plan ?? "plan.jsonl not kept (--no-local-plan)"} (sha256 ${s.planSha256.slice(0, 16)}…)`, s.files.rejects, s.files.notes, s.files.holdout, s.files.summary].filter(Boolean).join(", ")}`,
  );
  return lines;
}

/** A bulk plan's lines: its schedules against its entries, each need's window, and what signed its links. */
function bulkLines(s: PlanSummary): string[] {
  const b = s.bulk;
  if (!b) return [];
  const need = (w: { minutes: number | null; tps: number; source: string }) =>
    `${w.minutes === null ? "none up to 1,440 minutes" : `${w.minutes} ${plural(w.minutes, "minute")}`} at ${count(w.tps)}/s (${w.source})`;
  return [
    `  bulk: ${count(b.schedules)} schedules for ${count(b.entries)} entries (${b.schedulesPerRecipientStep} a recipient-step; ${b.largestSchedule} entries at most, ${b.smallestSchedule} at least${b.splitEarly ? `; ${count(b.splitEarly)} written before full to bound memory` : ""})`,
    `  bulk window: emails ${need(b.window.emails)}; schedule invocations ${need(b.window.invocations)}`,
    `  unsubscribe: links to ${b.unsubscribe.baseUrl}, ${b.unsubscribe.source}`,
    b.contactList.checked
      ? `  contact list ${b.contactList.contactListName}: ${count(b.contactList.optedOut)} ${plural(b.contactList.optedOut, "address", "addresses")} opted out of topic ${b.contactList.topicName} or of every topic; ${count(b.contactList.rejected)} ${plural(b.contactList.rejected, "row")} rejected (opted-out)`
      : `  contact list: not checked (dry run: no AWS call); a launch reads it and rejects the addresses opted out in SES (opted-out)`,
  ];
}

/** When a given window is smaller than the sends need: by how much, and the peak rate it gives. */
function windowShortfall(s: PlanSummary): string | undefined {
  const w = s.window;
  if (w.peakTps === undefined || w.peakTps <= w.effectiveTps) return undefined;
  const need =
    w.minimumMinutes === undefined
      ? "no window up to 1,440 minutes holds the sends"
      : `below the ${w.minimumMinutes} minutes the sends need`;
  return `; ${need}: peak ${count(w.peakTps)}/s against ${count(w.effectiveTps)}/s, so sends will be throttled and arrive late`;
}
