/**
 * A small S3 on 127.0.0.1 speaking the real REST/XML wire format (path-style), enough for the launcher: GetObject
 * (optionally stalling mid-body), PutObject, the multipart calls, DeleteObject, HeadObject, ListObjectsV2 (a prefix,
 * pages of `max-keys`, keys in order as S3 lists them). Clients reach it through
 * AWS_ENDPOINT_URL_S3. Objects live in `objects` ("bucket/key" → bytes); every request is recorded.
 *
 * SHA-256 checksums as S3 keeps them: a PUT or part carrying x-amz-checksum-sha256 is refused (BadDigest) when the
 * bytes differ; HeadObject with x-amz-checksum-mode ENABLED reports the object's digest (one PUT) or the composite
 * digest of its parts' digests with "-<parts>" (multipart), computed here from the bytes received.
 *
 * Conditional writes as S3 has them since 2024: PutObject or CompleteMultipartUpload with `If-None-Match: *` on a key
 * that holds an object is refused with 412 PreconditionFailed and changes nothing (the multipart upload stays open,
 * to be aborted or completed elsewhere).
 */
import { createHash } from "crypto";
import * as http from "http";

export interface S3Request {
  method: string;
  path: string;
  query: URLSearchParams;
  bytes: number;
}

export interface LocalS3 {
  endpoint: string;
  objects: Map<string, Buffer>;
  requests: S3Request[];
  /** Multipart uploads started and not completed or aborted. */
  openUploads: Map<string, Buffer[]>;
  /** The checksum HeadObject reports per "bucket/key", with its type. */
  checksums: Map<string, { sha256: string; type: "FULL_OBJECT" | "COMPOSITE" }>;
  /** GetObject of this "bucket/key" sends the first `bytes` bytes and then nothing more. */
  stall: { object: string; bytes: number } | undefined;
  /** Requests to fail with this S3 error code (e.g. "AccessDenied"), by method. */
  failures: Map<string, { code: string; status: number }>;
  /** Requests never answered, by method (the client must give up). */
  hangs: Set<string>;
  close(): Promise<void>;
}

