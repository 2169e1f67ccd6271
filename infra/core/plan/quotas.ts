/**
 * Service limits sendtime is sized against. One fact, one place: config validation, the fan-out
 * definition, the policy pack and the operator scripts all import these.
 */

/** EventBridge Scheduler — https://docs.aws.amazon.com/scheduler/latest/UserGuide/scheduler-quotas.html */
export const scheduler = {
  /** CreateSchedule requests per second, major Regions (adjustable; lower in smaller Regions). */
  createScheduleTps: 5_000,
  /** Target invocations per second per Region (adjustable). */
  invocationTps: 1_000,
  /** Schedules per Region (adjustable). */
  maxSchedules: 10_000_000,
  /** Name and GroupName: 1–64 characters of [0-9a-zA-Z-_.]. */
  nameMaxLength: 64,
  /** ScheduleExpressionTimezone length. */
  timezoneMaxLength: 50,
  /** FlexibleTimeWindow.MaximumWindowInMinutes range. */
  flexibleWindowMinutes: { min: 1, max: 1_440 },
  /** RetryPolicy.MaximumEventAgeInSeconds range. */
  maxEventAgeSeconds: { min: 60, max: 86_400 },
  /** RetryPolicy.MaximumRetryAttempts range. */
  maxRetryAttempts: { min: 0, max: 185 },
  /** A cron expression's year field (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html). */
  cronYears: { min: 1970, max: 2199 },
  /** Target.Input, in bytes (https://docs.aws.amazon.com/scheduler/latest/APIReference/API_Target.html). */
  maxTargetInputBytes: 262_144,
} as const;

/**
 * sendtime's own bound on a recurring campaign (--until): each recipient's schedule holds one of the Region's
 * schedules until its EndDate, so a date years ahead (a typo) would hold quota for nothing. Launch again instead.
 */
export const recurringSends = { maxYears: 5 } as const;

/** Step Functions — https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html */
export const stepFunctions = {
  /** Distributed Map MaxConcurrency when absent or 0. */
  distributedMapDefaultConcurrency: 10_000,
  /** Child executions a Distributed Map runs at once, at most. */
  distributedMapMaxConcurrency: 10_000,
  /** Iterations an inline Map runs at once, at most. */
  inlineMapMaxConcurrency: 40,
  /** ItemBatcher MaxInputBytesPerBatch upper bound, and the EXPRESS child input limit. */
  maxBatchBytes: 262_144,
  /** An EXPRESS execution runs at most this long. */
  expressMaxSeconds: 300,
  /**
   * The largest S3 object a Distributed Map's ItemReader reads: "Step Functions supports 10 GB as the maximum size of
   * an individual file in Amazon S3", stated for JSON, JSON Lines and CSV files on the ItemReader page of the Step
   * Functions Developer Guide (https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemreader.html).
   * Read here as 10^10 bytes, the smaller reading of "GB". The launcher splits a larger plan into objects below it,
   * one execution each (scripts/lib/aws/plan-upload.ts).
   */
  maxItemReaderObjectBytes: 10_000_000_000,
  /** Execution names: 1–80 characters. */
  executionNameMaxLength: 80,
  /**
   * DescribeExecution refill rate, per second, outside the three largest Regions (15 in them): the polling budget
   * of `launch-campaign --wait`, shared with every other caller in the account.
   */
  describeExecutionRefillPerSecond: 10,
} as const;

/** SES v2 — https://docs.aws.amazon.com/ses/latest/dg/quotas.html */
export const ses = {
  /** SendEmail Content.Template.TemplateData length (and a bulk entry's ReplacementTemplateData). */
  maxTemplateDataChars: 262_144,
  /**
   * Entries of one SendBulkEmail call. The v2 API reference states no number; v1's SendBulkTemplatedEmail allows 50
   * (https://docs.aws.amazon.com/ses/latest/APIReference/API_SendBulkTemplatedEmail.html), and sendtime keeps to it.
   */
  maxBulkEntries: 50,
  /**
   * MessageHeader (SendEmail Headers, a bulk entry's ReplacementHeaders): a name of printable ASCII but `:`, at most
   * 126 characters; a value of printable ASCII, at most 995; name and value together at most 996
   * (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_MessageHeader.html).
   */
  header: { maxNameChars: 126, maxValueChars: 995, maxTotalChars: 996 },
  /** MessageHeader list (an entry's ReplacementHeaders): at most 15 (API model MessageHeaderList). */
  maxHeaders: 15,
  /** Bounce and complaint rates at which SES warns an account ("under review" comes at 10% and 0.5%). */
  bounceRateWarning: 0.05,
  complaintRateWarning: 0.001,
} as const;

