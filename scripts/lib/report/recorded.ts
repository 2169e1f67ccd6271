/**
 * A recorded launch, read offline (campaign-report --recorded DIR, written by `sendtime demo`): DIR/launch-record.json,
 * the launch record the launcher stores in the bucket, and DIR/metrics.json, the SES event metrics as hourly sums per
 * step, variant and metric, with the instant they were read (the report's end). No AWS: the report is built from
 * these two files as from S3 and CloudWatch.
 */
import * as fs from "fs";
import * as path from "path";
import { InputError } from "../../../infra/core/errors";
import { LaunchRecord } from "../planning/launch-record";
import { fileProblem } from "../text/input-files";
import {
  distinctLaunches,
  DueCounts,
  dueWithoutPlan,
  MetricQuery,
  Segment,
  segmentKey,
  Series,
  variantDimension,
} from "./campaign-report";

export const RECORD_FILE = "launch-record.json";
export const METRICS_FILE = "metrics.json";

/** One metric's hourly sums, as metrics.json holds it. */
export interface RecordedMetric extends Segment {
  /** The SES metric's name (AWS/SES: Send, Delivery, Open, …). */
  metric: string;
  /** [hour (ISO 8601), sum] pairs. */
  points: [string, number][];
}

export interface RecordedMetrics {
  /** When the metrics were read: the report's end unless --to says otherwise. */
  to: string;
  metrics: RecordedMetric[];
}

export interface RecordedLaunch {
  records: LaunchRecord[];
  metrics: RecordedMetrics;
}

const RECORD_EXPECTED = "a launch record as the launcher stores it (a JSON object with launch, planSha256, scheduled)";
const METRICS_EXPECTED =
  'the SES metrics (a JSON object: "to", an ISO instant, and "metrics", a list of {step, variant, metric, points: [[ISO hour, sum], …]})';

/** The metrics of `queries` as metrics.json holds them: every query with a point, in the queries' order. */
export function recordedMetrics(queries: MetricQuery[], series: Series, to: number): RecordedMetrics {
  const metrics = queries
    .filter((q) => series.get(q.id)?.length)
    .map((q) => ({
      step: q.step,
      variant: q.variant,
      metric: q.metric,
      points: series.get(q.id)!.map((p) => [new Date(p.t).toISOString(), p.v] as [string, number]),
    }));
  return { to: new Date(to).toISOString(), metrics };
}

/** Writes the two files into `dir`. */
export function writeRecordedLaunch(dir: string, record: LaunchRecord, metrics: RecordedMetrics): void {
  fs.writeFileSync(path.join(dir, RECORD_FILE), JSON.stringify(record, null, 2) + "\n");
  fs.writeFileSync(path.join(dir, METRICS_FILE), JSON.stringify(metrics, null, 2) + "\n");
}

/** Reads DIR's two files, or an InputError naming the file and what it must hold (`shown` names DIR as given). */
export function readRecordedLaunch(dir: string, shown: string): RecordedLaunch {
  const stat = fs.statSync(dir, { throwIfNoEntry: false });
  if (!stat?.isDirectory())
    throw new InputError(
      `${shown}: ${stat ? "a file, not a folder" : "no such folder"} (expected the folder \`sendtime demo\` writes, holding ${RECORD_FILE} and ${METRICS_FILE})`,
    );
  const record = readJson(dir, RECORD_FILE, RECORD_EXPECTED);
  if (!isRecord(record)) throw new InputError(`${path.join(dir, RECORD_FILE)}: expected ${RECORD_EXPECTED}`);
  const metrics = readJson(dir, METRICS_FILE, METRICS_EXPECTED);
  if (!isMetrics(metrics)) throw new InputError(`${path.join(dir, METRICS_FILE)}: expected ${METRICS_EXPECTED}`);
  return { records: [record], metrics };
}

function readJson(dir: string, name: string, expected: string): unknown {
  const file = path.join(dir, name);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new InputError(`${file}: ${fileProblem(e)} (expected ${expected})`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(`${file}: not JSON (${(e as Error).message}); expected ${expected}`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

function isRecord(v: unknown): v is LaunchRecord {
  if (!isObject(v) || !isObject(v.launch) || typeof v.planSha256 !== "string" || !Array.isArray(v.scheduled))
    return false;
  const launch = v.launch;
  return (
    typeof launch.id === "string" &&
    typeof launch.at === "string" &&
    typeof v.campaignId === "string" &&
    v.scheduled.every((c) => isObject(c) && typeof c.schedules === "number")
  );
}

function isMetrics(v: unknown): v is RecordedMetrics {
  if (!isObject(v) || typeof v.to !== "string" || Number.isNaN(Date.parse(v.to)) || !Array.isArray(v.metrics))
    return false;
  return v.metrics.every(
    (m) =>
      isObject(m) &&
      typeof m.step === "string" &&
      typeof m.variant === "string" &&
      typeof m.metric === "string" &&
      Array.isArray(m.points) &&
      m.points.every(
        (p) => Array.isArray(p) && p.length === 2 && !Number.isNaN(Date.parse(p[0])) && typeof p[1] === "number",
      ),
  );
}

/** The segments the recorded metrics know of (as discoverSegments finds them in CloudWatch). */
export const recordedSegments = (m: RecordedMetrics): Segment[] =>
  m.metrics.map((x) => ({ step: x.step, variant: x.variant }));

/** The recorded metrics as the series of `queries` (fetchSeries's shape), points within `range`. */
export function recordedSeries(
  m: RecordedMetrics,
  queries: MetricQuery[],
  range: { from: number; to: number },
): Series {
  const series: Series = new Map();
  for (const q of queries) {
    const found = m.metrics.find((x) => x.step === q.step && x.variant === q.variant && x.metric === q.metric);
    if (!found) continue;
    const points = found.points
      .map(([t, v]) => ({ t: Date.parse(t), v }))
      .filter((p) => p.t >= range.from && p.t < range.to);
    if (points.length) series.set(q.id, points);
  }
  return series;
}

/**
 * The sends due by `to` from the records alone (no plan is recorded): a launch all due or none is known from its
 * first and last send; one under way at `to` is counted as all scheduled and named, as when its plan has expired.
 */
export function recordedDue(records: LaunchRecord[], to: number): DueCounts {
  const due: DueCounts = { bySegment: new Map(), counted: "records", unknownLaunches: [] };
  for (const r of distinctLaunches(records)) {
    const known = dueWithoutPlan(r, to);
    if (known === "none") continue;
    if (known === undefined) due.unknownLaunches.push(r.launch.id);
    for (const c of r.scheduled) {
      const key = segmentKey(String(c.step), variantDimension(c.variant));
      due.bySegment.set(key, (due.bySegment.get(key) ?? 0) + c.schedules);
    }
  }
  return due;
}
