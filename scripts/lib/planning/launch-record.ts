/**
 * A launch's record: what the campaign report needs long after the plan (which holds addresses) has expired — the
 * plan summary, how many schedules each step and variant got, and the holdout's size. No addresses.
 */
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
