/**
 * A checked launch-campaign run, and its launch: the launch record stored, one fan-out started per plan object and
 * followed, and the report (the summary, text or --json, and what happened) printed once at the end.
 */
import * as path from "path";
import { SFNClient } from "@aws-sdk/client-sfn";
import { cleanupAt } from "../../../infra/state-machines/fanout-definition";
import { DeadlineExceeded } from "../../../infra/core/errors";
import { AlreadyLaunched } from "../aws/launch";
import { Deadline } from "../aws/call";
import { s3Client, sfnClient } from "../aws/clients";
import { executionName, FanOutResult, followFanOut, MapRunItems, startFanOut, uploadLaunchRecord } from "../aws/launch";
import { PlanObject, StreamingPlanUpload } from "../aws/plan-upload";
import { buildLaunchRecord } from "../planning/launch-record";
import { PlanRequest } from "../planning/plan-request";
import { PlanSummary } from "../planning/plan-summary";
import { ScheduleQuota } from "../planning/schedule-quota";
import { formatSummary, windowShortfall } from "../planning/summary-text";
import { count, counted } from "../text/format";
import { FlagValues } from "./flags";
import { LAUNCH_FLAGS } from "./launch-flags";
import { RunPreflight } from "./preflight";
import { ProgressReporter } from "./progress";
import { Io } from "./run";

/** launch-campaign's flag values, as parsed. */
export type LaunchFlags = FlagValues<typeof LAUNCH_FLAGS>;

/** Where and what to launch. */
export interface LaunchTarget {
  bucketName: string;
  stateMachineArn: string;
  region?: string;
}

/** Everything a run needs, checked before any file is written or any AWS call made (but the list's GetObject). */
export interface Run {
  f: LaunchFlags;
  campaignId: string;
  /** Where and what to launch; undefined in a dry run. */
  target?: LaunchTarget;
  quota: ScheduleQuota;
  /** --launch-id, or undefined: the plan's hash, known once it is written. */
  launchIdFlag?: string;
  request: Omit<PlanRequest, "out" | "planSink" | "localPlan">;
  pollSeconds: number;
  deadline: Deadline;
  /** stderr lines; they clear the planning progress line first (rows). */
  progress: (text: string) => void;
  rows: ProgressReporter;
  /** A real launch's checks before planning (the SES account read), for the plan's checks; undefined in a dry run. */
  preflight?: RunPreflight;
}

/** The summary (text or --json) and what happened, printed once at the end. */
export class LaunchReport {
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
export async function launchPlan(
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
export async function discardUnread(
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
