/**
 * Plans a campaign from a recipient CSV and launches it on a deployed stack. See USAGE.
 */
import * as path from "path";
import { cleanupAt } from "../infra/fanout-definition";
import { scheduler } from "../infra/quotas";
import { deadlineFromFlag, TIMEOUT_FLAG } from "./lib/aws/call";
import { s3Client, sfnClient } from "./lib/aws/clients";
import {
  campaignFlag,
  nowFromFlag,
  RATE_FLAGS,
  rateFromFlags,
  PACE_FLAGS,
  PACE_FLAGS_HELP,
  paceFromFlags,
  RECIPIENT_FLAGS,
  RECIPIENT_FLAGS_HELP,
  recipientOptionsFromFlags,
  SEND_TIME_FLAGS,
  templateFlag,
  timingFromFlags,
} from "./lib/cli/campaign-flags";
import { count, counted, formatDuration, plural } from "./lib/cli/format";
import { TIMING_FLAGS_HELP } from "./lib/cli/timing-flags";
import { intFlag, Io, parseFlags, processIo, runMain, UsageError } from "./lib/cli/run";
import {
  checkLaunchId,
  executionName,
  followFanOut,
  MIN_POLL_SECONDS,
  startFanOut,
  uploadLaunchRecord,
  uploadPlan,
} from "./lib/aws/launch";
import { openS3Object, parseS3Url } from "./lib/aws/s3-objects";
import { MIN_STEP_GAP_MINUTES, MISSED_POLICIES, MissedPolicy } from "./lib/core/decisions";
import { planCampaign, PlanSummary } from "./lib/core/plan";
import { OutputLock } from "./lib/core/plan-files";
import { ScheduleQuota, scheduleQuotaFinding } from "./lib/core/schedule-quota";
import { buildLaunchRecord } from "./lib/core/launch-record";
import { journeyNamed, outputsFromFlags, requireOutputs, STACK_FLAGS, STACK_FLAGS_HELP } from "./lib/aws/stack-outputs";

const USAGE = `
Usage: launch-campaign --campaign ID --recipients FILE|s3://BUCKET/KEY --template NAME
         (--date YYYY-MM-DD --hour H [--minute M] | --after COLUMN:+Nd|+Nh [--hour H] | --at INSTANT)
         [--step +3d:TEMPLATE ...] [--quiet-hours HH:MM-HH:MM] [--quiet-days DAYS] [--quiet delay|skip]
         [--variant NAME:PERCENT[:TEMPLATE] ...] [--holdout PERCENT] [--default-timezone ZONE]
         [--missed skip|send-now|next-day] [--grace-minutes G] [--now ISO] [--out DIR]
         [--dry-run | (--stack NAME | --outputs FILE | --bucket B --state-machine-arn ARN)]
         [--wait [--poll-seconds P]] [--timeout-seconds S] [--json]

Validates the recipients (columns id and email required; timezone, send_at, send_hour and send_minute optional;
every other column is personalization), plans one schedule per recipient per step into DIR/plan.jsonl, writes every
other row to DIR/rejects.csv with its line and reason and the holdout to DIR/holdout.csv, sizes the flexible
window, then (without --dry-run) uploads the plan and starts the fan-out. Per step: the send-time rule, then the
missed-time policy, then quiet time. rows = planned + rejected + held out.

${TIMING_FLAGS_HELP}

Other flags:
  --recipients s3://B/K   stream the list from S3 (one GetObject, no local copy; the fan-out ETA for the missed-time
                          cutoff is then bounded by the object's size instead of its line count)
  --step +Nd:TEMPLATE     a later step: N days (same local time) or +Nh hours after the first send; repeatable
  --default-timezone Z    zone for rows with a missing or unknown zone (default UTC); each such row is in notes.csv
  --missed POLICY         sends due before now + fan-out + margin: skip (default), send-now (within the grace),
                          next-day (same local time tomorrow)
  --grace-minutes G       how late send-now may still send (default 60)
  --now INSTANT           the time to plan against (default: now), for reproducible runs: ISO 8601 with Z or an
                          offset (2026-12-01T08:00:00Z)
${RECIPIENT_FLAGS_HELP}
  --window-minutes W      use this flexible window instead of sizing one (1-1440)
  --tps T | --invocation-tps T --ses-rate R   the send rate the window must hold (as in size-window)
${PACE_FLAGS_HELP}
  --out DIR               where plan.jsonl, rejects.csv, notes.csv and summary.json go (default out/<campaign>)
  --launch-id ID          names the upload and the execution (default: the plan's hash, so a double submit is refused)
  --max-schedules N       the Region's EventBridge Scheduler schedule quota: a plan with more schedules is not
                          launched (default: the stack output maxSchedules, else Scheduler's default, 10,000,000)
${STACK_FLAGS_HELP}
  --wait                  follow the fan-out to its end (progress on stderr)
  --poll-seconds P        how often --wait polls (default 5, at least ${MIN_POLL_SECONDS}: each poll is one DescribeExecution
                          and one DescribeMapRun, and the account's DescribeExecution budget is 10-15 a second)
  --timeout-seconds S     the whole command's time limit, every AWS call included (default 3600); when it runs out
                          during --wait, the fan-out goes on and only the following stops
  --json                  print the summary as JSON

AWS access uses the standard SDK configuration: region, credential chain, AWS_ENDPOINT_URL_S3 / _SFN.
Before StartExecution the uploaded object's SHA-256 checksum (S3's) must match the plan's; otherwise nothing starts.
Exit codes: 0 ok, 1 not launched or fan-out failures (nothing would be sent, window does not fit, AWS error, upload
not matching the plan, failed rows, the time limit), 2 bad flags or file.
`;

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

