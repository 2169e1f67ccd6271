/**
 * Finding one recipient-step's send, for move and remove: its own schedule (`<id>-<step>`), or its entry of a bulk
 * schedule; and the fields of a schedule that a rewrite carries over.
 */
import { GetScheduleCommand, GetScheduleCommandOutput, SchedulerClient } from "@aws-sdk/client-scheduler";
import { campaignGroupName, scheduleName } from "../../../../infra/core/plan/naming";
import { FindingsError } from "../../../../infra/core/errors";
import { awsCall, Deadline } from "../call";
import { BulkHolding, findBulkHoldings } from "../bulk-entries";

/** UpdateSchedule replaces the whole schedule: carry over every field GetSchedule returned except the read-only ones. */
const READ_ONLY_SCHEDULE_FIELDS = new Set(["$metadata", "Arn", "CreationDate", "LastModificationDate"]);

/**
 * The recipient's entry of `step` in a bulk schedule, and the send times of its other steps held in bulk schedules.
 * Not found: the same finding as a missing schedule of its own, saying where else it looked.
 */
export async function bulkHolding(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; step: number; bulkSchedule?: string },
) {
  const holdings = await findBulkHoldings(d, scheduler, {
    campaignId: o.campaignId,
    recipientId: o.recipientId,
    only: o.bulkSchedule,
  });
  const mine = holdings.filter((h) => h.step === o.step);
  const where =
    o.bulkSchedule === undefined
      ? "nor an entry of any bulk schedule of the campaign"
      : `nor an entry of bulk schedule ${o.bulkSchedule}`;
  if (!mine.length) throw new FindingsError(`${notFound(o.campaignId, o.recipientId, o.step)} (${where})`);
  if (mine.length > 1)
    throw new FindingsError(
      `campaign ${o.campaignId}: recipient ${o.recipientId} step ${o.step} is an entry of ${mine.length} schedules (${mine.map((h) => `${h.name} entry ${h.index + 1}`).join(", ")}): not changed; remove the extra ones first`,
    );
  return { holding: mine[0], others: holdings.filter((h) => h.step !== o.step) };
}

export const entryWhich = (o: { recipientId: string; step: number }, h: BulkHolding) =>
  `recipient ${o.recipientId} step ${o.step} (entry ${h.index + 1} of ${h.entries} of bulk schedule ${h.name})`;

/** The fields of a schedule GetSchedule returned that UpdateSchedule and CreateSchedule take. */
export function writableFields(current: GetScheduleCommandOutput): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(current)) if (!READ_ONLY_SCHEDULE_FIELDS.has(k) && v !== undefined) input[k] = v;
  return input;
}

/** The fields of a schedule GetSchedule returned that UpdateSchedule and CreateSchedule take, with a new Input. */
export function withInput(current: GetScheduleCommandOutput, Input: string): Record<string, unknown> {
  return { ...writableFields(current), Target: { ...current.Target, Input } };
}

/** The recipient-step's own schedule; missing: a finding, or undefined with `orNone` (it may be a bulk entry). */
export async function getSchedule(
  d: Deadline,
  scheduler: SchedulerClient,
  campaignId: string,
  recipientId: string,
  step: number,
  orNone = false,
): Promise<GetScheduleCommandOutput | undefined> {
  const Name = scheduleName(recipientId, step);
  return awsCall(
    d,
    `campaign ${campaignId}: GetSchedule ${Name} (recipient ${recipientId}, step ${step})`,
    (opts) => scheduler.send(new GetScheduleCommand({ Name, GroupName: campaignGroupName(campaignId) }), opts),
    () => {
      if (orNone) return undefined;
      throw new FindingsError(notFound(campaignId, recipientId, step));
    },
  );
}

export const notFound = (campaignId: string, recipientId: string, step: number) =>
  `campaign ${campaignId}: no schedule "${scheduleName(recipientId, step)}" (recipient ${recipientId}, step ${step}) in ${campaignGroupName(campaignId)}: already sent, removed, or never planned`;
