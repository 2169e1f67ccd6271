/**
 * Launching a planned campaign on a deployed stack (the plan's upload is in plan-upload.ts): store the launch record,
 * start the fan-out with a deterministic execution name (a double submit is refused by Step Functions, not run
 * twice), and follow it.
 */
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import {
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  ListMapRunsCommand,
  SFNClient,
  StartExecutionCommand,
} from "@aws-sdk/client-sfn";
import { FanOutInput } from "../../../infra/state-machines/fanout-definition";
import { campaignTag } from "../../../infra/core/send/email-events";
import { RESULTS_PREFIX } from "../../../infra/core/plan/naming";
import { planKey } from "../../../infra/core/plan/plan-row";
import { launchRecordKey } from "../../../infra/core/plan/naming";
import { stepFunctions } from "../../../infra/core/plan/quotas";
import { LaunchRecord } from "../planning/launch-record";
import { awsCall, Deadline } from "./call";
import { isAwsError } from "./clients";
import { count } from "../text/format";
import { DeadlineExceeded, FindingsError, UsageError } from "../../../infra/core/errors";

/**
 * Step Functions refused the start: an execution of that name exists (this plan was launched before). `afterRetry`:
 * the SDK had retried the request, so the execution may be this run's own first attempt (it reached Step Functions,
 * its answer was lost, and the execution ended before the retry): its plan must be kept.
 */
export class AlreadyLaunched extends FindingsError {
  constructor(
    message: string,
    readonly afterRetry: boolean,
  ) {
    super(message);
  }
}

/**
 * `<campaign>-<launch id>`, and for the second and later objects of a plan split for the ItemReader
 * `<campaign>-<launch id>-p<n>` (the suffix always kept whole); the launch id defaults to the plan's hash, so the
 * same plan always gets the same names.
 */
export function executionName(campaignId: string, launchId: string, part = 1): string {
  const suffix = part > 1 ? `-p${part}` : "";
  return `${campaignId}-${launchId}`.slice(0, stepFunctions.executionNameMaxLength - suffix.length) + suffix;
}

/** The S3 key of a plan's n-th object: the plan key, then `<launch id>.part<n>.jsonl` (see plan-upload.ts). */
export function planObjectKey(campaignId: string, uploadId: string, part: number): string {
  const key = planKey(campaignId, uploadId);
  return part > 1 ? key.replace(/\.jsonl$/, `.part${part}.jsonl`) : key;
}

export function checkLaunchId(launchId: string): string {
  if (!/^[A-Za-z0-9_-]{1,24}$/.test(launchId)) throw new UsageError(`--launch-id ${launchId}: 1–24 of A-Z a-z 0-9 _ -`);
  return launchId;
}

/**
 * Stores the launch's record next to the plans (`launches/<campaign>/<launch id>.json`) for campaign-report, never
 * over another (`If-None-Match: *`). A record already there for the same plan (a re-submit) is kept as it is — it
 * describes the launch that ran — and `kept` says so; one for another plan stops the launch.
 */
export async function uploadLaunchRecord(
  d: Deadline,
  s3: S3Client,
  bucket: string,
  record: LaunchRecord,
): Promise<{ key: string; kept: boolean }> {
  const key = launchRecordKey(record.campaignId, record.launch.id);
  const where = `s3://${bucket}/${key}`;
  const Body = JSON.stringify(record, null, 2) + "\n";
  const written = await awsCall(d, `upload of the launch record to ${where} failed (nothing started)`, async (opts) => {
    try {
      await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body, ContentType: "application/json", IfNoneMatch: "*" }),
        opts,
      );
      return true;
    } catch (e) {
      if (
        isAwsError(e, "PreconditionFailed") ||
        (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 412
      )
        return false;
      throw e;
    }
  });
  if (written) return { key, kept: false };
  const existing = await awsCall(
    d,
    `reading the launch record ${where} already there (nothing started)`,
    async (opts) => {
      const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), opts);
      return (await r.Body!.transformToString()) ?? "";
    },
  );
  let planSha256: unknown;
  try {
    planSha256 = JSON.parse(existing)?.planSha256;
  } catch {
    // not a record: another plan's as far as this launch can tell
  }
  if (planSha256 !== record.planSha256)
    throw new FindingsError(
      `launch id ${record.launch.id} already holds another plan (${where}); use another --launch-id`,
    );
  return { key, kept: true };
}

/** Starts the fan-out; the input's campaign_tag (the sends' `campaign` EmailTag) is derived here from campaign_id. */

