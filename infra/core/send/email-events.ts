/**
 * What every send is tagged with and which SES events become CloudWatch metrics: the fan-out writes the tags, the
 * Sender publishes the events with these dimensions, the campaign report reads them back. Pure: no Pulumi, no SDK.
 * https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_MessageTag.html
 */
import { createHash } from "crypto";

/** SES message tag names and values: 1–256 of A-Z a-z 0-9 _ - (no dot, unlike campaign ids and schedule names). */
export const SES_TAG_VALUE = /^[A-Za-z0-9_-]{1,256}$/;

/** The EmailTags every send carries; `variant` only when its plan row has one. */
export const EMAIL_TAGS = { campaign: "campaign", step: "step", variant: "variant" } as const;

/** CloudWatch dimensions of the published events (message tags), with the value SES uses when a send lacks the tag. */
export const EVENT_DIMENSIONS = [
  { name: EMAIL_TAGS.campaign, defaultValue: "none" },
  { name: EMAIL_TAGS.step, defaultValue: "none" },
  { name: EMAIL_TAGS.variant, defaultValue: "no-variant" },
] as const;

/** The variant dimension's value for sends of rows without a variant. */
export const NO_VARIANT = "no-variant";

/**
 * The `campaign` tag of a campaign id. Ids are 0-9 a-z A-Z - _ . (schedule-group rules); a tag cannot hold a dot, so
 * an id with a dot becomes the id with each `.` as `_`, then `-` and the first 8 hex digits of the id's sha256
 * (`spring.2026` → `spring_2026-<8 hex>`): stable, and distinct from the id `spring_2026` itself.
 */
export function campaignTag(campaignId: string): string {
  if (SES_TAG_VALUE.test(campaignId)) return campaignId;
  const hash = createHash("sha256").update(campaignId, "utf8").digest("hex").slice(0, 8);
  return `${campaignId.replace(/\./g, "_")}-${hash}`;
}

/**
 * SES event types the configuration set publishes, the CloudWatch metric each becomes, its funnel count, and the
 * heading of its column in the report's funnel table (`column`; events without one are counted but not drawn). The one
 * source of the funnel's event names: the report's columns are built from this list.
 */
export const EMAIL_EVENTS = [
  { type: "SEND", metric: "Send", funnel: "sent", column: "sent" },
  { type: "DELIVERY", metric: "Delivery", funnel: "delivered", column: "delivered" },
  { type: "BOUNCE", metric: "Bounce", funnel: "bounced", column: "bounced" },
  { type: "COMPLAINT", metric: "Complaint", funnel: "complained", column: "complained" },
  { type: "REJECT", metric: "Reject", funnel: "rejected", column: "rejected" },
  { type: "RENDERING_FAILURE", metric: "Rendering Failure", funnel: "renderingFailed" },
  { type: "DELIVERY_DELAY", metric: "DeliveryDelay", funnel: "delayed" },
  { type: "OPEN", metric: "Open", funnel: "opened", column: "opens" },
  { type: "CLICK", metric: "Click", funnel: "clicked", column: "clicks" },
  { type: "SUBSCRIPTION", metric: "Subscription", funnel: "unsubscribed", column: "unsubscribed" },
] as const;

export type FunnelEvent = (typeof EMAIL_EVENTS)[number]["funnel"];

/** Where SES publishes event metrics. */
export const SES_METRICS_NAMESPACE = "AWS/SES";
