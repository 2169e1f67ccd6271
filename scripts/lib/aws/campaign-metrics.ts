/**
 * What campaign-report reads from AWS: the campaign's launch records in the bucket, which (step, variant) metrics
 * CloudWatch has for its tag, and their hourly sums. Every call has a time limit; every paginated call follows its
 * tokens to the end and refuses a token it has already seen.
 */
import {
  CloudWatchClient,
  GetMetricDataCommand,
  ListMetricsCommand,
  MetricDataQuery,
} from "@aws-sdk/client-cloudwatch";
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { EMAIL_TAGS, SES_METRICS_NAMESPACE } from "../../../infra/core/send/email-events";
import { LAUNCHES_PREFIX } from "../../../infra/core/plan/naming";
import { ses } from "../../../infra/core/plan/quotas";
import * as readline from "readline";
import { LaunchRecord, parseLaunchRecord } from "../planning/launch-record";
import {
  distinctLaunches,
  DueCounts,
  dueWithoutPlan,
  HOUR_MS,
  MetricQuery,
  Segment,
  segmentKey,
  Series,
  variantDimension,
} from "../report/campaign-report";
import { FindingsError } from "../../../infra/core/errors";
import { boundedCall, Deadline } from "./call";
import { NoSuchObject, openS3Object } from "./s3-objects";

/** Each call's own bound; the command's --timeout-seconds (a Deadline) cuts it to what is left. */
const CALL_MS = 30_000;

/** One call within its own bound and what is left of the command's limit; running out of the latter says so. */
async function within<T>(d: Deadline, what: string, call: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
  const left = d.endsAt - Date.now();
  if (left <= 0) throw d.exceeded(what);
  try {
    return await boundedCall(what, Math.min(CALL_MS, left), call);
  } catch (e) {
    if (left < CALL_MS && Date.now() >= d.endsAt - 5) throw d.exceeded(what);
    throw e;
  }
}

/** What is left of the command's limit for a read, in seconds (at most a call's own bound). */
const secondsLeft = (d: Deadline) => Math.max(Math.min(CALL_MS, d.endsAt - Date.now()) / 1000, 0.1);

/** GetMetricData takes at most 500 queries a request. */
const MAX_QUERIES_PER_REQUEST = 500;

/** Follows a paginated call; a repeated token is an error, not a loop. */
async function paginate<T>(
  what: string,
  page: (token: string | undefined) => Promise<{ next?: string; items: T[] }>,
): Promise<T[]> {
  const out: T[] = [];
  const seen = new Set<string>();
  let token: string | undefined;
  do {
    const r = await page(token);
    out.push(...r.items);
    if (r.next !== undefined && seen.has(r.next)) throw new FindingsError(`${what}: the service repeated a page token`);
    if (r.next !== undefined) seen.add(r.next);
    token = r.next;
  } while (token !== undefined);
  return out;
}

export async function readLaunchRecords(
  s3: S3Client,
  bucket: string,
  campaignId: string,
  d: Deadline,
): Promise<LaunchRecord[]> {
  const prefix = `${LAUNCHES_PREFIX}${campaignId}/`;
  const what = `listing s3://${bucket}/${prefix}`;
  const keys = await paginate(what, async (token) => {
    const r = await within(d, what, (abortSignal) =>
      s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }), { abortSignal }),
    );
    return { next: r.IsTruncated ? r.NextContinuationToken : undefined, items: (r.Contents ?? []).map((o) => o.Key!) };
  });
  const records: LaunchRecord[] = [];
  for (const key of keys.filter((k) => k.endsWith(".json"))) {
    const where = `s3://${bucket}/${key}`;
    const text = await within(d, `reading ${where}`, async (abortSignal) => {
      const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal });
      return r.Body!.transformToString("utf8");
    });
    records.push(parseLaunchRecord(text, where));
  }
  return records;
}

/** The (step, variant) pairs CloudWatch has metrics for under this campaign tag (the last two weeks, per ListMetrics). */
export async function discoverSegments(cw: CloudWatchClient, tag: string, d: Deadline): Promise<Segment[]> {
  const what = `ListMetrics for campaign tag ${tag}`;
  const metrics = await paginate(what, async (token) => {
    const r = await within(d, what, (abortSignal) =>
      cw.send(
        new ListMetricsCommand({
          Namespace: SES_METRICS_NAMESPACE,
          Dimensions: [{ Name: EMAIL_TAGS.campaign, Value: tag }],
          NextToken: token,
        }),
        { abortSignal },
      ),
    );
    return { next: r.NextToken, items: r.Metrics ?? [] };
  });
  const segments: Segment[] = [];
  for (const m of metrics) {
    const dims = new Map((m.Dimensions ?? []).map((d) => [d.Name!, d.Value!]));
    const step = dims.get(EMAIL_TAGS.step);
    const variant = dims.get(EMAIL_TAGS.variant);
    if (dims.size === 3 && step !== undefined && variant !== undefined) segments.push({ step, variant });
  }
  return segments;
}

