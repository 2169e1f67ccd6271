/**
 * Guardrails: a campaign whose bounces or complaints cross a threshold over a sliding window is paused through the
 * one door (its `campaign#<tag>` state), and the account's own SES reputation pauses every campaign of the stack.
 * Built from CloudWatch alarms with metric math and an EventBridge rule on their state changes (infra/guardrails.ts;
 * why per-campaign alarms and not one Metrics Insights alarm: docs/operating.md, "Guardrails").
 * Pure: the config, the names, the alarms' definitions and the pause reasons; no Pulumi, no SDK.
 */
import { jsonObjectSetting, settingFailure } from "../config/json-setting";
import { SES_METRICS_NAMESPACE } from "./email-events";

export interface Guardrails {
  /** Bounces per send at or above which a campaign is paused (0.02 = 2%). */
  bounceRate: number;
  /** Complaints per send at or above which a campaign is paused (0.0008 = 0.08%). */
  complaintRate: number;
  /** Sends in the window below which a campaign's rates decide nothing. */
  minSends: number;
  /** The sliding window, as written (`1h`, `30m`). */
  window: string;
  /** The window in seconds: a whole number of the alarm's 5-minute periods. */
  windowSeconds: number;
}

/** The defaults of `sendtime:guardrails` (SES reviews an account at 5% bounces and 0.1% complaints). */
export const DEFAULT_GUARDRAILS: Guardrails = {
  bounceRate: 0.02,
  complaintRate: 0.0008,
  minSends: 200,
  window: "1h",
  windowSeconds: 3600,
};

/** The campaign alarm's period: it is evaluated every 5 minutes, whatever the window. */
export const ALARM_PERIOD_SECONDS = 300;

/**
 * The window: 5 minutes to 24 hours in whole 5 minutes (the alarm's period, ALARM_PERIOD_SECONDS; CloudWatch allows
 * a period under one hour at most 86,400 s of evaluation periods).
 */
const WINDOW = /^([1-9][0-9]*)(m|h)$/;
const MIN_WINDOW_SECONDS = 300;
const MAX_WINDOW_SECONDS = 86_400;

const KEY = "sendtime:guardrails";
const GUARDRAIL_KEYS = ["bounceRate", "complaintRate", "minSends", "window"];
const ALLOWED = `JSON {"bounceRate": R, "complaintRate": R, "minSends": N, "window": W} (each optional; R a fraction above 0 and below 1, N a whole number from 1 to 1000000, W 5m to 24h in whole 5 minutes such as "1h" or "30m"), or none`;

/**
 * `sendtime:guardrails`: absent → the defaults; `none` → no guardrails; else a JSON object whose keys override the
 * defaults. Anything else is one line naming the key, the value and what is allowed.
 */
export function parseGuardrails(raw: string | undefined): Guardrails | undefined {
  if (raw === undefined || raw.trim() === "") return DEFAULT_GUARDRAILS;
  if (raw.trim() === "none") return undefined;
  const fail = settingFailure(KEY, raw, ALLOWED);
  const o = jsonObjectSetting(raw, GUARDRAIL_KEYS, fail);
  const g = { ...DEFAULT_GUARDRAILS };
  for (const k of ["bounceRate", "complaintRate"] as const) {
    if (o[k] === undefined) continue;
    if (typeof o[k] !== "number" || !(o[k] > 0 && o[k] < 1)) fail(`${k} must be a fraction above 0 and below 1`);
    g[k] = o[k] as number;
  }
  if (o.minSends !== undefined) {
    if (!Number.isInteger(o.minSends) || (o.minSends as number) < 1 || (o.minSends as number) > 1_000_000)
      fail("minSends must be a whole number from 1 to 1000000");
    g.minSends = o.minSends as number;
  }
  if (o.window !== undefined) {
    const m = typeof o.window === "string" ? WINDOW.exec(o.window) : null;
    const seconds = m ? Number(m[1]) * (m[2] === "h" ? 3600 : 60) : NaN;
    if (!(seconds >= MIN_WINDOW_SECONDS && seconds <= MAX_WINDOW_SECONDS)) fail("window must be 5m to 24h");
    if (seconds % ALARM_PERIOD_SECONDS !== 0) fail("window must be a whole number of 5 minutes");
    g.window = o.window as string;
    g.windowSeconds = seconds;
  }
  return g;
}

