/**
 * The CreateSchedule request of one bulk plan line, built in TypeScript: the same request the fan-out builds in ASL
 * (infra/state-machines/fanout-definition.ts) for a bulk line, its target the one sender with the line's input
 * (sender-input.ts), and the checks a bulk line must pass. Tools that rewrite one schedule (remove or reschedule one
 * recipient) build the new request here. Pure: no AWS SDK, no Pulumi.
 */
import type { BulkPlanRow } from "./bulk-plan-row";
import { scheduler, ses } from "./quotas";
import { UNSUBSCRIBE_TEMPLATE_KEY, unsubscribeAddress, unsubscribeHeaders } from "../consent/unsubscribe";
import { CreateScheduleRequest, SchedulerTargetParameters, senderScheduleRequest } from "./schedule-request";
import { SendingFields, senderInput } from "../send/sender-input";

/** What a bulk schedule's target needs beyond every schedule's: the sender's ARN. */
export type BulkTarget = Omit<SchedulerTargetParameters, "listManagement">;

/** The CreateSchedule request for bulk line `row` in campaign `campaignId`'s group (one-time: at() only). */
export function bulkScheduleRequest(
  t: BulkTarget,
  campaignId: string,
  windowMinutes: number,
  row: BulkPlanRow,
): CreateScheduleRequest {
  return senderScheduleRequest(t, campaignId, windowMinutes, row, senderInput(t, campaignId, row));
}

/**
 * Why one more entry, to `address` (trimmed and case-folded: unsubscribeAddress), cannot join a bulk line of `entries`
 * entries to `addresses`, or undefined: a line holds at most ses.maxBulkEntries entries, each address once. The
 * planner asks before it adds each entry (bulk-chunks.ts), bulkRowProblem for each entry of a line it is given.
 */
export function bulkEntryRefusal(
  entries: number,
  addresses: ReadonlySet<string>,
  address: string,
): "full" | "repeated" | undefined {
  if (entries >= ses.maxBulkEntries) return "full";
  return addresses.has(address) ? "repeated" : undefined;
}

const PRINTABLE = /^[\x20-\x7e]*$/;
const HEADER_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

/**
 * Why a bulk line cannot be sent as one SendBulkEmail request from one schedule, or undefined: 1 to
 * ses.maxBulkEntries entries, each address once, each entry's template data within SES's limit, headers as SES's
 * MessageHeader allows, and the sender's input (the schedule's Target.Input) within scheduler.maxTargetInputBytes.
 * `t` supplies the sender fields of the stack; the size check uses them.
 */
export function bulkRowProblem(row: BulkPlanRow, t: SendingFields, campaignId: string): string | undefined {
  const n = row.entries?.length ?? 0;
  if (n < 1 || n > ses.maxBulkEntries) return `has ${n} entries; a bulk schedule holds 1 to ${ses.maxBulkEntries}`;
  if (!row.schedule_expression.startsWith("at("))
    return `is ${row.schedule_expression}; bulk schedules are one-time (at())`;
  const seen = new Set<string>();
  for (const [i, e] of row.entries.entries()) {
    const where = `entry ${i + 1} (${e.recipient_id})`;
    const address = unsubscribeAddress(e.email);
    if (bulkEntryRefusal(i, seen, address) === "repeated")
      return `${where} repeats an address of an earlier entry; one schedule sends each address once`;
    seen.add(address);
    const data = JSON.stringify(e.template_data);
    if (data.length > ses.maxTemplateDataChars)
      return `${where} has ${data.length} characters of template data, over SES's ${ses.maxTemplateDataChars}`;
    const link = e.template_data?.[UNSUBSCRIBE_TEMPLATE_KEY];
    if (typeof link !== "string" || link === "")
      return `${where} has no ${UNSUBSCRIBE_TEMPLATE_KEY} in its template data; its List-Unsubscribe header is made from it`;
    for (const h of unsubscribeHeaders(link)) {
      const { maxNameChars, maxValueChars, maxTotalChars } = ses.header;
      if (!HEADER_NAME.test(h.Name) || h.Name.length > maxNameChars)
        return `${where} header name ${JSON.stringify(h.Name)} is not 1–${maxNameChars} printable ASCII characters without ":"`;
      if (!PRINTABLE.test(h.Value) || h.Value.length > maxValueChars || h.Name.length + h.Value.length > maxTotalChars)
        return `${where} header ${h.Name} value is not printable ASCII of at most ${maxValueChars} characters (${maxTotalChars} with the name)`;
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(senderInput(t, campaignId, row)), "utf8");
  if (bytes > scheduler.maxTargetInputBytes)
    return `makes a schedule input of ${bytes} bytes, over Scheduler's ${scheduler.maxTargetInputBytes}: put fewer entries in it`;
  return undefined;
}
