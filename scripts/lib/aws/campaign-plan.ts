/**
 * A campaign's plan as redrive reads it back from the bucket: its launch records (`launches/<campaign>/`, every page),
 * newest first, each naming its plan objects (`plans/<campaign>/…jsonl`), which are streamed line by line — a plan
 * can be millions of lines, never held whole — and stopped as soon as what is looked for is found. Every call is
 * bounded by the command's Deadline, and a download that stalls fails within it.
 */
import * as readline from "readline";
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { LAUNCHES_PREFIX } from "../../../infra/core/plan/naming";
import { QuietTime } from "../../../infra/core/timing/quiet-time";
import {
  LaunchMissed,
  launchMissedPolicy,
  launchPlanKeys,
  launchQuietTime,
  parseLaunchRecord,
} from "../planning/launch-record";
import { allPages, awsCall, Deadline } from "./call";
import { NoSuchObject, openS3Object, s3Url } from "./s3-objects";

/** One launch of the campaign: where its record is, its plan objects, its quiet time and missed-time policy. */
export interface Launch {
  id: string;
  at: string;
  record: string;
  planKeys: string[];
  quiet: QuietTime | null;
  /** null: the record states none. */
  missed: LaunchMissed | null;
}

/** The campaign's launches, newest first; a FindingsError naming the record that cannot be read. */
export async function readLaunches(d: Deadline, s3: S3Client, bucket: string, campaignId: string): Promise<Launch[]> {
  const prefix = `${LAUNCHES_PREFIX}${campaignId}/`;
  const keys: string[] = [];
  for await (const page of allPages(
    d,
    `listing s3://${bucket}/${prefix}`,
    (ContinuationToken, opts) =>
      s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken }), opts),
    (p) => (p.IsTruncated ? p.NextContinuationToken : undefined),
  ))
    for (const o of page.Contents ?? []) if (o.Key?.endsWith(".json")) keys.push(o.Key);
  const launches: Launch[] = [];
  for (const key of keys) {
    const where = `s3://${bucket}/${key}`;
    const text = await awsCall(d, `reading ${where}`, async (opts) => {
      const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), opts);
      return (await r.Body?.transformToString("utf8")) ?? "";
    });
    const r = parseLaunchRecord(text, where);
    launches.push({
      id: r.launch.id,
      at: r.launch.at,
      record: where,
      planKeys: launchPlanKeys(r, where),
      quiet: launchQuietTime(r, where),
      missed: launchMissedPolicy(r, where),
    });
  }
  return launches.sort((a, b) => b.at.localeCompare(a.at));
}

/**
 * Streams one plan object into `onLine` (its text and where it is) until the end or until `more()` says nothing more
 * is looked for. "gone" when the object is no longer there (plans expire; launch records stay).
 */
export async function streamPlan(
  d: Deadline,
  s3: S3Client,
  where: { bucket: string; key: string },
  onLine: (text: string, at: string) => void,
  more: () => boolean,
): Promise<"read" | "gone"> {
  const url = s3Url(where);
  if (d.expired) throw d.exceeded(`reading ${url}`);
  const seconds = Math.min(30, Math.max((d.endsAt - Date.now()) / 1000, 0.1));
  let body;
  try {
    ({ body } = await openS3Object(s3, where, { firstByteSeconds: seconds, idleSeconds: seconds }));
  } catch (e) {
    if (e instanceof NoSuchObject) return "gone";
    throw e;
  }
  const stop = () => body.destroy(d.exceeded(`reading ${url}`));
  d.signal.addEventListener("abort", stop);
  const lines = readline.createInterface({ input: body, crlfDelay: Infinity });
  try {
    let n = 0;
    for await (const text of lines) {
      onLine(text, `${url} line ${++n}`);
      if (!more()) break;
    }
  } finally {
    d.signal.removeEventListener("abort", stop);
    lines.close();
    body.destroy();
  }
  if (d.expired) throw d.exceeded(`reading ${url}`);
  return "read";
}
