/**
 * A launch's record: what the campaign report needs long after the plan (which holds addresses) has expired — the
 * plan summary, how many schedules each step and variant got, and the holdout's size. No addresses.
 */
import * as fs from "fs";
import * as readline from "readline";
import { parse } from "csv-parse";
import { parsePlanRow } from "../../../infra/plan-row";

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
  launch: { id: string; planKey: string; at: string };
  scheduled: ScheduledCount[];
  /** Recipients held out (not scheduled), from holdout.csv next to the plan; 0 without one. */
  holdoutRecipients: number;
  /** The rest of the launcher's summary.json, as it was. */
  [more: string]: unknown;
}

/** Schedules per step and variant, counted from plan.jsonl (streamed; one JSON.parse per line). */
export async function countScheduled(planFile: string): Promise<ScheduledCount[]> {
  const counts = new Map<string, ScheduledCount>();
  const lines = readline.createInterface({ input: fs.createReadStream(planFile, "utf8"), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === "") continue;
    const row = parsePlanRow(line);
    const variant = row.variant ?? null;
    const key = `${row.step}\u0000${variant ?? ""}`;
    const c = counts.get(key);
    if (c) c.schedules++;
    else counts.set(key, { step: row.step, variant, schedules: 1 });
  }
  return [...counts.values()].sort((a, b) => a.step - b.step || (a.variant ?? "").localeCompare(b.variant ?? ""));
}

/** Records in a CSV with a header row (0 when the file does not exist). */
export async function countCsvRecords(file: string): Promise<number> {
  if (!fs.existsSync(file)) return 0;
  let n = 0;
  for await (const _ of fs.createReadStream(file).pipe(parse({ from_line: 2, relax_column_count: true }))) n++;
  return n;
}

export async function buildLaunchRecord(
  summary: { campaignId: string; planSha256: string; firstSend: string | null; lastSend: string | null },
  files: { plan: string; holdout: string },
  launch: { id: string; planKey: string; at: Date },
): Promise<LaunchRecord> {
  return {
    ...summary,
    launch: { id: launch.id, planKey: launch.planKey, at: launch.at.toISOString() },
    scheduled: await countScheduled(files.plan),
    holdoutRecipients: await countCsvRecords(files.holdout),
  };
}
