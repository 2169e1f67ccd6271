/**
 * What an SES SUBSCRIPTION event means for the opt-out table: SES publishes one when a recipient changes their
 * preferences through SES's own list management (its List-Unsubscribe header or its subscription page, for sends
 * with ListManagementOptions). Pure: no AWS, no I/O.
 *
 * The event, as EventBridge delivers it from a configuration set's event destination (default bus only,
 * https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_EventBridgeDestination.html): `source` "aws.ses",
 * `detail-type` "Email Subscribed" (https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-ses.html), `detail`
 * the event record (https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-contents.html): `mail`
 * (its `destination`, the recipients) and `subscription` {contactList, timestamp, source, newTopicPreferences,
 * oldTopicPreferences}, each preferences object {unsubscribeAll, topicSubscriptionStatus: [{topicName,
 * subscriptionStatus: "OptIn" | "OptOut"}], topicDefaultSubscriptionStatus}; the guide's example:
 * https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-examples.html#event-publishing-retrieving-sns-subscription
 *
 * Only the new preferences count, and only an opt-out is recorded: sendtime never takes an opt-out back, so a
 * re-subscribe (OptIn) leaves the table as it is.
 */
import { isEmailAddress, mailboxAddress } from "../send/email";
import { unsubscribeAddress } from "./unsubscribe";

/** The Lambda handler setting of the unsubscribe bundle's second entry point (infra/handlers/ses-opt-outs.ts). */
export const SES_OPT_OUT_HANDLER_NAME = "index.sesOptOutHandler";

/** EventBridge's detail-type for SES's SUBSCRIPTION events. */
export const SUBSCRIPTION_DETAIL_TYPE = "Email Subscribed";
export const SES_EVENT_SOURCE = "aws.ses";

/** The rule on the default bus: SES's subscription events of `contactListName` only. */
export function subscriptionEventPattern(contactListName: string) {
  return {
    source: [SES_EVENT_SOURCE],
    "detail-type": [SUBSCRIPTION_DETAIL_TYPE],
    detail: { subscription: { contactList: [contactListName] } },
  };
}

/** How an address is opted out of a contact list: of the stack's topic, or of every topic (UnsubscribeAll). */
export type OptOutKind = "topic" | "all";

export type SubscriptionDecision =
  /** Record `address` (as the opt-out table keys it) as opted out of the topic or of every topic, at `at`. */
  | { record: true; address: string; optOut: OptOutKind; at?: Date; source?: string }
  /** Nothing to record; `outcome` says why (for the log). */
  | { record: false; outcome: "not-a-subscription-event" | "other-contact-list" | "not-an-opt-out" };

/**
 * The decision for one EventBridge event; throws a message (the caller's SubscriptionEventError) when the event is a
 * subscription event of `list` that does not read as SES documents it.
 */
export function subscriptionDecision(
  event: unknown,
  list: { contactListName: string; topicName: string },
  malformed: (why: string) => Error,
): SubscriptionDecision {
  const e = event as { source?: unknown; "detail-type"?: unknown; detail?: any } | undefined;
  if (e?.source !== SES_EVENT_SOURCE || e?.["detail-type"] !== SUBSCRIPTION_DETAIL_TYPE || !isObject(e.detail))
    return { record: false, outcome: "not-a-subscription-event" };
  const s = e.detail.subscription;
  if (!isObject(s)) throw malformed("no subscription object");
  if (s.contactList !== list.contactListName) return { record: false, outcome: "other-contact-list" };
  const prefs = s.newTopicPreferences;
  if (!isObject(prefs)) throw malformed("no newTopicPreferences");
  const all = prefs.unsubscribeAll;
  // A value SES does not document is not read as "false": the event is kept (dead-lettered, alarmed) instead.
  if (all !== undefined && typeof all !== "boolean")
    throw malformed(`newTopicPreferences.unsubscribeAll is ${described(all)}: expected true or false`);
  const optOut = all === true ? "all" : topicStatus(prefs, list.topicName, malformed);
  if (optOut !== "all" && optOut !== "topic") return { record: false, outcome: "not-an-opt-out" };
  const to = e.detail.mail?.destination;
  // sendtime's sends have one recipient each: with none or several, whose preference changed is not known.
  if (!Array.isArray(to) || to.length !== 1 || typeof to[0] !== "string" || to[0].trim() === "")
    throw malformed(`mail.destination is ${Array.isArray(to) ? `${to.length} addresses` : "missing"}: expected one`);
  // Keyed as the planner and the sender look an address up: the bare address, trimmed and lower-cased.
  const address = mailboxAddress(to[0]);
  if (!isEmailAddress(address))
    throw malformed("mail.destination is not an address (expected `address` or `Name <address>`)");
  const at =
    typeof s.timestamp === "string" && !Number.isNaN(Date.parse(s.timestamp)) ? new Date(s.timestamp) : undefined;
  return {
    record: true,
    address: unsubscribeAddress(address),
    optOut,
    at,
    source: typeof s.source === "string" ? s.source : undefined,
  };
}

/** "topic" when the new preferences opt out of `topic` (its own status, else its default), undefined otherwise. */
function topicStatus(prefs: any, topic: string, malformed: (why: string) => Error): "topic" | undefined {
  const pick = (list: unknown, field: string) => {
    if (list === undefined) return undefined;
    if (!Array.isArray(list)) throw malformed(`${field} is not a list`);
    const found = list.find((t) => isObject(t) && t.topicName === topic);
    if (found && found.subscriptionStatus !== "OptIn" && found.subscriptionStatus !== "OptOut")
      throw malformed(
        `${field} of topic ${topic} is ${JSON.stringify(found.subscriptionStatus)}: expected OptIn or OptOut`,
      );
    return found?.subscriptionStatus as "OptIn" | "OptOut" | undefined;
  };
  const status =
    pick(prefs.topicSubscriptionStatus, "topicSubscriptionStatus") ??
    pick(prefs.topicDefaultSubscriptionStatus, "topicDefaultSubscriptionStatus");
  return status === "OptOut" ? "topic" : undefined;
}

/** A value for a message that may be logged: never a string's text beyond a short one (it could be an address). */
function described(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "string") return v.length <= 10 && !v.includes("@") ? `the string ${JSON.stringify(v)}` : "a string";
  return typeof v === "object" ? (Array.isArray(v) ? "a list" : "an object") : `${typeof v} ${String(v)}`;
}

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