/** DynamoDB — https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html */
export const dynamodb = {
  /** Keys of one BatchGetItem call (and no key twice). */
  maxBatchGetKeys: 100,
} as const;

/** SQS — the longest a dead-lettered send can wait for a human. */
export const sqs = {
  maxRetentionSeconds: 1_209_600,
} as const;

/**
 * How the fan-out retries a throttled or failed CreateSchedule: exponential backoff with full jitter.
 * Worst case per row is the sum of the capped delays plus one call budget per attempt.
 */
export const createScheduleRetry = {
  intervalSeconds: 1,
  backoffRate: 2,
  maxDelaySeconds: 8,
  /** 17 tries in all: a row still throttled after 50/50 odds on every try is about 1 in 130,000. */
  maxAttempts: 16,
  /** Budget for one CreateSchedule round trip, in seconds, for the worst-case child duration. */
  callSeconds: 1,
} as const;

/** Seconds one row can take in the worst case: every attempt fails slowly and every delay is at its cap. */
export function worstCaseRowSeconds(retry = createScheduleRetry): number {
  let total = retry.callSeconds; // the first attempt
  for (let attempt = 0; attempt < retry.maxAttempts; attempt++) {
    total += Math.min(retry.intervalSeconds * retry.backoffRate ** attempt, retry.maxDelaySeconds) + retry.callSeconds;
  }
  return total;
}

/**
 * Seconds an EXPRESS child takes for a batch when one of its rows is retried to the limit: the batch's rows at the
 * pace of `innerConcurrency` calls of `pacing.callSeconds` each, plus that one row's worst case. Beyond that (heavy
 * throttling from other callers) the child may hit the 5-minute limit and fail: its batch goes to the results for a
 * redrive, which is safe since an existing schedule counts as done.
 */
export function batchSecondsWithOneSlowRow(batchSize: number, innerConcurrency: number): number {
  // Rounded to the microsecond: 1,720 rounds of 0.1 s are 172 s, not 172.00000000000003.
  return Math.round((Math.ceil(batchSize / innerConcurrency) * pacing.callSeconds + worstCaseRowSeconds()) * 1e6) / 1e6;
}

/**
 * The most CreateSchedule calls a task can have in flight: the product of the MaxConcurrency of every Map around it
 * (absent or 0: 10,000 for a Distributed Map, 40 for an inline Map; no Map at all: 1).
 */
export function peakConcurrentCreates(maps: { distributed: boolean; maxConcurrency?: number }[]): number {
  return maps.reduce(
    (product, m) =>
      product *
      (m.maxConcurrency ||
        (m.distributed ? stepFunctions.distributedMapDefaultConcurrency : stepFunctions.inlineMapMaxConcurrency)),
    1,
  );
}

/**
 * The fan-out's pacing. Step Functions cannot rate-limit, only bound concurrency, so the fan-out is sized by Little's
 * law: calls in flight = rate × call latency. At `callSeconds` a call (an assumption: a CreateSchedule round trip as a
 * Step Functions task sees it; measure yours and set maxConcurrency/innerConcurrency and the policy's callLatencyMs),
 * `createScheduleTps × FANOUT_HEADROOM × callSeconds` calls in flight ask for FANOUT_HEADROOM of the quota: high
 * enough to use ≥ 90% of it, low enough that throttling is rare. The policy pack's concurrency check defaults to these,
 * and the launcher estimates the fan-out's duration at `fanOutCreateRate` (size-window takes --create-tps, default the quota).
 */
export const FANOUT_HEADROOM = 0.95;

export const pacing = {
  /** Assumed CreateSchedule round trip from a Step Functions task, in seconds. */
  callSeconds: 0.1,
} as const;

