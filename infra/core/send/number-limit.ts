/**
 * The same-subject limit of a phone number (Florida, Oklahoma and Maryland: at most 3 texts on the same subject in
 * 24 hours), as the one sender (infra/state-machines/sender-sms.ts) admits each text: at most N texts to one number in
 * any rolling 24 h, across campaigns and journeys. Pure: the model, its constants and the JSONata argument builders of
 * the ledger's DynamoDB calls; no AWS SDK.
 *
 * The ledger item `num#<E.164>` holds NUMBER_SLOTS time slots: `t<k>` (epoch seconds of the admission that took slot
 * k, 0 when given back) and `o<k>` (the occurrence holding it), and `occs` (the set of occurrences holding a slot). A
 * text with limit N takes the first slot k < N whose time is older than NUMBER_HOLD_SECONDS, by a conditional UpdateItem
 * that also requires every slot from N on to be that old and the occurrence to hold no slot yet (a retried write that
 * had landed is a repeat, not a second text). No slot free: `skipped: capped`. A text that ends not sent gives its slot
 * back (its time set to 0).
 *
 * Why at most N in any 24 h: a slot's times grow by more than NUMBER_HOLD_SECONDS from one text to the next, and a text
 * leaves at most SEND_AFTER_ADMISSION_SECONDS after its admission (the sender is an EXPRESS execution), so two texts
 * of one slot are more than 24 h apart; an admission under limit N finds fewer than N live slots, so it leaves at most
 * N. tests/infra/core/number-limit.test.ts checks it over random histories of this model.
 */
import { LEDGER_KEY, LEDGER_TTL_ATTRIBUTE } from "./ledger";

/** The ledger key of a number's slots. */
export const NUMBER_KEY_PREFIX = "num#";
export const numberKey = (e164: string) => `${NUMBER_KEY_PREFIX}${e164}`;

/** The rolling window of the limit. */
export const NUMBER_WINDOW_SECONDS = 86_400;
/** The longest a text leaves after its admission: within one EXPRESS execution (5 minutes). */
export const SEND_AFTER_ADMISSION_SECONDS = 300;
/** A slot is reusable once its time is more than this old: the window plus the admission-to-send delay. */
export const NUMBER_HOLD_SECONDS = NUMBER_WINDOW_SECONDS + SEND_AFTER_ADMISSION_SECONDS;
/**
 * Slots per number: the largest same-subject limit of the legal-hours table (3). A larger SameSubjectLimit is held
 * to it (stricter, never looser); the sender's worst case counts one write per slot.
 */
export const NUMBER_SLOTS = 3;

/** The limit an entry's SameSubjectLimit means: 1 to NUMBER_SLOTS. */
export const effectiveLimit = (limit: number) => Math.max(1, Math.min(NUMBER_SLOTS, Math.floor(limit)));

/** One number's slots in the model: each slot's time (epoch seconds, 0 = never or given back) and its holder. */
export interface NumberSlots {
  times: number[];
  holders: (string | undefined)[];
}

export const emptySlots = (): NumberSlots => ({
  times: Array(NUMBER_SLOTS).fill(0),
  holders: Array(NUMBER_SLOTS).fill(undefined),
});

const free = (s: NumberSlots, k: number, now: number) => s.times[k] < now - NUMBER_HOLD_SECONDS;

/**
 * The admission as the sender's writes make it: the slot taken, "repeat" (the occurrence holds one already) or
 * "capped". Mutates `s` when a slot is taken.
 */
export function admit(
  s: NumberSlots,
  now: number,
  limit: number,
  occurrence: string,
): { slot: number } | "repeat" | "capped" {
  const n = effectiveLimit(limit);
  const held = s.holders.indexOf(occurrence);
  if (held >= 0) return "repeat";
  for (let k = 0; k < n; k++) {
    let allowed = free(s, k, now);
    for (let j = n; j < NUMBER_SLOTS; j++) allowed &&= free(s, j, now);
    if (allowed) {
      s.times[k] = now;
      s.holders[k] = occurrence;
      return { slot: k };
    }
  }
  return "capped";
}

