/**
 * The frequency cap across campaigns and journeys, as the one sender (sender-definition.ts) admits each entry: at most
 * `max` sends per address per UTC period. Pure: JSONata argument builders for the cap table's DynamoDB calls.
 *
 * Admit: one conditional UpdateItem on `<address>#<period>` (the address lower-cased, the period of the scheduled
 * time, UTC) adds 1 to `sends` and the occurrence (`<schedule ARN>@<scheduled time>`) to `schedules` only while
 * `sends < max` and the occurrence is not already in `schedules`. Refused: GetItem tells a repeat (the occurrence is
 * there) from the cap. Release: an entry that ends not sent gives its admission back; one whose outcome is unknown
 * keeps it (it may have been delivered, so it counts).
 */
export const CAP_PERIODS = ["day", "month"] as const;
export type CapPeriod = (typeof CAP_PERIODS)[number];

export interface FrequencyCap {
  /** Sends an address may get per period, across campaigns. */
  max: number;
  /** Calendar period in UTC. */
  per: CapPeriod;
}

/** Where the sender counts: the cap and its table. */
export interface Admissions {
  cap: FrequencyCap;
  tableName: string;
}

/** What Scheduler fills in, in a schedule's Target.Input, when it invokes the sender: the same on every retry. */
export const SCHEDULER_CONTEXT = {
  scheduleArn: "<aws.scheduler.schedule-arn>",
  scheduledTime: "<aws.scheduler.scheduled-time>",
} as const;

/** Where capped sends are counted. */
export const CAPPED_METRIC = { namespace: "sendtime", name: "CappedSends" } as const;

/** JSONata: one occurrence of one schedule, the same on every retry of it (a recurring schedule has many). */
const invocation = (i: string) => `${i}.schedule & '@' & ${i}.scheduled_time`;

/** JSONata: the period key of the scheduled time, and when its item may expire (a day after the period ends). */
const PERIOD: Record<CapPeriod, { key: (i: string) => string; expiresAt: (i: string) => string }> = {
  day: {
    key: (i) => `$substring(${i}.scheduled_time, 0, 10)`,
    expiresAt: (i) => `$string($toMillis($substring(${i}.scheduled_time, 0, 10) & 'T00:00:00Z') / 1000 + 2 * 86400)`,
  },
  month: {
    key: (i) => `$substring(${i}.scheduled_time, 0, 7)`,
    expiresAt: (i) => `$string($toMillis($substring(${i}.scheduled_time, 0, 7) & '-01T00:00:00Z') / 1000 + 33 * 86400)`,
  },
};

/**
 * JSONata: the table key of the address and period at path `i` (`{email: <entry>, scheduled_time}`). Addresses
 * in a plan are 7-bit ASCII (email.ts), so lower-casing folds every spelling of one mailbox's address together.
 */
const keyOf = (cap: FrequencyCap, i: string) =>
  `{% { 'pk': { 'S': $lowercase(${addressOf(`${i}.email`)}) & '#' & ${PERIOD[cap.per].key(i)} } } %}`;

/**
 * JSONata: an entry's address as the cap counts it: a SendBulkEmail entry's one address, or a text's number (E.164:
 * lower-casing leaves it as it is). One cap counts an address and a number apart: they are different recipients'
 * channels, and a person's email and phone are not linked in a plan.
 */
export const addressOf = (e: string) => `[${e}.Destination.ToAddresses[0], ${e}.DestinationPhoneNumber][0]`;

export const DYNAMODB_BUSY = [
  "DynamoDB.ProvisionedThroughputExceededException",
  "DynamoDB.ThrottlingException",
  "DynamoDB.InternalServerErrorException",
];

/**
 * The admitting UpdateItem's arguments for the entry at JSONata path `i` (`{email, schedule, scheduled_time}`;
 * `email` needs only Destination.ToAddresses, so a SendBulkEmail entry will do).
 */
export function admissionArguments(p: Admissions, i: string) {
  return {
    TableName: p.tableName,
    Key: keyOf(p.cap, i),
    UpdateExpression: "ADD sends :one, schedules :schedules SET expires_at = if_not_exists(expires_at, :expires)",
    ConditionExpression: "attribute_not_exists(sends) OR (sends < :max AND NOT contains(schedules, :schedule))",
    ExpressionAttributeValues: {
      ":one": { N: "1" },
      ":max": { N: String(p.cap.max) },
      ":schedule": { S: `{% ${invocation(i)} %}` },
      ":schedules": { SS: [`{% ${invocation(i)} %}`] },
      ":expires": { N: `{% ${PERIOD[p.cap.per].expiresAt(i)} %}` },
    },
  };
}

/** The GetItem that tells a refused admission's repeat from a capped send, and the JSONata test for a repeat. */
export function lookUpArguments(p: Admissions, i: string) {
  return { TableName: p.tableName, Key: keyOf(p.cap, i), ConsistentRead: true };
}
export const isRepeat = (i: string, item = "$states.result.Item") => `${invocation(i)} in ${item}.schedules.SS`;

/**
 * The releasing UpdateItem's arguments for the entry at JSONata path `i`: 1 from `sends` and the occurrence out of
 * `schedules`, only while the occurrence is there (so it never takes back what another execution admitted).
 */
export function releaseArguments(p: Admissions, i: string) {
  return {
    TableName: p.tableName,
    Key: keyOf(p.cap, i),
    UpdateExpression: "ADD sends :minus_one DELETE schedules :schedules",
    ConditionExpression: "contains(schedules, :schedule)",
    ExpressionAttributeValues: {
      ":minus_one": { N: "-1" },
      ":schedule": { S: `{% ${invocation(i)} %}` },
      ":schedules": { SS: [`{% ${invocation(i)} %}`] },
    },
  };
}
