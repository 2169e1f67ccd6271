/**
 * The sends a pause held: the sender dead-letters each send of a paused campaign as a pointer with outcome `skipped`
 * and reason `paused` (infra/core/send/ledger.ts DeadLetterPointer), for redrive to send after resume. Counting them reads
 * the send dead-letter queue page by page with a visibility timeout as short as the count needs, and makes every
 * message visible again at the end: nothing is deleted or changed.
 */
import { Message, SQSClient } from "@aws-sdk/client-sqs";
import { DeadLetterPointer } from "../../../infra/core/send/ledger";
import { campaignTag } from "../../../infra/core/send/email-events";
import { FindingsError } from "../../../infra/core/errors";
import { Deadline } from "./call";
import { makeVisibleAgain, receiveDeadLetters } from "./dead-letter-queue";

export interface HeldCount {
  /** Pointers of the campaign held by a pause (each one send of up to 50 recipients). */
  sends: number;
  recipients: number;
  /** Messages read, every campaign's and every kind. */
  read: number;
  /** The queue was read until it answered empty. */
  complete: boolean;
  /** What stopped the count or went wrong around it, one line each. */
  problems: string[];
}

/** Whether a message body is a pointer this campaign's pause held (its `campaign` is the id or the sender's tag). */
export function isHeldPointer(body: string | undefined, campaignId: string): DeadLetterPointer | undefined {
  let p: Partial<DeadLetterPointer>;
  try {
    p = JSON.parse(body ?? "");
  } catch {
    return undefined; // not a pointer (Scheduler's own dead letters carry the target's input)
  }
  if (!p || typeof p !== "object" || p.outcome !== "skipped" || p.reason !== "paused") return undefined;
  if (p.campaign !== campaignId && p.campaign !== campaignTag(campaignId)) return undefined;
  return Array.isArray(p.recipients) ? (p as DeadLetterPointer) : undefined;
}

export async function countHeldSends(
  d: Deadline,
  sqs: SQSClient,
  queueUrl: string,
  campaignId: string,
): Promise<HeldCount> {
  const c: HeldCount = { sends: 0, recipients: 0, read: 0, complete: false, problems: [] };
  const held: string[] = [];
  const seen = new Set<string>();
  try {
    for (let page = 1; !d.expired && !c.complete; page++) {
      // Invisible only while the count runs (so paging moves on) and a few seconds more: a redrive started meanwhile
      // finds them again soon even if making them visible again fails.
      const messages = await receiveDeadLetters(d, sqs, queueUrl, page, { extraSeconds: 5 });
      const fresh = messages.filter((m) => m.MessageId && !seen.has(m.MessageId));
      if (messages.length && !fresh.length)
        throw new FindingsError(`ReceiveMessage ${queueUrl} (page ${page}): only messages already read; stopped`);
      c.complete = !messages.length;
      for (const m of fresh) tally(c, m, campaignId, seen, held);
      if (fresh.length) d.progress(`counting held sends of ${campaignId}: ${c.read} messages read, ${c.sends} held`);
    }
  } catch (e) {
    if (!(e instanceof FindingsError)) throw e;
    c.problems.push(e.message);
  }
  if (!c.complete && d.expired && !c.problems.length)
    c.problems.push(`the queue was not read to the end within the command's time limit of ${d.seconds} s`);
  await makeVisibleAgain(sqs, queueUrl, held, c.problems);
  return c;
}

function tally(c: HeldCount, m: Message, campaignId: string, seen: Set<string>, held: string[]): void {
  seen.add(m.MessageId!);
  c.read++;
  if (m.ReceiptHandle) held.push(m.ReceiptHandle);
  const pointer = isHeldPointer(m.Body, campaignId);
  if (!pointer) return;
  c.sends++;
  c.recipients += pointer.recipients.length;
}
