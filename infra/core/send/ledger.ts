/**
 * The occurrence ledger: one DynamoDB table (on demand, TTL) that the one sender, the journeys, the campaign commands
 * and redrive share, so that "whether and how often" a mail leaves is decided in one place.
 * - `occ#<schedule ARN>#<scheduled time>`: one occurrence of one schedule. The sender claims it with a conditional
 *   write before any SES call (a repeated invocation of a claimed occurrence sends nothing) and records each entry's
 *   outcome there.
 * - `campaign#<campaign tag>`: the campaign's state (absent = live), read by the sender before every SES call.
 * - `enr#<journey>#<subscriber>#<trigger id>`: one enrolment of a subscriber by one trigger.
 * Pure: key builders, names and shapes; no AWS SDK, no Pulumi.
 */

/** The table's one key attribute (a string) and its TTL attribute (epoch seconds). */
export const LEDGER_KEY = "pk";
export const LEDGER_TTL_ATTRIBUTE = "expires_at";

/** How long an occurrence or enrolment is kept after it: longer than any redrive of it is useful. */
export const LEDGER_TTL_DAYS = 14;

export const occurrenceKey = (scheduleArn: string, scheduledTime: string) => `occ#${scheduleArn}#${scheduledTime}`;
export const campaignStateKey = (campaignTag: string) => `campaign#${campaignTag}`;
export const enrolmentKey = (journey: string, subscriber: string, triggerId: string) =>
  `enr#${journey}#${subscriber}#${triggerId}`;

/** A campaign's state: `live` sends, `paused` holds every send (redrive re-sends them on resume), `cancelled` ends them. */
export const CAMPAIGN_STATES = ["live", "paused", "cancelled"] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];

/**
 * Each entry's one outcome: `sent` (SES accepted it), `not-sent` (SES or a check refused it: nothing left), `unknown`
 * (the call failed in a way that does not prove nothing was sent: it counts as sent), `skipped` (not tried).
 */
export const OUTCOMES = ["sent", "not-sent", "unknown", "skipped"] as const;
export type Outcome = (typeof OUTCOMES)[number];
/** `legal-hours`: a text whose Until (the end of its legal window) had passed when the sender reached it. */
export const SKIP_REASONS = ["opted-out", "capped", "cancelled", "paused", "legal-hours"] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** The occurrence item's attributes besides the key: when it was claimed, by which campaign, and each outcome. */
export const OCCURRENCE_ATTRIBUTES = {
  claimedAt: "claimed_at",
  /** The execution that claimed it: a claim found already made by the same execution is its own earlier write. */
  claimedBy: "claimed_by",
  campaign: "campaign",
  /** A map: recipient id → { outcome, reason }. */
  outcomes: "outcomes",
} as const;
export const CAMPAIGN_STATE_ATTRIBUTES = {
  state: "state",
  reason: "reason",
  updatedAt: "updated_at",
  /** Every state written, in order: a list of maps {state, at, reason?} (the pauses and resumes, with their times). */
  history: "history",
} as const;
/** The enrolment item's attributes besides the key: when, and by which invocation (a random token), it was claimed. */
export const ENROLMENT_ATTRIBUTES = { claimedAt: "claimed_at", claim: "claim" } as const;

/**
 * A dead letter of the sender: a pointer, never a request. Redrive rebuilds the request from the campaign's plan,
 * and re-sends only what the ledger says was not sent (an `unknown` one only when asked).
 */
export interface DeadLetterPointer {
  campaign: string;
  schedule_name: string;
  scheduled_time: string;
  recipients: string[];
  outcome: Exclude<Outcome, "sent">;
  reason: string;
}

/** The schedule name and group of a schedule ARN (`arn:…:schedule/<group>/<name>`), or undefined. */
export function scheduleOfArn(arn: string): { group: string; name: string } | undefined {
  const m = /^arn:[^:]+:scheduler:[^:]*:[0-9]*:schedule\/([^/]+)\/([^/]+)$/.exec(arn);
  return m ? { group: m[1], name: m[2] } : undefined;
}
