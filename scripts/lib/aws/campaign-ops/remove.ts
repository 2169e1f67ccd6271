/**
 * Removing one recipient's send: its own schedule deleted, or its entry taken out of a bulk schedule (the schedule
 * deleted when it was the only one). Not once it may have fired.
 */
import {
  DeleteScheduleCommand,
  SchedulerClient,
  UpdateScheduleCommand,
  UpdateScheduleCommandInput,
} from "@aws-sdk/client-scheduler";
import { campaignGroupName, scheduleName } from "../../../../infra/core/plan/naming";
import { splitBulkEntry } from "../../planning/bulk-entries";
import { awsCall, Deadline } from "../call";
import { bulkHolding, entryWhich, withInput } from "./find-send";
import { refuseIfMayHaveFired } from "./keep-promises";

export async function removeSchedule(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; step: number; now: number; bulkSchedule?: string },
): Promise<RemoveReport> {
  const Name = scheduleName(o.recipientId, o.step);
  const GroupName = campaignGroupName(o.campaignId);
  const deleted =
    o.bulkSchedule === undefined &&
    (await awsCall(
      d,
      `campaign ${o.campaignId}: DeleteSchedule ${Name} (recipient ${o.recipientId}, step ${o.step})`,
      (opts) => scheduler.send(new DeleteScheduleCommand({ Name, GroupName }), opts).then(() => true),
      () => false,
    ));
  if (deleted) return { campaign: o.campaignId, schedule: Name, group: GroupName, removed: true };
  return removeBulkEntry(d, scheduler, o);
}

export interface RemoveReport {
  campaign: string;
  schedule: string;
  group: string;
  removed: true;
  /** When the send was an entry of a bulk schedule (`schedule`): the entries it still holds (0: it was deleted). */
  bulk?: { entriesLeft: number };
}

/**
 * Removes one entry of a bulk schedule: UpdateSchedule with every other field and every other entry's bytes as they
 * were (bulk-entries.ts splitBulkEntry), or DeleteSchedule when it was the only one. Not once the schedule may have
 * fired (promises.ts mayHaveFired): an update does not stop an invocation under way.
 */
async function removeBulkEntry(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; step: number; now: number; bulkSchedule?: string },
): Promise<RemoveReport> {
  const { holding: h } = await bulkHolding(d, scheduler, o);
  const GroupName = campaignGroupName(o.campaignId);
  const which = `campaign ${o.campaignId}: ${entryWhich(o, h)}`;
  refuseIfMayHaveFired(h.schedule, which, o.now);
  if (h.entries === 1)
    await awsCall(d, `${which}: DeleteSchedule ${h.name}`, (opts) =>
      scheduler.send(new DeleteScheduleCommand({ Name: h.name, GroupName }), opts),
    );
  else {
    const { rest } = splitBulkEntry(h.schedule.Target!.Input!, h.index);
    await awsCall(d, `${which}: UpdateSchedule ${h.name}`, (opts) =>
      scheduler.send(
        new UpdateScheduleCommand(withInput(h.schedule, rest) as unknown as UpdateScheduleCommandInput),
        opts,
      ),
    );
  }
  return {
    campaign: o.campaignId,
    schedule: h.name,
    group: GroupName,
    removed: true,
    bulk: { entriesLeft: h.entries - 1 },
  };
}