/** A text that ends not sent gives its slot back, only while its occurrence holds it. */
export function release(s: NumberSlots, slot: number, occurrence: string): void {
  if (s.holders[slot] !== occurrence) return;
  s.times[slot] = 0;
  s.holders[slot] = undefined;
}

/** JSONata: an occurrence of one schedule (the same on every retry of it), at the execution input `i`. */
const occurrenceOf = (i: string) => `${i}.schedule & '@' & ${i}.scheduled_time`;
const keyOf = (item: string) =>
  `{% { '${LEDGER_KEY}': { 'S': '${NUMBER_KEY_PREFIX}' & ${item}.entry.DestinationPhoneNumber } } %}`;
/** JSONata: the entry's limit, 1 to NUMBER_SLOTS. */
export const limitOf = (item: string) => `$max([1, $min([${NUMBER_SLOTS}, $floor(${item}.entry.SameSubjectLimit)])])`;

/**
 * The UpdateItem that takes slot `slot` (a JSONata number at `v.slot`) for the entry at `v.item`, at `v.now` (epoch
 * seconds), of the execution input at `v.input`.
 */
export function takeSlotArguments(tableName: string, v: { item: string; slot: string; now: string; input: string }) {
  const rest = (k: string) =>
    `$join([$map([${limitOf(v.item)}..${NUMBER_SLOTS - 1}], function($j) { ' AND (attribute_not_exists(t' & $j & ') OR t' & $j & ' < :cutoff)' })], '')`;
  return {
    TableName: tableName,
    Key: keyOf(v.item),
    UpdateExpression: `{% 'SET t' & ${v.slot} & ' = :now, o' & ${v.slot} & ' = :occ, ${LEDGER_TTL_ATTRIBUTE} = :expires ADD occs :occs' %}`,
    ConditionExpression: `{% '(attribute_not_exists(t' & ${v.slot} & ') OR t' & ${v.slot} & ' < :cutoff)' & ${rest(v.slot)} & ' AND NOT contains(occs, :occ)' %}`,
    ExpressionAttributeValues: {
      ":now": { N: `{% $string(${v.now}) %}` },
      ":cutoff": { N: `{% $string(${v.now} - ${NUMBER_HOLD_SECONDS}) %}` },
      ":expires": { N: `{% $string(${v.now} + 2 * ${NUMBER_HOLD_SECONDS}) %}` },
      ":occ": { S: `{% ${occurrenceOf(v.input)} %}` },
      ":occs": { SS: [`{% ${occurrenceOf(v.input)} %}`] },
    },
  };
}

/** The GetItem that tells a refused admission's repeat (its slot) from the limit. */
export function lookUpSlotsArguments(tableName: string, item: string) {
  return { TableName: tableName, Key: keyOf(item), ConsistentRead: true };
}

/** JSONata: the slot the occurrence at execution input `i` holds in the GetItem result `r`, or undefined. */
export const heldSlot = (r: string, i: string) =>
  `$filter([0..${NUMBER_SLOTS - 1}], function($k) { $lookup(${r}.Item, 'o' & $k).S = ${occurrenceOf(i)} })[0]`;

/** The UpdateItem that gives slot `item.slot` back, only while this occurrence holds it. */
export function releaseSlotArguments(tableName: string, item: string, i: string) {
  return {
    TableName: tableName,
    Key: keyOf(item),
    UpdateExpression: `{% 'SET t' & ${item}.slot & ' = :zero, o' & ${item}.slot & ' = :none DELETE occs :occs' %}`,
    ConditionExpression: "contains(occs, :occ)",
    ExpressionAttributeValues: {
      ":zero": { N: "0" },
      ":none": { S: "released" },
      ":occ": { S: `{% ${occurrenceOf(i)} %}` },
      ":occs": { SS: [`{% ${occurrenceOf(i)} %}`] },
    },
  };
}