/** CreateSchedule calls per second the fan-out is expected to sustain on a stack with this quota. */
export function fanOutCreateRate(createScheduleTps: number): number {
  return createScheduleTps * FANOUT_HEADROOM;
}

/** The most CreateSchedule calls the fan-out may have in flight: the quota's share times the call latency. */
export function maxCallsInFlight(
  createScheduleTps: number,
  headroom = FANOUT_HEADROOM,
  callSeconds: number = pacing.callSeconds,
): number {
  return Math.max(1, Math.floor(createScheduleTps * headroom * callSeconds + 1e-9));
}

/**
 * The default fan-out concurrency for a quota: the inline concurrency (≤ 40) and Distributed Map MaxConcurrency whose
 * product comes closest to maxCallsInFlight without exceeding it (ties: the larger inline concurrency, fewer children).
 */
export function pacedConcurrency(createScheduleTps: number): { maxConcurrency: number; innerConcurrency: number } {
  const target = maxCallsInFlight(createScheduleTps);
  let best = { maxConcurrency: target, innerConcurrency: 1 };
  for (let inner = 2; inner <= Math.min(stepFunctions.inlineMapMaxConcurrency, target); inner++) {
    const outer = Math.floor(target / inner);
    if (outer * inner >= best.maxConcurrency * best.innerConcurrency)
      best = { maxConcurrency: outer, innerConcurrency: inner };
  }
  return {
    maxConcurrency: Math.min(best.maxConcurrency, stepFunctions.distributedMapMaxConcurrency),
    innerConcurrency: best.innerConcurrency,
  };
}

/**
 * Prices the fan-out's orchestration is billed at (US East (N. Virginia), https://aws.amazon.com/step-functions/pricing/):
 * the Distributed Map bills one Standard state transition per child it starts; an EXPRESS child bills one request and
 * its duration (rounded up to 100 ms) times its memory (64 MB chunks). CreateSchedule calls themselves are free.
 */
export const stepFunctionsPricing = {
  standardTransition: 0.025 / 1_000,
  expressRequest: 1.0 / 1_000_000,
  expressGbSecond: 0.00001667,
  /** Memory billed per child: one 64 MB chunk (a ≤ 256 KB batch and a small definition). */
  expressMemoryGb: 64 / 1024,
} as const;

/**
 * DynamoDB on-demand request prices the occurrence ledger and the cap table are billed at: US East (N. Virginia),
 * Standard table class, as cut in November 2024 (https://aws.amazon.com/dynamodb/pricing/on-demand/; docs/benchmarks.md
 * says where and when they were read). A write request unit writes up to 1 KB of an item, an update billed on the
 * larger of the item before and after; a strongly consistent read unit reads up to 4 KB, an eventually consistent
 * read takes half a unit; an item that is not there still takes the minimum. KB here is 1,024 bytes.
 */
export const dynamodbPricing = {
  writeRequestUnit: 0.625 / 1_000_000,
  readRequestUnit: 0.125 / 1_000_000,
  writeUnitBytes: 1_024,
  readUnitBytes: 4_096,
} as const;

/** Rows per child when rows average `rowBytes`: MaxItemsPerBatch, or fewer when 256 KB fills first. */
export function rowsPerBatch(batchSize: number, rowBytes: number): number {
  return Math.max(1, Math.min(batchSize, Math.floor(stepFunctions.maxBatchBytes / rowBytes)));
}

/** Orchestration dollars per million plan rows, unthrottled, for rows of `rowBytes` on average. */
export function fanOutCostPerMillionRows(
  shape: { batchSize: number; innerConcurrency: number },
  rowBytes: number,
): number {
  const rows = rowsPerBatch(shape.batchSize, rowBytes);
  const children = Math.ceil(1_000_000 / rows);
  const seconds = Math.ceil((Math.ceil(rows / shape.innerConcurrency) * pacing.callSeconds) / 0.1 - 1e-9) * 0.1;
  const p = stepFunctionsPricing;
  return children * (p.standardTransition + p.expressRequest + seconds * p.expressMemoryGb * p.expressGbSecond);
}