/** Hourly sums of every query over [from, to); missing data stays missing (the report counts it as zero). */
export async function fetchSeries(
  cw: CloudWatchClient,
  tag: string,
  queries: MetricQuery[],
  range: { from: number; to: number },
  d: Deadline,
): Promise<Series> {
  const series: Series = new Map();
  for (let i = 0; i < queries.length; i += MAX_QUERIES_PER_REQUEST) {
    const chunk = queries.slice(i, i + MAX_QUERIES_PER_REQUEST);
    const what = `GetMetricData for campaign tag ${tag}`;
    const results = await paginate(what, async (token) => {
      const r = await within(d, what, (abortSignal) =>
        cw.send(
          new GetMetricDataCommand({
            MetricDataQueries: chunk.map((q) => metricDataQuery(tag, q)),
            StartTime: new Date(range.from),
            EndTime: new Date(range.to),
            ScanBy: "TimestampAscending",
            NextToken: token,
          }),
          { abortSignal },
        ),
      );
      return { next: r.NextToken, items: r.MetricDataResults ?? [] };
    });
    for (const res of results) {
      const points = series.get(res.Id!) ?? [];
      (res.Timestamps ?? []).forEach((t, k) => points.push({ t: new Date(t).getTime(), v: res.Values?.[k] ?? 0 }));
      series.set(res.Id!, points);
    }
  }
  return series;
}

function metricDataQuery(tag: string, q: MetricQuery): MetricDataQuery {
  return {
    Id: q.id,
    MetricStat: {
      Metric: {
        Namespace: SES_METRICS_NAMESPACE,
        MetricName: q.metric,
        Dimensions: [
          { Name: EMAIL_TAGS.campaign, Value: tag },
          { Name: EMAIL_TAGS.step, Value: q.step },
          { Name: EMAIL_TAGS.variant, Value: q.variant },
        ],
      },
      Period: HOUR_MS / 1000,
      Stat: "Sum",
    },
    ReturnData: true,
  };
}

/**
 * The sends due by `to`, per segment. A launch whose last send has passed is all due, one whose first send is still
 * to come none, both from its record; only a launch under way has its plan read (streamed: each row's step, variant
 * and utc), and when that plan has expired its due count is taken as all scheduled and the launch is named.
 */
export async function countDue(
  s3: S3Client,
  bucket: string,
  records: LaunchRecord[],
  to: number,
  d: Deadline,
): Promise<DueCounts> {
  const due: DueCounts = { bySegment: new Map(), counted: "records", unknownLaunches: [] };
  const add = (step: number | string, variant: string | null, k: number) => {
    const key = segmentKey(String(step), variantDimension(variant));
    due.bySegment.set(key, (due.bySegment.get(key) ?? 0) + k);
  };
  for (const r of distinctLaunches(records)) {
    const known = dueWithoutPlan(r, to);
    if (known === "all") r.scheduled.forEach((c) => add(c.step, c.variant, c.schedules));
    if (known !== undefined) continue;
    const counted = new Map<string, number>();
    let expired = false;
    for (const key of r.launch.planKeys ?? [r.launch.planKey]) {
      if (!(await countPlanDue(s3, bucket, key, to, d, counted))) expired = true;
      if (expired) break;
    }
    if (expired) {
      due.unknownLaunches.push(r.launch.id);
      r.scheduled.forEach((c) => add(c.step, c.variant, c.schedules));
    } else {
      due.counted = "plans";
      for (const [k, v] of counted) due.bySegment.set(k, (due.bySegment.get(k) ?? 0) + v);
    }
  }
  return due;
}

/** Adds one plan object's rows due by `to` into `counted`; false when the object is no longer there (expired). */
async function countPlanDue(
  s3: S3Client,
  bucket: string,
  key: string,
  to: number,
  d: Deadline,
  counted: Map<string, number>,
): Promise<boolean> {
  const where = `s3://${bucket}/${key}`;
  const seconds = secondsLeft(d);
  let body;
  try {
    ({ body } = await openS3Object(s3, { bucket, key }, { firstByteSeconds: seconds, idleSeconds: seconds }));
  } catch (e) {
    if (e instanceof NoSuchObject) return false; // no such object: the plan's retention has run out
    throw e;
  }
  let line = 0;
  for await (const text of readline.createInterface({ input: body, crlfDelay: Infinity })) {
    line++;
    if (text === "") continue;
    let row: { step?: unknown; variant?: unknown; utc?: unknown; entries?: unknown };
    try {
      row = JSON.parse(text);
    } catch {
      throw new FindingsError(`${where} line ${line}: not a plan row (not JSON)`);
    }
    const t = typeof row.utc === "string" ? Date.parse(row.utc) : NaN;
    if (!Number.isInteger(row.step) || !(row.variant === null || typeof row.variant === "string") || Number.isNaN(t))
      throw new FindingsError(`${where} line ${line}: not a plan row (needs step, variant, utc)`);
    // A bulk line (bulk-plan-row.ts BulkPlanRow) sends each of its entries: the report counts sends, not schedules.
    const sends = row.entries === undefined ? 1 : Array.isArray(row.entries) ? row.entries.length : 0;
    if (sends < 1 || sends > ses.maxBulkEntries)
      throw new FindingsError(
        `${where} line ${line}: a bulk plan line's entries must be a list of 1 to ${ses.maxBulkEntries}`,
      );
    if (t > to) continue;
    const k = segmentKey(String(row.step), variantDimension(row.variant as string | null));
    counted.set(k, (counted.get(k) ?? 0) + sends);
  }
  return true;
}