export async function startLocalS3(): Promise<LocalS3> {
  const state = {
    objects: new Map<string, Buffer>(),
    requests: [] as S3Request[],
    openUploads: new Map<string, Buffer[]>(),
    checksums: new Map<string, { sha256: string; type: "FULL_OBJECT" | "COMPOSITE" }>(),
    stall: undefined as LocalS3["stall"],
    failures: new Map<string, { code: string; status: number }>(),
    hangs: new Set<string>(),
  };
  let uploads = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => {
      const url = new URL(req.url!, "http://local");
      const object = decodeURIComponent(url.pathname.slice(1));
      const body = Buffer.concat(chunks);
      const method = req.method!;
      state.requests.push({ method, path: object, query: url.searchParams, bytes: body.length });
      const fail = (status: number, code: string) => {
        res.statusCode = status;
        res.setHeader("content-type", "application/xml");
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
      };
      if (state.hangs.has(method)) return;
      const failure = state.failures.get(method);
      if (failure) return fail(failure.status, failure.code);
      const q = url.searchParams;
      const sha256 = (b: Buffer) => createHash("sha256").update(b).digest();
      const claimed = req.headers["x-amz-checksum-sha256"];
      if (method === "PUT" && claimed !== undefined && claimed !== sha256(body).toString("base64"))
        return fail(400, "BadDigest");
      const taken = req.headers["if-none-match"] === "*" && state.objects.has(object);
      if (method === "GET" && q.get("list-type") === "2") return res.end(listing(state.objects, object, q));
      if (method === "GET" || method === "HEAD") {
        const data = state.objects.get(object);
        if (!data) return fail(404, "NoSuchKey");
        res.setHeader("content-length", data.length);
        res.setHeader("etag", '"etag"');
        const checksum = state.checksums.get(object);
        if (method === "HEAD" && checksum && req.headers["x-amz-checksum-mode"] === "ENABLED") {
          res.setHeader("x-amz-checksum-sha256", checksum.sha256);
          res.setHeader("x-amz-checksum-type", checksum.type);
        }
        if (method === "HEAD") return res.end();
        if (state.stall?.object === object) {
          res.write(data.subarray(0, state.stall.bytes));
          return; // never ends: the client must give up
        }
        return res.end(data);
      }
      if (method === "POST" && q.has("uploads")) {
        const id = `upload-${++uploads}`;
        state.openUploads.set(id, []);
        return res.end(
          `<?xml version="1.0" encoding="UTF-8"?><InitiateMultipartUploadResult><Bucket>${object.split("/")[0]}</Bucket><Key>${object.slice(object.indexOf("/") + 1)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
        );
      }
      if (method === "PUT" && q.has("uploadId")) {
        const parts = state.openUploads.get(q.get("uploadId")!);
        if (!parts) return fail(404, "NoSuchUpload");
        parts[Number(q.get("partNumber")) - 1] = body;
        res.setHeader("etag", `"part-${q.get("partNumber")}"`);
        return res.end();
      }
      if (method === "POST" && q.has("uploadId")) {
        const parts = state.openUploads.get(q.get("uploadId")!);
        if (!parts) return fail(404, "NoSuchUpload");
        if (taken) return fail(412, "PreconditionFailed");
        state.openUploads.delete(q.get("uploadId")!);
        state.objects.set(object, Buffer.concat(parts));
        const composite = sha256(Buffer.concat(parts.map(sha256))).toString("base64");
        state.checksums.set(object, { sha256: `${composite}-${parts.length}`, type: "COMPOSITE" });
        return res.end(
          `<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUploadResult><Key>${object}</Key><ETag>"done"</ETag></CompleteMultipartUploadResult>`,
        );
      }
      if (method === "DELETE" && q.has("uploadId")) {
        state.openUploads.delete(q.get("uploadId")!);
        res.statusCode = 204;
        return res.end();
      }
      if (method === "PUT") {
        if (taken) return fail(412, "PreconditionFailed");
        state.objects.set(object, body);
        state.checksums.set(object, { sha256: sha256(body).toString("base64"), type: "FULL_OBJECT" });
        res.setHeader("etag", '"put"');
        return res.end();
      }
      if (method === "DELETE") {
        state.objects.delete(object);
        state.checksums.delete(object);
        res.statusCode = 204;
        return res.end();
      }
      fail(400, "NotImplemented");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return Object.assign(state, {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
}

const xmlText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** ListObjectsV2 of `bucket` (the path, without a key): keys under `prefix` in order, `max-keys` a page. */
function listing(objects: Map<string, Buffer>, bucket: string, q: URLSearchParams): string {
  const name = bucket.replace(/\/$/, "");
  const prefix = q.get("prefix") ?? "";
  const max = Number(q.get("max-keys") ?? 1000);
  const start = Number(q.get("continuation-token") ?? 0);
  const keys = [...objects.keys()]
    .filter((o) => o.startsWith(`${name}/`))
    .map((o) => o.slice(name.length + 1))
    .filter((k) => k.startsWith(prefix))
    .sort();
  const page = keys.slice(start, start + max);
  const truncated = start + max < keys.length;
  const contents = page
    .map(
      (k) =>
        `<Contents><Key>${xmlText(k)}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><Size>${objects.get(`${name}/${k}`)!.length}</Size></Contents>`,
    )
    .join("");
  return (
    `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>${name}</Name><Prefix>${xmlText(prefix)}</Prefix>` +
    `<KeyCount>${page.length}</KeyCount><MaxKeys>${max}</MaxKeys><IsTruncated>${truncated}</IsTruncated>` +
    (truncated ? `<NextContinuationToken>${start + max}</NextContinuationToken>` : "") +
    `${contents}</ListBucketResult>`
  );
}
