/**
 * SES's own opt-outs into the opt-out table: the SUBSCRIPTION events the stack's configuration set publishes to
 * EventBridge (a rule on the default bus invokes this function, asynchronously). SES applies a contact-list opt-out
 * only to sends with ListManagementOptions, and SendBulkEmail has none; the sender reads the opt-out table before
 * every SendBulkEmail, so an opt-out made through SES's own link (a plain send of the stack) is recorded there too.
 *
 * Deployed as a second entry point of the unsubscribe function's bundle (infra/handlers/unsubscribe.ts re-exports it),
 * as its own function with its own role (UpdateItem on the table, logs, its dead-letter queue).
 * - An opt-out of the stack's topic, or an unsubscribe from every topic: recorded (recordOptOut, idempotent; the
 *   first opt-out's time is kept), at SES's time of the change, under the bare address (`"Ann" <ann@example.com>`
 *   is `ann@example.com`) trimmed and lower-cased, as the planner and the sender look it up.
 * - Anything else (an opt-in, another topic, another list, another event): nothing recorded, one log line. A
 *   re-subscribe deletes nothing: sendtime never takes an opt-out back.
 * - A subscription event of the stack's list that does not read as SES documents it (an `unsubscribeAll` that is not
 *   a boolean, a destination that is not one address), or a table that fails: thrown,
 *   so that Lambda retries the event and then sends it to the on-failure destination (the dead-letter queue, with an
 *   alarm): an opt-out is never dropped silently.
 * Logs hold no address. Configuration: SENDTIME_SES_OPT_OUTS = {"contactListName", "topicName", "optOutTable"}.
 */
import { subscriptionDecision } from "../core/consent/ses-subscription";
import { recordOptOut } from "./opt-out-table";
import { InputError } from "../core/errors";
import { settingsFromEnv } from "./settings";

/**
 * An SES SUBSCRIPTION event for the stack's contact list that cannot be read as SES documents it (no single recipient,
 * an unknown status): the handler throws it so that the event is retried and then kept in the dead-letter queue,
 * where the alarm shows it; nothing is recorded from it.
 */
export class SubscriptionEventError extends InputError {}

export const SES_OPT_OUTS_ENV = "SENDTIME_SES_OPT_OUTS";

export interface SesOptOutSettings {
  contactListName: string;
  topicName: string;
  optOutTable: string;
}

export async function sesOptOutHandler(event: unknown): Promise<void> {
  const settings = loadSettings(process.env);
  let decision;
  try {
    decision = subscriptionDecision(
      event,
      settings,
      (why) => new SubscriptionEventError(`SES subscription event: ${why}`),
    );
  } catch (e) {
    log(console.error, { outcome: "malformed", error: (e as Error).message });
    throw e;
  }
  if (!decision.record) return log(console.log, { outcome: decision.outcome });
  const region = process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || "";
  try {
    await recordOptOut(
      { tableName: settings.optOutTable, region, env: process.env },
      decision.address,
      decision.at ?? new Date(),
    );
  } catch (e) {
    log(console.error, { outcome: "table-error", error: (e as Error)?.name ?? "Error" });
    throw e;
  }
  log(console.log, {
    outcome: "recorded",
    optOut: decision.optOut,
    ...(decision.source ? { source: decision.source } : {}),
  });
}

function log(to: (line: string) => void, line: Record<string, unknown>): void {
  to(JSON.stringify(line));
}

function loadSettings(env: NodeJS.ProcessEnv): SesOptOutSettings {
  return settingsFromEnv<SesOptOutSettings>(env, SES_OPT_OUTS_ENV, ["contactListName", "topicName", "optOutTable"]);
}