/** What a guardrail watches: a rate of SES events per send. */
export const GUARDRAIL_KINDS = [
  { kind: "bounce", metric: "Bounce", reputation: "Reputation.BounceRate", rate: "bounceRate" },
  { kind: "complaint", metric: "Complaint", reputation: "Reputation.ComplaintRate", rate: "complaintRate" },
] as const;
export type GuardrailKind = (typeof GUARDRAIL_KINDS)[number]["kind"];

/** The dimension of the guardrails' own event metrics: the `campaign` tag alone (one metric per campaign and event). */
export const GUARDRAIL_DIMENSION = "campaign";
/** The SES events the guardrails' event destination publishes. */
export const GUARDRAIL_EVENTS = ["SEND", "BOUNCE", "COMPLAINT"] as const;

/** Every guardrail alarm's name starts so: the EventBridge rule matches it, and nothing else. */
export const guardrailAlarmPrefix = (stack: string) => `sendtime-${stack}-guardrail-`;
/** A campaign's alarm: `<prefix>campaign-<kind>-<campaign tag>` (a tag has no dot; it may hold `-`). */
export const campaignAlarmName = (stack: string, kind: GuardrailKind, tag: string) =>
  campaignAlarmNameUnder(guardrailAlarmPrefix(stack), kind, tag);
/** The same name from the prefix (the stack output guardrailAlarmPrefix), for the CLIs that know no stack name. */
export const campaignAlarmNameUnder = (prefix: string, kind: GuardrailKind, tag: string) =>
  `${prefix}campaign-${kind}-${tag}`;
/**
 * The stack's schedule group of alarm deletions: one one-time schedule per launched campaign, named by its tag, that
 * deletes its two alarms once it is over (the arm machine puts it; cancel-campaign deletes it with the alarms).
 */
export const guardrailCleanupGroupUnder = (prefix: string) => `${prefix}cleanup`;
/** The Scheduler actions the arm machine needs there: one-time schedules that delete alarms, never a send. */
export const GUARDRAIL_CLEANUP_ACTIONS = ["scheduler:CreateSchedule", "scheduler:UpdateSchedule"] as const;
/** The schedules of a stack's clean-up group (`schedule/sendtime-<stack>-guardrail-cleanup/*`), for the policy pack. */
export const isGuardrailCleanupSchedulesArn = (resource: string) =>
  /^arn:aws[a-z-]*:scheduler:[a-z0-9-]+:\d{12}:schedule\/sendtime-[A-Za-z0-9_.-]+-guardrail-cleanup\/[^/]+$/.test(
    resource,
  );
/** The account's reputation alarm, one per kind. */
export const accountAlarmName = (stack: string, kind: GuardrailKind) => `${guardrailAlarmPrefix(stack)}account-${kind}`;

/**
 * The metric math of a campaign's alarm, from the metric ids `sends` and `events` (each a Sum per 5-minute period),
 * with CloudWatch's documented functions only (docs/operating.md, "Guardrails"):
 * - `inwindow`: 1 for the periods within the window ending at the latest period (EPOCH gives each period's timestamp,
 *   MAX of it the latest), 0 before: CloudWatch retrieves more periods than the evaluation periods, and the mask keeps
 *   the sums to the window whatever it retrieved;
 * - `wsends`, `wevents`: the window's sums (SUM of one series is a scalar; TIME_SERIES makes it a series again);
 * - `rate`: events per send when the window holds at least minSends sends, else 0 (no decision on a handful).
 * FILL makes a period without any event a 0 rather than no value.
 */
