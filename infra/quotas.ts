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
} as const;

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
} as const;

/** SES v2 — https://docs.aws.amazon.com/ses/latest/dg/quotas.html */
export const ses = {
  /** SendEmail Content.Template.TemplateData length. */
  maxTemplateDataChars: 262_144,
  /** Bounce and complaint rates at which SES warns an account ("under review" comes at 10% and 0.5%). */
  bounceRateWarning: 0.05,
  complaintRateWarning: 0.001,
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

/** Seconds an EXPRESS child takes in the worst case for a batch of `batchSize` rows, `innerConcurrency` at once. */
export function worstCaseBatchSeconds(batchSize: number, innerConcurrency: number): number {
  return Math.ceil(batchSize / innerConcurrency) * worstCaseRowSeconds();
}

/**
 * The most CreateSchedule calls a task can have in flight: the product of the MaxConcurrency of every Map around it
 * (absent or 0: 10,000 for a Distributed Map, 40 for an inline Map; no Map at all: 1).
 */
export function peakConcurrentCreates(maps: { distributed: boolean; maxConcurrency?: number }[]): number {
  return maps.reduce(
    (product, m) =>
      product *
      (m.maxConcurrency || (m.distributed ? stepFunctions.distributedMapDefaultConcurrency : stepFunctions.inlineMapMaxConcurrency)),
    1,
  );
}

/**
 * The fan-out's pacing: the share of the account's CreateSchedule quota it plans to use (the rest absorbs retries and
 * other callers). The policy pack's concurrency check defaults to it, and the launcher and size-window estimate the
 * fan-out's duration at `fanOutCreateRate`, so "launch by" and the launcher's missed-time cutoff agree.
 */
export const FANOUT_HEADROOM = 0.5;

/** CreateSchedule calls per second the fan-out is expected to sustain on a stack with this quota. */
export function fanOutCreateRate(createScheduleTps: number): number {
  return createScheduleTps * FANOUT_HEADROOM;
}