export async function startFanOut(
  d: Deadline,
  sfn: SFNClient,
  stateMachineArn: string,
  name: string,
  fields: Omit<FanOutInput, "campaign_tag">,
): Promise<string> {
  const input: FanOutInput = { ...fields, campaign_tag: campaignTag(fields.campaign_id) };
  const start = () =>
    awsCall(d, `campaign ${input.campaign_id}: StartExecution on ${stateMachineArn} failed`, async (opts) => {
      try {
        return await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }), opts);
      } catch (e) {
        if (!isAwsError(e, "ExecutionAlreadyExists")) throw e;
        const afterRetry = ((e as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1) > 1;
        throw new AlreadyLaunched(
          afterRetry
            ? `campaign ${input.campaign_id}: execution "${name}" exists, found by a retried StartExecution: this run's own first attempt may have started it. ` +
                `See campaign-status --campaign ${input.campaign_id} before launching again; its plan is kept`
            : `campaign ${input.campaign_id}: this plan was already launched as execution "${name}"; Step Functions refuses to run it twice. ` +
                `To run it again on purpose (existing schedules are kept, missing ones created), pass --launch-id with a new id`,
          afterRetry,
        );
      }
    });
  try {
    return (await start()).executionArn!;
  } catch (e) {
    // The request may have reached Step Functions before the limit: not knowing is not "not started".
    if (!(e instanceof DeadlineExceeded)) throw e;
    throw new DeadlineExceeded(
      `${e.message}; the execution ${name} may have started anyway: see campaign-status --campaign ${input.campaign_id}, and do not delete its plan`,
    );
  }
}

/** A Map Run's rows by state (DescribeMapRun itemCounts). */
export interface MapRunItems {
  total: number;
  succeeded: number;
  failed: number;
  pending: number;
  running: number;
  timedOut: number;
  aborted: number;
}

/** The item counts of a Map Run, or null when there is none yet; `what` names the campaign or execution in errors. */
export async function mapRunItems(
  d: Deadline,
  sfn: SFNClient,
  mapRunArn: string | undefined,
  what: string,
): Promise<MapRunItems | null> {
  if (!mapRunArn) return null;
  const c = (
    await awsCall(d, `${what}DescribeMapRun ${mapRunArn}`, (opts) =>
      sfn.send(new DescribeMapRunCommand({ mapRunArn }), opts),
    )
  ).itemCounts;
  if (!c) return null;
  return {
    total: c.total ?? 0,
    succeeded: c.succeeded ?? 0,
    failed: c.failed ?? 0,
    pending: c.pending ?? 0,
    running: c.running ?? 0,
    timedOut: c.timedOut ?? 0,
    aborted: c.aborted ?? 0,
  };
}

export interface FanOutResult {
  status: string;
  items: MapRunItems | null;
  /** Where the Map Run wrote its results (failed batches included), also when the execution FAILED. */
  results: { bucket: string; key: string } | null;
  error?: string;
}

/** The least --poll-seconds: each poll is one DescribeExecution and one DescribeMapRun. */
export const MIN_POLL_SECONDS = 2;

/**
 * Polls DescribeExecution, ListMapRuns and DescribeMapRun until the execution ends, reporting progress. Running out
 * of time stops the following, not the fan-out: the error says so.
 */
export async function followFanOut(
  d: Deadline,
  sfn: SFNClient,
  o: { executionArn: string; resultsBucket: string; pollSeconds: number },
  progress: (text: string) => void,
): Promise<FanOutResult> {
  let mapRunArn: string | undefined;
  try {
    for (;;) {
      const ex = await awsCall(d, `DescribeExecution ${o.executionArn}`, (opts) =>
        sfn.send(new DescribeExecutionCommand({ executionArn: o.executionArn }), opts),
      );
      mapRunArn ??= (
        await awsCall(d, `ListMapRuns ${o.executionArn}`, (opts) =>
          sfn.send(new ListMapRunsCommand({ executionArn: o.executionArn }), opts),
        )
      ).mapRuns?.[0]?.mapRunArn;
      const items = await mapRunItems(d, sfn, mapRunArn, "");
      if (items) progress(progressBar(items));
      if (ex.status !== "RUNNING") {
        return {
          status: ex.status ?? "UNKNOWN",
          items,
          results: resultsLocation(ex.output, mapRunArn, o.resultsBucket),
          error: ex.error ? `${ex.error}: ${ex.cause ?? ""}`.trim() : undefined,
        };
      }
      await d.sleep(o.pollSeconds * 1000);
    }
  } catch (e) {
    if (!(e instanceof DeadlineExceeded)) throw e;
    throw new DeadlineExceeded(
      `${e.message}; stopped following, the fan-out goes on (execution ${o.executionArn}): see it with campaign-status`,
    );
  }
}

/**
 * The Map Run's results manifest: from the execution output when it succeeded, otherwise where the ResultWriter puts
 * it, `<results prefix><map run id>/manifest.json` (the Map Run writes its results also when it fails, e.g. when
 * failures exceed the tolerance: the case that needs a redrive).
 */
function resultsLocation(
  output: string | undefined,
  mapRunArn: string | undefined,
  bucket: string,
): FanOutResult["results"] {
  try {
    const details = JSON.parse(output ?? "{}")?.fan_out?.ResultWriterDetails;
    if (details?.Bucket) return { bucket: details.Bucket, key: details.Key };
  } catch {
    // no usable output: fall through to the Map Run's own location
  }
  const mapRunId = mapRunArn?.split(":").pop();
  return mapRunId ? { bucket, key: `${RESULTS_PREFIX}${mapRunId}/manifest.json` } : null;
}

function progressBar(i: NonNullable<FanOutResult["items"]>): string {
  const done = i.succeeded + i.failed + i.timedOut + i.aborted;
  const width = 30;
  const filled = i.total ? Math.round((done / i.total) * width) : 0;
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${count(done)}/${count(i.total)} rows, ${i.failed + i.timedOut + i.aborted} failed`;
}
