/**
 * Finding the bulk schedules that hold one recipient (launch-campaign --bulk): a recipient's send is then an entry of
 * a schedule named `bulk.<step>.…` (naming.ts bulkScheduleName), not a schedule of its own. Scheduler cannot search
 * Inputs, so the campaign's bulk schedules are listed (ListSchedules, NamePrefix `bulk.`) and read (GetSchedule),
 * at most MAX_BULK_SCHEDULES_READ of them, a few at once, within the command's deadline. `--schedule NAME` (the
 * plan line's schedule_name) reads that one only.
 */
import {
  GetScheduleCommand,
  GetScheduleCommandOutput,
  ListSchedulesCommand,
  SchedulerClient,
} from "@aws-sdk/client-scheduler";
import { campaignGroupName } from "../../../infra/core/plan/naming";
import { FindingsError } from "../../../infra/core/errors";
import { bulkRecipients } from "../planning/bulk-entries";
import { allPages, awsCall, Deadline } from "./call";

/** How many bulk schedules one search reads at most (50 recipients each: 100,000 recipient-steps). */
export const MAX_BULK_SCHEDULES_READ = 2000;
/** GetSchedule calls at once while searching. */
const READS_AT_ONCE = 8;

/** One entry of a recipient in a bulk schedule. */
export interface BulkHolding {
  name: string;
  step: number;
  /** The entry's position in the schedule's Input. */
  index: number;
  entries: number;
  schedule: GetScheduleCommandOutput;
}

const BULK_NAME = /^bulk\.([1-9]\d{0,5})\./;

/** The step of a bulk schedule's name, or undefined when it is not one. */
export const bulkStepOf = (name: string) => {
  const m = BULK_NAME.exec(name);
  return m ? Number(m[1]) : undefined;
};

/** Every entry of `recipientId` in the campaign's bulk schedules (or in `only`), any step. */
export async function findBulkHoldings(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; only?: string },
): Promise<BulkHolding[]> {
  const GroupName = campaignGroupName(o.campaignId);
  const names = o.only !== undefined ? [o.only] : await listBulkNames(d, scheduler, o.campaignId);
  const found: BulkHolding[] = [];
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const Name = names[next++];
      const schedule = await awsCall(
        d,
        `campaign ${o.campaignId}: GetSchedule ${Name} (looking for recipient ${o.recipientId})`,
        (opts) => scheduler.send(new GetScheduleCommand({ Name, GroupName }), opts),
        () => undefined, // sent (it deleted itself) since it was listed
      );
      const ids = schedule ? bulkRecipients(schedule.Target?.Input ?? "") : undefined;
      const step = bulkStepOf(Name);
      if (!ids || step === undefined) continue;
      ids.forEach(
        (id, index) =>
          id === o.recipientId && found.push({ name: Name, step, index, entries: ids.length, schedule: schedule! }),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, names.length) }, worker));
  return found.sort((a, b) => a.step - b.step || a.name.localeCompare(b.name));
}

async function listBulkNames(d: Deadline, scheduler: SchedulerClient, campaignId: string): Promise<string[]> {
  const GroupName = campaignGroupName(campaignId);
  const names: string[] = [];
  for await (const page of allPages(
    d,
    `campaign ${campaignId}: ListSchedules bulk.* in ${GroupName}`,
    (NextToken, opts) =>
      scheduler.send(new ListSchedulesCommand({ GroupName, NamePrefix: "bulk.", MaxResults: 100, NextToken }), opts),
    (p) => p.NextToken,
  )) {
    for (const s of page.Schedules ?? []) if (s.Name && bulkStepOf(s.Name) !== undefined) names.push(s.Name);
    if (names.length > MAX_BULK_SCHEDULES_READ)
      throw new FindingsError(
        `campaign ${campaignId}: more than ${MAX_BULK_SCHEDULES_READ} bulk schedules in ${GroupName}: too many to search; give --schedule NAME (the schedule_name of the recipient's line in plan.jsonl)`,
      );
  }
  return names;
}
