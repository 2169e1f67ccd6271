import * as assert from "assert";
import { createHash } from "crypto";
import * as http from "http";
import { AddressInfo } from "net";
import { S3Client } from "@aws-sdk/client-s3";
import { Deadline } from "../../../../scripts/lib/aws/call";
import { s3Client } from "../../../../scripts/lib/aws/clients";
import { StreamingPlanUpload } from "../../../../scripts/lib/aws/plan-upload";
import { openS3Object, parseS3Url } from "../../../../scripts/lib/aws/s3-objects";
import { LocalS3, startLocalS3 } from "../../../helpers/s3-server";
import { FindingsError, UsageError } from "../../../../infra/core/errors";

/** Runs with the SDK pointed at a local S3 (real HTTP, real signing, real XML). */
function withLocalS3() {
  const saved: Record<string, string | undefined> = {};
  const env = {
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_REGION: "us-east-1",
    AWS_ENDPOINT_URL_S3: "",
  };
  const ctx = { server: undefined as unknown as LocalS3, client: undefined as unknown as S3Client };
  before(async () => {
    ctx.server = await startLocalS3();
    for (const [k, v] of Object.entries({ ...env, AWS_ENDPOINT_URL_S3: ctx.server.endpoint })) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    ctx.client = s3Client();
  });
  beforeEach(() => {
    ctx.server.objects.clear();
    ctx.server.requests.length = 0;
    ctx.server.failures.clear();
    ctx.server.openUploads.clear();
    ctx.server.checksums.clear();
    ctx.server.stall = undefined;
  });
  after(async () => {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    await ctx.server.close();
  });
  return ctx;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

describe("S3 recipient lists (--recipients s3://…) against a local S3 endpoint", function () {
  this.timeout(20_000);
  const ctx = withLocalS3();

  it("parses s3://bucket/key and refuses a malformed one with what an S3 URL is", () => {
    assert.deepStrictEqual(parseS3Url("s3://lists-prod/2026/dec/recipients.csv", "--recipients"), {
      bucket: "lists-prod",
      key: "2026/dec/recipients.csv",
    });
    assert.strictEqual(parseS3Url("lists/recipients.csv", "--recipients"), undefined);
    assert.throws(
      () => parseS3Url("s3://Bad_Bucket/x.csv", "--recipients"),
      (e: unknown) =>
        e instanceof UsageError &&
        /--recipients s3:\/\/Bad_Bucket\/x\.csv: an S3 object is s3:\/\/BUCKET\/KEY/.test(e.message),
    );
    assert.throws(() => parseS3Url("s3://bucket-only", "--recipients"), UsageError);
  });

  it("streams the object's bytes with one GetObject (no HEAD, no second read)", async () => {
    const csv = "id,email\n" + Array.from({ length: 5_000 }, (_, i) => `u${i},user${i}@example.com\n`).join("");
    ctx.server.objects.set("lists/dec.csv", Buffer.from(csv));
    const opened = await openS3Object(ctx.client, { bucket: "lists", key: "dec.csv" });
    assert.strictEqual(opened.bytes, Buffer.byteLength(csv));
    assert.strictEqual(await readAll(opened.body), csv);
    assert.deepStrictEqual(
      ctx.server.requests.map((r) => `${r.method} ${r.path}`),
      ["GET lists/dec.csv"],
    );
  });

  it("an object served without Content-Length is refused: its size bounds the fan-out's time (a late plan would look on time)", async () => {
    // An S3-compatible store answering chunked: the body arrives, its size is never said.
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/csv" });
      res.end("id,email\nu1,a@example.com\n");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    const client = new S3Client({
      region: "us-east-1",
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
    });
    try {
      await assert.rejects(
        openS3Object(client, { bucket: "lists", key: "chunked.csv" }),
        (e: unknown) =>
          e instanceof FindingsError &&
          /^s3:\/\/lists\/chunked\.csv: S3 did not give the object's size \(no Content-Length\)/.test(e.message),
      );
    } finally {
      client.destroy();
      server.close();
    }
  });

  it("a missing object is bad input (exit 2) naming the URL", async () => {
    await assert.rejects(
      openS3Object(ctx.client, { bucket: "lists", key: "nope.csv" }),
      (e: unknown) =>
        e instanceof UsageError && /^s3:\/\/lists\/nope\.csv: no such object \(NoSuchKey\)/.test(e.message),
    );
  });

  it("a download that stalls mid-body fails within the idle limit with how far it got, instead of hanging", async () => {
    ctx.server.objects.set("lists/slow.csv", Buffer.from("id,email\n" + "u1,a@example.com\n".repeat(100)));
    ctx.server.stall = { object: "lists/slow.csv", bytes: 100 };
    const opened = await openS3Object(
      ctx.client,
      { bucket: "lists", key: "slow.csv" },
      { firstByteSeconds: 5, idleSeconds: 0.5 },
    );
    const started = Date.now();
    await assert.rejects(
      readAll(opened.body),
      (e: unknown) =>
        e instanceof FindingsError &&
        /s3:\/\/lists\/slow\.csv: the download stalled \(no data for 0.5 s after 100 bytes\)/.test(e.message),
    );
    assert.ok(Date.now() - started < 5_000);
  });
});

describe("StreamingPlanUpload: the plan goes to S3 while it is written, split below the ItemReader object limit", function () {
  this.timeout(30_000);
  const ctx = withLocalS3();
  const line = (i: number) => `{"schedule_name":"u${i}-1","n":${i}}\n`;
  const MiB = 1024 * 1024;
  const sha256 = (b: Buffer) => createHash("sha256").update(b).digest();
  const upload = (keyOf: (n: number) => string, limits = { objectBytes: 1e12, partBytes: 8 * MiB }) =>
    new StreamingPlanUpload(new Deadline(60), ctx.client, "b", keyOf, limits);
  const write = async (u: StreamingPlanUpload, text: string) => {
    const pending = u.write(text);
    if (pending) await pending;
  };
  const calls = () =>
    ctx.server.requests.map(
      (r) =>
        `${r.method}${r.query.has("uploads") ? " create" : r.query.has("partNumber") ? " part" : r.query.has("uploadId") ? " upload" : ""}`,
    );

  it("sends full 8 MiB parts while writing, nothing visible until complete(), then the object byte for byte, checked", async () => {
    const u = upload((n) => `plans/spring/up1/part-${n}.jsonl`);
    let expected = "";
    for (let chunk = 0; chunk < 30; chunk++) {
      let text = "";
      for (let i = 0; i < 20_000; i++) text += line(chunk * 20_000 + i);
      expected += text;
      await write(u, text);
    }
    const bytes = Buffer.byteLength(expected);
    assert.ok(bytes > 2 * 8 * MiB, "big enough for three parts");
    // Parts are sent during the writes; the object is not there yet.
    for (
      let waited = 0;
      ctx.server.openUploads.get("upload-1")?.filter(Boolean).length !== 2 && waited < 5_000;
      waited += 20
    )
      await new Promise((r) => setTimeout(r, 20));
    assert.strictEqual(
      ctx.server.openUploads.get("upload-1")!.filter(Boolean).length,
      2,
      "two full parts sent while writing",
    );
    assert.strictEqual(ctx.server.objects.size, 0);
    const objects = await u.complete();
    const body = ctx.server.objects.get("b/plans/spring/up1/part-1.jsonl")!;
    assert.strictEqual(body.toString(), expected);
    // S3's composite checksum, by hand: the SHA-256 of the parts' SHA-256 digests, then "-3".
    const parts = [body.subarray(0, 8 * MiB), body.subarray(8 * MiB, 16 * MiB), body.subarray(16 * MiB)];
    assert.deepStrictEqual(objects, [
      {
        bucket: "b",
        key: "plans/spring/up1/part-1.jsonl",
        bytes,
        lines: 600_000,
        checksumSha256: `${sha256(Buffer.concat(parts.map(sha256))).toString("base64")}-3`,
        preexisting: false,
      },
    ]);
    assert.deepStrictEqual(calls(), ["POST create", "PUT part", "PUT part", "PUT part", "POST upload", "HEAD"]);
    assert.strictEqual(ctx.server.openUploads.size, 0);
  });

  it("a plan below one part is one PUT at complete() carrying its SHA-256, and the key is asked for only then", async () => {
    let asked = 0;
    const u = upload(() => `plans/c/${++asked}.jsonl`);
    await write(u, line(1) + line(2));
    assert.strictEqual(asked, 0);
    assert.strictEqual(ctx.server.requests.length, 0, "nothing sent while writing");
    const [object] = await u.complete();
    assert.strictEqual(object.key, "plans/c/1.jsonl");
    assert.strictEqual(object.checksumSha256, sha256(Buffer.from(line(1) + line(2))).toString("base64"));
    assert.deepStrictEqual(calls(), ["PUT", "HEAD"]);
  });

  it("splits on line boundaries into objects no larger than the limit; the objects joined are the plan", async () => {
    const limit = 1_000;
    const u = upload((n) => `plans/c/u/part-${n}.jsonl`, { objectBytes: limit, partBytes: 300 });
    let expected = "";
    for (let i = 0; i < 200; i += 10) {
      const text = Array.from({ length: 10 }, (_, k) => line(i + k)).join("");
      expected += text;
      await write(u, text);
    }
    const objects = await u.complete();
    assert.ok(objects.length > 3, `${objects.length} objects`);
    const bodies = objects.map((p) => ctx.server.objects.get(`b/${p.key}`)!.toString());
    assert.strictEqual(bodies.join(""), expected);
    for (const [i, body] of bodies.entries()) {
      assert.ok(Buffer.byteLength(body) <= limit, `object ${i + 1} is ${Buffer.byteLength(body)} bytes`);
      assert.ok(
        body.endsWith("\n") &&
          body
            .split("\n")
            .slice(0, -1)
            .every((l) => JSON.parse(l)),
        `object ${i + 1} holds whole lines`,
      );
    }
    assert.deepStrictEqual(
      objects.map((p) => p.key),
      objects.map((_, i) => `plans/c/u/part-${i + 1}.jsonl`),
    );
    assert.strictEqual(
      objects.reduce((s, p) => s + p.lines, 0),
      200,
    );
  });

  it("abort() before complete(): the open multipart uploads are aborted, no object is ever completed", async () => {
    const u = upload((n) => `plans/c/u/part-${n}.jsonl`, { objectBytes: 1_000, partBytes: 300 });
    for (let i = 0; i < 100; i++) await write(u, line(i));
    for (let waited = 0; ctx.server.openUploads.size < 2 && waited < 5_000; waited += 20)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(ctx.server.openUploads.size >= 2, "parts of several objects were sent");
    assert.deepStrictEqual(await u.abort(), []);
    assert.deepStrictEqual([...ctx.server.objects.keys()], []);
    assert.strictEqual(ctx.server.openUploads.size, 0);
    assert.ok(!calls().includes("POST upload"), "CompleteMultipartUpload never sent");
  });

  it("an S3 error ends the writes with one line naming the object (no hang while S3 is behind)", async () => {
    ctx.server.failures.set("PUT", { code: "AccessDenied", status: 403 });
    const u = upload((n) => `plans/c/u/part-${n}.jsonl`);
    const big = line(1).repeat(200_000);
    await assert.rejects(
      (async () => {
        for (let i = 0; i < 10; i++) await write(u, big);
        await u.complete();
      })(),
      // Up to four parts are in flight at once: whichever S3 answers first names the failure.
      /upload of the plan to s3:\/\/b\/plans\/c\/u\/part-1\.jsonl failed \(part \d+\): AccessDenied/,
    );
    ctx.server.failures.clear();
    assert.deepStrictEqual(await u.abort(), []);
    assert.strictEqual(ctx.server.openUploads.size, 0, calls().join(" "));
  });
});