/** main's work; the output folder's lock goes into `locks`, held until the plan is uploaded and started. */
async function planAndLaunch(argv: string[], io: Io, locks: OutputLock[]): Promise<number> {
  const f = parseFlags(
    argv,
    {
      campaign: { type: "string" },
      recipients: { type: "string" },
      template: { type: "string" },
      ...SEND_TIME_FLAGS,
      missed: { type: "string" },
      "grace-minutes": { type: "string" },
      "window-minutes": { type: "string" },
      ...RATE_FLAGS,
      ...RECIPIENT_FLAGS,
      ...PACE_FLAGS,
      out: { type: "string" },
      "dry-run": { type: "boolean", default: false },
      "launch-id": { type: "string" },
      "max-schedules": { type: "string" },
      ...STACK_FLAGS,
      wait: { type: "boolean", default: false },
      "poll-seconds": { type: "string" },
      ...TIMEOUT_FLAG,
      json: { type: "boolean", default: false },
    },
    USAGE,
  );
  const need = (name: "campaign" | "recipients" | "template") => {
    const v = f[name];
    if (v === undefined) throw new UsageError(`--${name} is required (see --help)`);
    return v;
  };
  const campaignId = campaignFlag(need("campaign"));
  const template = templateFlag(need("template"));
  const timing = timingFromFlags(f, template);
  const missed = (f.missed ?? "skip") as MissedPolicy;
  if (!MISSED_POLICIES.includes(missed)) throw new UsageError(`--missed ${f.missed}: one of ${MISSED_POLICIES.join(", ")}`);
  const now = nowFromFlag(f.now);
  const rate = rateFromFlags(f);

  // Stack outputs are needed to launch; a dry run uses them when given (quota, region) but does not require them.
  const launching = !f["dry-run"];
  const outputs = launching || f.stack !== undefined || f.outputs !== undefined ? outputsFromFlags(f) : {};
  const target = launching
    ? requireOutputs(outputs, ["bucketName", "stateMachineArn"], { bucketName: "bucket", stateMachineArn: "state-machine-arn" })
    : undefined;
  if (journeyNamed(outputs, campaignId))
    throw new UsageError(
      `--campaign ${campaignId}: this stack has a journey of that name, whose subscribers' schedules are in group campaign-${campaignId}; a campaign would share it (and its housekeeping would delete them): choose another id`,
    );
  const launchIdFlag = f["launch-id"] === undefined ? undefined : checkLaunchId(f["launch-id"]);
  const quota = scheduleQuotaFrom(f["max-schedules"], outputs.maxSchedules);
  const progress = (text: string) => io.err(`${text}\n`);
  // s3://bucket/key.csv is streamed from S3 once, never copied to local disk.
  const recipients = need("recipients");
  const listInS3 = parseS3Url(recipients, "--recipients");
  const input = listInS3 ? await openS3Object(s3Client(outputs.region), listInS3) : undefined;
  const pollSeconds = intFlag("poll-seconds", f["poll-seconds"], MIN_POLL_SECONDS, 3_600, 5);
  const deadline = deadlineFromFlag(f["timeout-seconds"], 3_600, progress);

  // No other run may write or replace this folder's plan until it is uploaded.
  const lock = OutputLock.acquire(f.out ?? path.join("out", campaignId));
  locks.push(lock);
  const summary = await planCampaign({
    campaignId,
    file: recipients,
    input: input && { stream: input.body, bytes: input.bytes },
    out: lock,
    rule: timing.rule,
    steps: timing.steps.map((s) => ({ ...s, template: s.template ?? template })),
    defaultZone: timing.defaultZone,
    recipients: recipientOptionsFromFlags(f),
    quiet: timing.quiet,
    audience: timing.audience,
    missed: { policy: missed, graceMinutes: intFlag("grace-minutes", f["grace-minutes"], 0, 10_080, 60) },
    now,
    ...paceFromFlags(f, outputs.createScheduleTps),
    rate,
    window:
      f["window-minutes"] === undefined
        ? undefined
        : {
            minutes: intFlag(
              "window-minutes",
              f["window-minutes"],
              scheduler.flexibleWindowMinutes.min,
              scheduler.flexibleWindowMinutes.max,
            ),
            source: "--window-minutes",
          },
  });
  const launchId = launchIdFlag ?? summary.planSha256.slice(0, 16);
  const quotaFinding = scheduleQuotaFinding(
    { schedules: summary.schedules, recipients: summary.recipientsPlanned, steps: summary.steps.length },
    quota,
  );
  const report: Record<string, unknown> = { ...summary, launchId, dryRun: !launching, scheduleQuota: { ...quota, fits: !quotaFinding } };

  const shortfall = windowShortfall(summary);
  if (shortfall) io.err(`warning: --window-minutes ${summary.window.minutes} is${shortfall.slice(1)}\n`);
  const finish = (code: number, lines: string[]) => {
    deadline.dispose();
    io.out(f.json ? JSON.stringify(report, null, 2) + "\n" : [...formatSummary(summary), ...lines].join("\n") + "\n");
    return code;
  };
  if (quotaFinding) return finish(1, [`${quotaFinding} The plan is kept for review; nothing was uploaded or started.`]);
  if (!summary.window.fits) {
    return finish(1, [
      `Not launched: no flexible window up to ${scheduler.flexibleWindowMinutes.max} minutes keeps the peak within ${summary.window.effectiveTps}/s; it needs ${summary.window.requiredTps}/s (raise the quotas, or split the campaign). The plan is kept for review.`,
    ]);
  }
  if (summary.schedules === 0)
    return finish(1, [`Nothing would be sent: no schedule in the plan${launching ? "; nothing launched" : ""}.`]);
  if (!launching || !target) return finish(0, ["Dry run: nothing uploaded or started."]);

  const s3 = s3Client(outputs.region);
  const sfn = sfnClient(outputs.region);
  const key = await uploadPlan(
    deadline,
    s3,
    { bucket: target.bucketName, campaignId, launchId, file: summary.files.plan, planSha256: summary.planSha256 },
    progress,
  );
  const files = { plan: summary.files.plan, holdout: path.join(path.dirname(summary.files.plan), "holdout.csv") };
  const record = await buildLaunchRecord(summary, files, { id: launchId, planKey: key, at: new Date(now) });
  const recordKey = await uploadLaunchRecord(deadline, s3, target.bucketName, record);
  const name = executionName(campaignId, launchId);
  const executionArn = await startFanOut(deadline, sfn, target.stateMachineArn, name, {
    campaign_id: campaignId,
    plan_bucket: target.bucketName,
    plan_key: key,
    window_minutes: summary.window.minutes,
    cleanup_at: cleanupAt(new Date(summary.lastSend!), summary.window.minutes),
  });
  Object.assign(report, { plan: { bucket: target.bucketName, key }, launchRecord: recordKey, execution: { name, arn: executionArn } });
  const lines = [`Launched: s3://${target.bucketName}/${key} → execution ${name}`, `  ${executionArn}`];
  if (!f.wait) return finish(0, lines);

  const result = await followFanOut(deadline, sfn, { executionArn, resultsBucket: target.bucketName, pollSeconds }, progress);
  report.fanOut = result;
  const failed = result.items ? result.items.failed + result.items.timedOut + result.items.aborted : 0;
  lines.push(
    `Fan-out ${result.status}: ${result.items ? `${count(result.items.succeeded)} of ${count(result.items.total)} rows scheduled, ${failed} failed` : "no Map Run started"}${result.error ? ` (${result.error})` : ""}`,
  );
  if (result.results) lines.push(`  results (failed batches, for redrive): s3://${result.results.bucket}/${result.results.key}`);
  return finish(result.status === "SUCCEEDED" && failed === 0 ? 0 : 1, lines);
}

