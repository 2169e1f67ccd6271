/**
 * Reads an export job's output from S3: every object under `s3://bucket/prefix/`, in key order, as a stream of its
 * stored bytes (gzip detection is the importer's). Every call is bounded: each ListObjectsV2 page and each GetObject
 * until its body starts must answer within `callTimeoutMs` (the SDK's retries included), and a body that stops
 * sending data for `idleTimeoutMs` fails the import instead of hanging it.
 */
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { Readable } from "stream";
import type { ExportSource } from "../pinpoint/import";
import { boundedCall } from "./call";
import { UsageError } from "../../../infra/core/errors";

export interface S3Location {
  bucket: string;
  prefix: string;
}

export interface S3Timeouts {
  callTimeoutMs: number;
  idleTimeoutMs: number;
}

export const DEFAULT_S3_TIMEOUTS: S3Timeouts = { callTimeoutMs: 60_000, idleTimeoutMs: 60_000 };

/** `s3://bucket/prefix/` → its parts, or undefined when `url` is not an s3:// URL. */
export function parseS3Url(url: string): S3Location | undefined {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  if (!m) return undefined;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(m[1]))
    throw new UsageError(`${url}: "${m[1]}" is not an S3 bucket name`);
  return { bucket: m[1], prefix: m[2] };
}

/** The objects under the prefix (folder markers, keys ending in "/", left out), each openable once. */
export async function s3ExportSources(
  s3: S3Client,
  at: S3Location,
  t: S3Timeouts = DEFAULT_S3_TIMEOUTS,
): Promise<ExportSource[]> {
  const keys: string[] = [];
  let token: string | undefined;
  const seen = new Set<string>();
  do {
    const page = await boundedCall(
      `list s3://${at.bucket}/${at.prefix}`,
      t.callTimeoutMs,
      (abortSignal) =>
        s3.send(new ListObjectsV2Command({ Bucket: at.bucket, Prefix: at.prefix, ContinuationToken: token }), {
          abortSignal,
        }),
      UsageError,
    );
    for (const o of page.Contents ?? []) if (o.Key && !o.Key.endsWith("/")) keys.push(o.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
    if (token !== undefined && seen.has(token))
      throw new UsageError(`list s3://${at.bucket}/${at.prefix}: S3 returned the same page token twice`);
    if (token !== undefined) seen.add(token);
  } while (token !== undefined);
  if (keys.length === 0) throw new UsageError(`s3://${at.bucket}/${at.prefix}: no objects under this prefix`);
  return keys.map((key) => ({
    name: `s3://${at.bucket}/${key}`,
    open: async () => {
      const r = await boundedCall(
        `read s3://${at.bucket}/${key}`,
        t.callTimeoutMs,
        (abortSignal) => s3.send(new GetObjectCommand({ Bucket: at.bucket, Key: key }), { abortSignal }),
        UsageError,
      );
      if (!(r.Body instanceof Readable)) throw new UsageError(`read s3://${at.bucket}/${key}: no body`);
      return withIdleTimeout(r.Body, t.idleTimeoutMs);
    },
  }));
}

/** `body`, failing when no data arrives for `ms` while it is being read (a stalled connection would hang the import). */
function withIdleTimeout(body: Readable, ms: number): Readable {
  async function* chunks() {
    const iterator = body[Symbol.asyncIterator]();
    try {
      for (;;) {
        let timer: NodeJS.Timeout | undefined;
        const stalled = new Promise<never>(
          (_, reject) => (timer = setTimeout(() => reject(new Error(`no data for ${ms / 1000} s`)), ms)),
        );
        const r = await Promise.race([iterator.next(), stalled]).finally(() => clearTimeout(timer));
        if (r.done) return;
        yield r.value as Buffer;
      }
    } finally {
      body.destroy();
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}
