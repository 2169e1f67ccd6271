/**
 * Reading a recipient list straight from S3 (`--recipients s3://bucket/key.csv`): one streamed GetObject, no local
 * copy. Every wait is bounded: the response must start within `firstByteSeconds`, and the body may not stall for more
 * than `idleSeconds` (a stalled body is an error naming the object and how far it got, never a hang).
 */
import { Readable, Transform } from "stream";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { awsErrorLine, isAwsError } from "./clients";
import { FindingsError, InputError, UsageError } from "../../../infra/core/errors";

/** The object (or its bucket) is not there: bad input, exit 2; a reader of expired plans takes it as "gone". */
export class NoSuchObject extends InputError {}

export interface S3Location {
  bucket: string;
  key: string;
}

/** S3 bucket names: 3–63 of a-z 0-9 . - (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `s3://bucket/key` → its parts; undefined when `text` is not an s3:// URL; a UsageError when it is one but malformed. */
export function parseS3Url(text: string, flag: string): S3Location | undefined {
  if (!/^s3:\/\//i.test(text)) return undefined;
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(text);
  if (!m || !BUCKET_NAME.test(m[1]))
    throw new UsageError(`${flag} ${text}: an S3 object is s3://BUCKET/KEY (bucket 3–63 of a-z 0-9 . -, then a key)`);
  return { bucket: m[1], key: m[2] };
}

export const s3Url = (l: S3Location) => `s3://${l.bucket}/${l.key}`;

export interface S3ObjectStream {
  body: Readable;
  /** Content-Length of the object. */
  bytes: number;
}

/** Starts streaming the object. Not found is bad input (exit 2); any other AWS error is exit 1. */
export async function openS3Object(
  s3: S3Client,
  where: S3Location,
  limits: { firstByteSeconds: number; idleSeconds: number } = { firstByteSeconds: 30, idleSeconds: 60 },
): Promise<S3ObjectStream> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), limits.firstByteSeconds * 1000);
  let response;
  try {
    response = await s3.send(new GetObjectCommand({ Bucket: where.bucket, Key: where.key }), {
      abortSignal: abort.signal,
    });
  } catch (e) {
    if (abort.signal.aborted)
      throw new FindingsError(`${s3Url(where)}: no response from S3 within ${limits.firstByteSeconds} s (GetObject)`);
    if (isAwsError(e, "NoSuchKey", "NoSuchBucket", "NotFound"))
      throw new NoSuchObject(
        `${s3Url(where)}: no such object (${(e as Error).name}); check the bucket, the key and the region`,
      );
    throw new FindingsError(awsErrorLine(`${s3Url(where)}: GetObject failed`, e));
  } finally {
    clearTimeout(timer);
  }
  const body = response.Body as Readable | undefined;
  if (!body || typeof body.on !== "function")
    throw new FindingsError(`${s3Url(where)}: GetObject returned no readable body`);
  // The size bounds the list's rows, and so the fan-out's time and the missed-send cutoff: without it a late plan
  // would look on time. S3 always sends it; an S3-compatible store that does not is refused.
  if (response.ContentLength === undefined) {
    body.destroy();
    throw new FindingsError(
      `${s3Url(where)}: S3 did not give the object's size (no Content-Length), which bounds the fan-out's time; download the list and pass the local file`,
    );
  }
  return { body: stallGuard(body, where, limits.idleSeconds, abort), bytes: response.ContentLength };
}

/**
 * `body` passed through a stream that fails with a one-line error when no byte arrives for `idleSeconds`. Time spent
 * waiting on our own consumer (its buffer full) is not a stall.
 */
function stallGuard(body: Readable, where: S3Location, idleSeconds: number, abort: AbortController): Readable {
  let received = 0;
  let timer: NodeJS.Timeout | undefined;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      arm();
      done(null, chunk);
    },
    flush(done) {
      clearTimeout(timer);
      done();
    },
  });
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (guard.readableLength >= guard.readableHighWaterMark) return arm();
      abort.abort();
      const stalled = new FindingsError(
        `${s3Url(where)}: the download stalled (no data for ${idleSeconds} s after ${received} bytes)`,
      );
      body.destroy(stalled);
      guard.destroy(stalled);
    }, idleSeconds * 1000);
  };
  body.once("error", (e) => {
    clearTimeout(timer);
    guard.destroy(
      e instanceof FindingsError ? e : new FindingsError(awsErrorLine(`${s3Url(where)}: reading the object failed`, e)),
    );
  });
  guard.once("close", () => clearTimeout(timer));
  arm();
  return body.pipe(guard);
}
