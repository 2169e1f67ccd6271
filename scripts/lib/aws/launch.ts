/**
 * Launching a planned campaign on a deployed stack: upload the plan (multipart, with progress), start the fan-out
 * with a deterministic execution name (a double submit is refused by Step Functions, not run twice), and follow it.
 */
import * as fs from "fs";
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { DescribeExecutionCommand, DescribeMapRunCommand, ListMapRunsCommand, SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { Upload } from "@aws-sdk/lib-storage";
import { FanOutInput } from "../../../infra/fanout-definition";
import { campaignTag } from "../../../infra/email-events";
import { planKey } from "../../../infra/plan-row";
import { launchRecordKey } from "../../../infra/naming";
import { LaunchRecord } from "../core/launch-record";
import { awsErrorLine, isAwsError } from "./clients";
import { count } from "../cli/format";
import { FindingsError, UsageError } from "../cli/run";

/** Step Functions execution names: 1–80 characters. */
const EXECUTION_NAME_MAX = 80;

/** `<campaign>-<launch id>`; the launch id defaults to the plan's hash, so the same plan always gets the same name. */
export function executionName(campaignId: string, launchId: string): string {
  return `${campaignId}-${launchId}`.slice(0, EXECUTION_NAME_MAX);
}

export function checkLaunchId(launchId: string): string {
  if (!/^[A-Za-z0-9_-]{1,24}$/.test(launchId)) throw new UsageError(`--launch-id ${launchId}: 1–24 of A-Z a-z 0-9 _ -`);
  return launchId;
}

export async function uploadPlan(
  s3: S3Client,
  bucket: string,
  campaignId: string,
  launchId: string,
  file: string,
  progress: (text: string) => void,
): Promise<string> {
  const key = planKey(campaignId, launchId);
  const total = fs.statSync(file).size;
  const upload = new Upload({
    client: s3,
    params: { Bucket: bucket, Key: key, Body: fs.createReadStream(file), ContentType: "application/x-ndjson" },
    partSize: 8 * 1024 * 1024,
    queueSize: 4,
  });
  upload.on("httpUploadProgress", (p) =>
    progress(`uploading s3://${bucket}/${key}: ${Math.round(((p.loaded ?? 0) / Math.max(total, 1)) * 100)}%`),
  );
  try {
    await upload.done();
  } catch (e) {
    throw new FindingsError(awsErrorLine(`upload of the plan to s3://${bucket}/${key} failed`, e));
  }
  return key;
}

/** Starts the fan-out; the input's campaign_tag (the sends' `campaign` EmailTag) is derived here from campaign_id. */
/** Stores the launch's record next to the plans (`launches/<campaign>/<launch id>.json`) for campaign-report. */
export async function uploadLaunchRecord(s3: S3Client, bucket: string, record: LaunchRecord): Promise<string> {
  const key = launchRecordKey(record.campaignId, record.launch.id);
  try {
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: JSON.stringify(record, null, 2) + "\n", ContentType: "application/json" }),
      { abortSignal: AbortSignal.timeout(60_000) },
    );
  } catch (e) {
    throw new FindingsError(awsErrorLine(`upload of the launch record to s3://${bucket}/${key} failed (nothing started)`, e));
  }
  return key;
}

export async function startFanOut(
  sfn: SFNClient,
  stateMachineArn: string,
  name: string,
  fields: Omit<FanOutInput, "campaign_tag">,
): Promise<string> {
  const input: FanOutInput = { ...fields, campaign_tag: campaignTag(fields.campaign_id) };
  try {
    const r = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
    return r.executionArn!;
  } catch (e) {
    if (isAwsError(e, "ExecutionAlreadyExists")) {
      throw new FindingsError(
        `campaign ${input.campaign_id}: this plan was already launched as execution "${name}"; Step Functions refuses to run it twice. ` +
          `To run it again on purpose (existing schedules are kept, missing ones created), pass --launch-id with a new id`,
      );
    }
    throw new FindingsError(awsErrorLine(`campaign ${input.campaign_id}: StartExecution on ${stateMachineArn} failed`, e));
  }
}

export interface FanOutResult {
  status: string;
  items: { total: number; succeeded: number; failed: number; pending: number; running: number; timedOut: number; aborted: number } | null;
  /** Where the Map Run wrote its results (failed batches included). */
  results: { bucket: string; key: string } | null;
  error?: string;
}

/** Polls DescribeExecution, ListMapRuns and DescribeMapRun until the execution ends, reporting progress. */
export async function followFanOut(
  sfn: SFNClient,
  executionArn: string,
  pollSeconds: number,
  progress: (text: string) => void,
): Promise<FanOutResult> {
  let mapRunArn: string | undefined;
  for (;;) {
    const ex = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (!mapRunArn) mapRunArn = (await sfn.send(new ListMapRunsCommand({ executionArn }))).mapRuns?.[0]?.mapRunArn;
    const counts = mapRunArn ? (await sfn.send(new DescribeMapRunCommand({ mapRunArn }))).itemCounts : undefined;
    const items = counts
      ? {
          total: counts.total ?? 0,
          succeeded: counts.succeeded ?? 0,
          failed: counts.failed ?? 0,
          pending: counts.pending ?? 0,
          running: counts.running ?? 0,
          timedOut: counts.timedOut ?? 0,
          aborted: counts.aborted ?? 0,
        }
      : null;
    if (items) progress(progressBar(items));
    if (ex.status !== "RUNNING") {
      let results: FanOutResult["results"] = null;
      try {
        const details = JSON.parse(ex.output ?? "{}")?.fan_out?.ResultWriterDetails;
        if (details?.Bucket) results = { bucket: details.Bucket, key: details.Key };
      } catch {
        // no output (failed execution): the results location is unknown
      }
      return { status: ex.status ?? "UNKNOWN", items, results, error: ex.error ? `${ex.error}: ${ex.cause ?? ""}`.trim() : undefined };
    }
    await new Promise((r) => setTimeout(r, pollSeconds * 1000));
  }
}

function progressBar(i: NonNullable<FanOutResult["items"]>): string {
  const done = i.succeeded + i.failed + i.timedOut + i.aborted;
  const width = 30;
  const filled = i.total ? Math.round((done / i.total) * width) : 0;
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${count(done)}/${count(i.total)} rows, ${i.failed + i.timedOut + i.aborted} failed`;
}
