/**
 * A launch's record: what the campaign report needs long after the plan (which holds addresses) has expired — the
 * plan summary, how many schedules each step and variant got, and the holdout's size. No addresses. Redrive reads it
 * back for where the plan is, the campaign's quiet time and its missed-time policy.
 */
import { PLANS_PREFIX } from "../../../infra/core/plan/naming";
import {
  describeQuietTime,
  QUIET_POLICIES,
  QuietPolicy,
  QuietTime,
  WEEKDAY_NAMES,
} from "../../../infra/core/timing/quiet-time";
import { FindingsError } from "../../../infra/core/errors";
import { GRACE_MINUTES, MISSED_POLICIES, MissedPolicy } from "./missed";

export interface ScheduledCount {
  step: number;
  /** The plan rows' variant; null for rows without one. */
  variant: string | null;
  schedules: number;
}

export interface LaunchRecord {
  campaignId: string;
  planSha256: string;
  firstSend: string | null;
  lastSend: string | null;
  /** Where the plan went: `planKey` is its first (often only) object; `planKeys` every object, one execution each. */
  launch: { id: string; planKey: string; planKeys?: string[]; at: string };
  scheduled: ScheduledCount[];
  /** Recipients held out (not scheduled), as listed in holdout.csv; 0 without a holdout. */
  holdoutRecipients: number;
  /** The rest of the launcher's summary.json, as it was. */
  [more: string]: unknown;
}

/**
 * The record of one launch, from the plan's summary: its counts were kept while the plan was written, so neither the
 * plan (which may not be kept locally) nor holdout.csv is read again.
 */
export function buildLaunchRecord(
  summary: {
    campaignId: string;
    planSha256: string;
    firstSend: string | null;
    lastSend: string | null;
    scheduled: ScheduledCount[];
    heldOut: number;
  },
  launch: { id: string; planKeys: string[]; at: Date },
): LaunchRecord {
  const { scheduled, heldOut, ...rest } = summary;
  return {
    ...rest,
    launch: { id: launch.id, planKey: launch.planKeys[0], planKeys: launch.planKeys, at: launch.at.toISOString() },
    scheduled,
    holdoutRecipients: heldOut,
  };
}

/** A stored launch record read back; a FindingsError naming `where` when it is not one. */
export function parseLaunchRecord(text: string, where: string): LaunchRecord {
  let r: LaunchRecord;
  try {
    r = JSON.parse(text);
  } catch (e) {
    throw new FindingsError(`${where}: not a launch record (${(e as Error).message})`);
  }
  const ok =
    r &&
    typeof r.planSha256 === "string" &&
    typeof r.launch?.at === "string" &&
    Array.isArray(r.scheduled) &&
    r.scheduled.every(
      (c) =>
        Number.isInteger(c?.step) &&
        Number.isInteger(c?.schedules) &&
        (c.variant === null || typeof c.variant === "string"),
    );
  if (!ok)
    throw new FindingsError(
      `${where}: not a launch record (needs planSha256, launch.at, scheduled [{step, variant, schedules}])`,
    );
  return r;
}

/** The plan objects a launch record names, in order; a FindingsError when one is not under the campaign's plans. */
export function launchPlanKeys(r: LaunchRecord, where: string): string[] {
  const keys = Array.isArray(r.launch.planKeys) ? r.launch.planKeys : [r.launch.planKey];
  const prefix = `${PLANS_PREFIX}${r.campaignId}/`;
  for (const k of keys)
    if (typeof k !== "string" || !k.startsWith(prefix) || !k.endsWith(".jsonl"))
      throw new FindingsError(
        `${where}: plan key ${JSON.stringify(k)} is not a plan of the campaign (${prefix}….jsonl)`,
      );
  return keys;
}

/** describeQuietTime's words: `HH:MM-HH:MM`, `SAT SUN`, or both joined by `, `, then ` local`. */
const DAY = `(?:${WEEKDAY_NAMES.join("|")})`;
const QUIET_RULE = new RegExp(`^(?:(\\d\\d):(\\d\\d)-(\\d\\d):(\\d\\d))?(?:, )?(${DAY}(?: ${DAY})*)? local$`);
const DAY_MINUTES = 1_440;

/**
 * The campaign's quiet time as the launch record states it (the summary's `quiet`: its rule in words, as
 * describeQuietTime writes it, and the policy), null without quiet time. The words are read back only when writing
 * them again gives the same text, so a rule this reader does not know is refused, never half read.
 */
export function launchQuietTime(r: LaunchRecord, where: string): QuietTime | null {
  const q = r.quiet as { rule?: unknown; policy?: unknown } | null | undefined;
  if (q === null) return null;
  const problem = `${where}: the record's quiet time (quiet) is ${JSON.stringify(q)}; expected null or {rule, policy} as the launcher writes it`;
  if (typeof q !== "object" || typeof q.rule !== "string" || !QUIET_POLICIES.includes(q.policy as QuietPolicy))
    throw new FindingsError(problem);
  const m = QUIET_RULE.exec(q.rule);
  const clock = (h?: string, mm?: string) => Number(h) * 60 + Number(mm);
  const quiet: QuietTime | undefined = m
    ? {
        ...(m[1] === undefined ? {} : { hours: { start: clock(m[1], m[2]), end: clock(m[3], m[4]) } }),
        days: m[5] === undefined ? [] : m[5].split(" ").map((d) => (WEEKDAY_NAMES as readonly string[]).indexOf(d)),
        policy: q.policy as QuietPolicy,
      }
    : undefined;
  const h = quiet?.hours;
  const badHours = h !== undefined && (h.start >= DAY_MINUTES || h.end >= DAY_MINUTES || h.start === h.end);
  if (!quiet || badHours || (!h && !quiet.days.length) || describeQuietTime(quiet) !== q.rule)
    throw new FindingsError(problem);
  return quiet;
}

/** The campaign's missed-time policy, as its launch record states it. */
export interface LaunchMissed {
  policy: MissedPolicy;
  graceMinutes: number;
}

/**
 * The missed-time policy of the launch (the summary's `missed`: its policy and grace, as the launcher writes them);
 * null when the record states none — every record the launcher writes does, so what a send a pause held becomes is
 * then not guessed (redrive leaves those sends until --missed decides). A value the launcher does not write is refused.
 */
export function launchMissedPolicy(r: LaunchRecord, where: string): LaunchMissed | null {
  if (r.missed === undefined) return null;
  const m = r.missed as { policy?: unknown; graceMinutes?: unknown } | null;
  const grace = m?.graceMinutes;
  if (
    typeof m !== "object" ||
    m === null ||
    !(MISSED_POLICIES as readonly unknown[]).includes(m.policy) ||
    !Number.isInteger(grace) ||
    (grace as number) < GRACE_MINUTES.min ||
    (grace as number) > GRACE_MINUTES.max
  )
    throw new FindingsError(
      `${where}: the record's missed-time policy (missed) is ${JSON.stringify(m)}; expected {policy: ${MISSED_POLICIES.join("|")}, graceMinutes: ${GRACE_MINUTES.min}-${GRACE_MINUTES.max}} as the launcher writes it`,
    );
  return { policy: m.policy as MissedPolicy, graceMinutes: grace as number };
}
