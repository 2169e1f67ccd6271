/**
 * Reading the send dead-letter queue, for redrive and resume: a page of messages hidden while the command works on
 * them, and every one read made visible again afterwards. Bounded calls; failures of the release are said, not thrown.
 */
import { ChangeMessageVisibilityBatchCommand, Message, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { FindingsError } from "../../../infra/core/errors";
import { awsCall, boundedCall, Deadline } from "./call";

/** The most ReceiveMessage returns at once, and ChangeMessageVisibilityBatch takes. */
export const QUEUE_PAGE = 10;
/** How long one release batch may take: it runs after the command's own time limit too. */
const RELEASE_MS = 5_000;

/**
 * One page of the queue, invisible for the rest of the command and `extraSeconds` more, so that paging moves on and
 * a page never brings back one already handled.
 */
export async function receiveDeadLetters(
  d: Deadline,
  sqs: SQSClient,
  queueUrl: string,
  page: number,
  o: { extraSeconds: number; attributes?: boolean },
): Promise<Message[]> {
  const VisibilityTimeout = Math.min(43_200, Math.ceil(Math.max(d.endsAt - Date.now(), 0) / 1000) + o.extraSeconds);
  const answer = await awsCall(d, `ReceiveMessage ${queueUrl}${page > 1 ? ` (page ${page})` : ""}`, (opts) =>
    sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: QUEUE_PAGE,
        // Long polling asks every SQS server, so an empty answer means the queue is empty, not a sample that missed.
        WaitTimeSeconds: 1,
        VisibilityTimeout,
        ...(o.attributes ? { MessageAttributeNames: ["All"] } : {}),
      }),
      opts,
    ),
  );
  return answer.Messages ?? [];
}

/** Makes every message read visible again (ChangeMessageVisibility 0), each batch bounded on its own. */
export async function makeVisibleAgain(
  sqs: SQSClient,
  queueUrl: string,
  handles: string[],
  problems: string[],
): Promise<void> {
  for (let i = 0; i < handles.length; i += QUEUE_PAGE) {
    const batch = handles.slice(i, i + QUEUE_PAGE);
    try {
      const answer = await boundedCall(`ChangeMessageVisibilityBatch ${queueUrl}`, RELEASE_MS, (abortSignal) =>
        sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((h, j) => ({ Id: String(j), ReceiptHandle: h, VisibilityTimeout: 0 })),
          }),
          { abortSignal },
        ),
      );
      if (answer.Failed?.length)
        problems.push(`${answer.Failed.length} messages read stay invisible until their visibility timeout`);
    } catch (e) {
      if (!(e instanceof FindingsError)) throw e;
      problems.push(`${e.message}: ${batch.length} messages read stay invisible until their visibility timeout`);
    }
  }
}