/** --max-schedules, else the stack output maxSchedules, else Scheduler's default quota; says which. */
function scheduleQuotaFrom(flag: string | undefined, output: number | undefined): ScheduleQuota {
  if (flag !== undefined) return { maxSchedules: intFlag("max-schedules", flag, 1, 1e12), source: "--max-schedules" };
  if (output !== undefined) {
    if (!(Number.isInteger(output) && output > 0))
      throw new UsageError(`stack output maxSchedules ${output}: must be a whole number above 0`);
    return { maxSchedules: output, source: "stack output maxSchedules" };
  }
  return { maxSchedules: scheduler.maxSchedules, source: "EventBridge Scheduler's default quota; --max-schedules if yours is raised" };
}

function formatSummary(s: PlanSummary): string[] {
  const reasons = Object.entries(s.rejected.byReason)
    .map(([r, c]) => `${r} ${count(c!)}`)
    .join(", ");
  const lines = [
    `Campaign ${s.campaignId}: ${count(s.rows)} rows → ${count(s.recipientsPlanned)} recipients planned, ${count(s.schedules)} schedules; ${count(s.rejected.total)} rejected${reasons ? ` (${reasons})` : ""}${s.audience?.holdout.percent ? `; ${count(s.heldOut)} held out` : ""}`,
    `  send time: ${s.sendTime}`,
    `  steps: ${s.steps.map((x) => `${x.step} ${x.offset} ${x.template}: ${count(x.schedules)}`).join("; ")}`,
    `  zones: ${count(s.zones.defaulted)} without a known zone → ${s.zones.defaultTimezone}, ${count(s.zones.canonicalised)} re-cased or trimmed`,
    `  missed (--missed ${s.missed.policy}, due before ${s.missed.cutoff}): ${count(s.missed.skipped)} skipped, ${count(s.missed.sentNow)} sent now, ${count(s.missed.movedToNextDay)} moved to the next day`,
  ];
  if (s.audience) {
    const groups = s.audience.variants.map((v) => `${v.name} ${v.percent}% (${v.step1Template}): ${count(v.recipients)}`);
    if (s.audience.holdout.percent) groups.push(`holdout ${s.audience.holdout.percent}%: ${count(s.audience.holdout.recipients)}`);
    lines.splice(3, 0, `  ${s.audience.variants.length ? "variants" : "audience"}: ${groups.join("; ")}`);
  }
  if (s.quiet)
    lines.push(
      `  quiet time (${s.quiet.rule}, --quiet ${s.quiet.policy}): ${count(s.quiet.delayed)} delayed, ${count(s.quiet.skipped)} skipped`,
    );
  if (s.collisions.length)
    lines.push(
      `  collisions: ${s.collisions
        .map(
          (c) =>
            `step ${c.step} not planned for ${counted(c.recipients, "recipient")} (within ${MIN_STEP_GAP_MINUTES} minutes of step ${c.with})`,
        )
        .join("; ")}`,
    );
  if (s.idsDifferingOnlyInCase)
    lines.push(
      `  ids: ${count(s.idsDifferingOnlyInCase)} differ from an earlier id only in case or surrounding spaces (planned separately)`,
    );
  lines.push(
    `  sends: first ${s.firstSend ?? "-"}, last ${s.lastSend ?? "-"}`,
    `  window: ${s.window.minutes} ${plural(s.window.minutes, "minute")} (${s.window.source}${windowShortfall(s) ?? ""}; ${count(s.window.effectiveTps)}/s, ${s.window.effectiveTpsSource})`,
    `  fan-out: ≈ ${formatDuration(s.fanOut.etaSeconds)} at ${count(s.fanOut.createTps)} CreateSchedule/s`,
    `  files: ${[`${s.files.plan} (sha256 ${s.planSha256.slice(0, 16)}…)`, s.files.rejects, s.files.notes, s.files.holdout, s.files.summary].filter(Boolean).join(", ")}`,
  );
  return lines;
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
