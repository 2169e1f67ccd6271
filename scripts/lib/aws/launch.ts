/**
 * Launching a planned campaign on a deployed stack: upload the plan and check that S3 holds exactly the planned bytes,
 * start the fan-out with a deterministic execution name (a double submit is refused by Step Functions, not run
 * twice), and follow it.
 */
import { createHash } from "crypto";
import * as fs from "fs";
import { HeadObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { DescribeExecutionCommand, DescribeMapRunCommand, ListMapRunsCommand, SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { Upload } from "@aws-sdk/lib-storage";
import { FanOutInput } from "../../../infra/fanout-definition";
import { campaignTag } from "../../../infra/email-events";
import { RESULTS_PREFIX } from "../../../infra/naming";
import { planKey } from "../../../infra/plan-row";
import { launchRecordKey } from "../../../infra/naming";
import { stepFunctions } from "../../../infra/quotas";
import { LaunchRecord } from "../core/launch-record";
import { awsCall, Deadline, DeadlineExceeded } from "./call";
import { isAwsError } from "./clients";
import { count } from "../cli/format";
import { FindingsError, UsageError } from "../cli/run";

/** `<campaign>-<launch id>`; the launch id defaults to the plan's hash, so the same plan always gets the same name. */
export function executionName(campaignId: string, launchId: string): string {
  return `${campaignId}-${launchId}`.slice(0, stepFunctions.executionNameMaxLength);
}

export function checkLaunchId(launchId: string): string {
  if (!/^[A-Za-z0-9_-]{1,24}$/.test(launchId)) throw new UsageError(`--launch-id ${launchId}: 1–24 of A-Z a-z 0-9 _ -`);
  return launchId;
}

/** Multipart part size of the plan upload; part boundaries decide the object's composite checksum. */
export const UPLOAD_PART_BYTES = 8 * 1024 * 1024;

export interface PlanChecksums {
  size: number;
  sha256Hex: string;
  /** What S3 reports as ChecksumSHA256 for the object: the plain digest (one PUT), or for a multipart upload the
   * digest of the parts' digests with `-<parts>` (S3 keeps no whole-object SHA-256 for multipart uploads). */
  s3ChecksumSha256: string;
  parts: number;
}

/** The plan file's SHA-256, and the checksum S3 will report for it when uploaded in parts of `partBytes`. */
export async function planChecksums(file: string, partBytes = UPLOAD_PART_BYTES): Promise<PlanChecksums> {
  const whole = createHash("sha256");
  const partDigests: Buffer[] = [];
  let part = createHash("sha256");
  let inPart = 0;
  let size = 0;
  for await (const chunk of fs.createReadStream(file) as AsyncIterable<Buffer>) {
    whole.update(chunk);
    size += chunk.length;
    for (let at = 0; at < chunk.length;) {
      const take = Math.min(partBytes - inPart, chunk.length - at);
      part.update(chunk.subarray(at, at + take));
      inPart += take;
      at += take;
      if (inPart === partBytes) {
        partDigests.push(part.digest());
        part = createHash("sha256");
        inPart = 0;
      }
    }
  }
  if (inPart > 0 || partDigests.length === 0) partDigests.push(part.digest());
  const digest = whole.digest();
  const single = size <= partBytes;
  return {
    size,
    sha256Hex: digest.toString("hex"),
    s3ChecksumSha256: single
      ? digest.toString("base64")
      : `${createHash("sha256").update(Buffer.concat(partDigests)).digest("base64")}-${partDigests.length}`,
    parts: single ? 1 : partDigests.length,
  };
}

/**
 * Uploads the plan and proves S3 holds exactly the bytes whose SHA-256 is `planSha256` (the summary's): the file is
 * hashed first (refused if it changed since planning), a single PUT carries that SHA-256 (S3 rejects other bytes),
 * and after a multipart upload S3's composite checksum (HeadObject) must equal the one computed from the plan.
 */
export async function uploadPlan(
  d: Deadline,
  s3: S3Client,
  o: { bucket: string; campaignId: string; launchId: string; file: string; planSha256: string },
  progress: (text: string) => void,
): Promise<string> {
  const key = planKey(o.campaignId, o.launchId);
  const where = `s3://${o.bucket}/${key}`;
  const sums = await planChecksums(o.file);
  if (sums.sha256Hex !== o.planSha256)
    throw new FindingsError(
      `${o.file} changed since it was planned (sha256 ${sums.sha256Hex.slice(0, 16)}…, the summary says ${o.planSha256.slice(0, 16)}…): not uploaded, nothing started; plan again`,
    );
  const what = `upload of the plan to ${where} failed`;
  if (sums.parts === 1) {
    progress(`uploading ${where} (${count(sums.size)} bytes)`);
    await awsCall(d, what, (opts) =>
      s3.send(
        new PutObjectCommand({
          Bucket: o.bucket,
          Key: key,
          Body: fs.readFileSync(o.file),
          ContentType: "application/x-ndjson",
          ChecksumSHA256: sums.s3ChecksumSha256,
        }),
        opts,
      ),
    );
  } else await multipartUpload(d, s3, { ...o, key, total: sums.size, what }, progress);
  await verifyUpload(d, s3, { bucket: o.bucket, key, file: o.file, expected: sums });
  return key;
}

async function multipartUpload(
  d: Deadline,
  s3: S3Client,
  o: { bucket: string; key: string; file: string; total: number; what: string },
  progress: (text: string) => void,
): Promise<void> {
  const abortController = new AbortController();
  const upload = new Upload({
    client: s3,
    params: {
      Bucket: o.bucket,
      Key: o.key,
      Body: fs.createReadStream(o.file),
      ContentType: "application/x-ndjson",
      ChecksumAlgorithm: "SHA256",
    },
    partSize: UPLOAD_PART_BYTES,
    queueSize: 4,
    abortController,
  });
  upload.on("httpUploadProgress", (p) =>
    progress(`uploading s3://${o.bucket}/${o.key}: ${Math.round(((p.loaded ?? 0) / Math.max(o.total, 1)) * 100)}%`),
  );
  const stop = () => abortController.abort();
  d.signal.addEventListener("abort", stop);
  try {
    await awsCall(d, o.what, () => upload.done());
  } finally {
    d.signal.removeEventListener("abort", stop);
  }
}

/** HeadObject with checksums: S3's ChecksumSHA256 must be the plan's (see PlanChecksums). */
async function verifyUpload(d: Deadline, s3: S3Client, o: { bucket: string; key: string; file: string; expected: PlanChecksums }) {
  const where = `s3://${o.bucket}/${o.key}`;
  const head = await awsCall(d, `checking the uploaded plan ${where} (HeadObject)`, (opts) =>
    s3.send(new HeadObjectCommand({ Bucket: o.bucket, Key: o.key, ChecksumMode: "ENABLED" }), opts),
  );
  const reported = head?.ChecksumSHA256;
  const expected = o.expected.s3ChecksumSha256;
  // S3 may give a composite checksum with or without its "-<parts>" suffix; the digest must match either way.
  const matches = reported !== undefined && (reported === expected || `${reported}-${o.expected.parts}` === expected);
  if (!matches)
    throw new FindingsError(
      `${where} does not hold the planned bytes: S3 reports ChecksumSHA256 ${reported ?? "(none)"}${head?.ChecksumType ? ` (${head.ChecksumType})` : ""}, ${o.file} gives ${expected}; fan-out not started`,
    );
}

/** Stores the launch's record next to the plans (`launches/<campaign>/<launch id>.json`) for campaign-report. */
export async function uploadLaunchRecord(d: Deadline, s3: S3Client, bucket: string, record: LaunchRecord): Promise<string> {
  const key = launchRecordKey(record.campaignId, record.launch.id);
  await awsCall(d, `upload of the launch record to s3://${bucket}/${key} failed (nothing started)`, (opts) =>
    s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: JSON.stringify(record, null, 2) + "\n", ContentType: "application/json" }),
      opts,
    ),
  );
  return key;
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
  const r = await awsCall(d, `campaign ${input.campaign_id}: StartExecution on ${stateMachineArn} failed`, async (opts) => {
    try {
      return await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }), opts);
    } catch (e) {
      if (!isAwsError(e, "ExecutionAlreadyExists")) throw e;
      throw new FindingsError(
        `campaign ${input.campaign_id}: this plan was already launched as execution "${name}"; Step Functions refuses to run it twice. ` +
          `To run it again on purpose (existing schedules are kept, missing ones created), pass --launch-id with a new id`,
      );
    }
  });
  return r.executionArn!;
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
export async function mapRunItems(d: Deadline, sfn: SFNClient, mapRunArn: string | undefined, what: string): Promise<MapRunItems | null> {
  if (!mapRunArn) return null;
  const c = (await awsCall(d, `${what}DescribeMapRun ${mapRunArn}`, (opts) => sfn.send(new DescribeMapRunCommand({ mapRunArn }), opts)))
    .itemCounts;
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
function resultsLocation(output: string | undefined, mapRunArn: string | undefined, bucket: string): FanOutResult["results"] {
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