export function campaignRateExpressions(g: Guardrails): { Id: string; Expression: string }[] {
  const windowSum = (id: string) => `TIME_SERIES(SUM(IF(inwindow, FILL(${id}, 0), 0)))`;
  return [
    { Id: "inwindow", Expression: `EPOCH(sends) > MAX(EPOCH(sends)) - ${g.windowSeconds}` },
    { Id: "wsends", Expression: windowSum("sends") },
    { Id: "wevents", Expression: windowSum("events") },
    { Id: "rate", Expression: campaignRateExpression(g) },
  ];
}

/** The expression the alarm watches (id `rate`). */
export const campaignRateExpression = (g: Guardrails) => `IF(wsends >= ${g.minSends}, wevents / wsends, 0)`;

export interface CampaignAlarmRequest {
  AlarmName: string;
  AlarmDescription: string;
  Metrics: Record<string, unknown>[];
  Threshold: number;
  ComparisonOperator: "GreaterThanOrEqualToThreshold";
  EvaluationPeriods: number;
  DatapointsToAlarm: 1;
  TreatMissingData: "notBreaching";
  AlarmActions: string[];
}

/**
 * A campaign's PutMetricAlarm request for one kind: 5-minute periods, as many evaluation periods as the window holds
 * (so CloudWatch retrieves at least the window), one datapoint to alarm: every value of `rate` is the window's rate at
 * the latest period, and the first evaluation whose window holds the crossing alarms. `tag` may be a JSONata
 * placeholder (the arm state machine fills it in).
 */
export function campaignAlarmRequest(
  stack: string,
  g: Guardrails,
  kind: GuardrailKind,
  tag: string,
  topicArn: string,
): CampaignAlarmRequest {
  const k = GUARDRAIL_KINDS.find((x) => x.kind === kind)!;
  const stat = (id: string, metric: string) => ({
    Id: id,
    MetricStat: {
      Metric: {
        Namespace: SES_METRICS_NAMESPACE,
        MetricName: metric,
        Dimensions: [{ Name: GUARDRAIL_DIMENSION, Value: tag }],
      },
      Period: ALARM_PERIOD_SECONDS,
      Stat: "Sum",
    },
    ReturnData: false,
  });
  const expressions = campaignRateExpressions(g).map((e) =>
    e.Id === "rate" ? { ...e, Label: `${kind} rate`, ReturnData: true } : { ...e, ReturnData: false },
  );
  return {
    AlarmName: campaignAlarmName(stack, kind, tag),
    AlarmDescription: `sendtime guardrail: pauses the campaign when its ${kind} rate reaches ${percent(g[k.rate])} over ${g.window} (at least ${g.minSends} sends)`,
    Metrics: [stat("sends", "Send"), stat("events", k.metric), ...expressions],
    Threshold: g[k.rate],
    ComparisonOperator: "GreaterThanOrEqualToThreshold",
    EvaluationPeriods: g.windowSeconds / ALARM_PERIOD_SECONDS,
    DatapointsToAlarm: 1,
    TreatMissingData: "notBreaching",
    AlarmActions: [topicArn],
  };
}

/** The reason a guardrail's pause records for a campaign's own alarm. */
export const campaignPauseReason = (g: Guardrails, kind: GuardrailKind) => {
  const k = GUARDRAIL_KINDS.find((x) => x.kind === kind)!;
  return `guardrail: ${kind} rate at or above ${percent(g[k.rate])} over ${g.window} (at least ${g.minSends} sends)`;
};

/** The reason recorded for every campaign when the account's reputation alarm fires. */
export const accountPauseReason = (g: Guardrails, kind: GuardrailKind) => {
  const k = GUARDRAIL_KINDS.find((x) => x.kind === kind)!;
  return `guardrail: the account's SES ${k.reputation} at or above ${percent(g[k.rate])}`;
};

/** Reasons recorded by a guardrail start so (campaign-status, list-campaigns and the report tell them apart). */
export const GUARDRAIL_REASON_PREFIX = "guardrail: ";

/** 0.0008 → "0.08%", without float noise. */
export function percent(fraction: number): string {
  return `${Number((fraction * 100).toPrecision(6))}%`;
}
