import * as assert from "assert";
import { S3Client } from "@aws-sdk/client-s3";
import { s3Client } from "../../scripts/lib/aws/clients";
import { StreamingPlanUpload } from "../../scripts/lib/aws/plan-upload";
import { openS3Object, parseS3Url } from "../../scripts/lib/aws/s3-objects";
import { FindingsError, UsageError } from "../../scripts/lib/cli/run";
import { LocalS3, startLocalS3 } from "../helpers/s3-server";

/** Runs with the SDK pointed at a local S3 (real HTTP, real signing, real XML). */
function withLocalS3() {
  const saved: Record<string, string | undefined> = {};
  const env = { AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test", AWS_REGION: "us-east-1", AWS_ENDPOINT_URL_S3: "" };
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
        e instanceof UsageError && /--recipients s3:\/\/Bad_Bucket\/x\.csv: an S3 object is s3:\/\/BUCKET\/KEY/.test(e.message),
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

  it("a missing object is bad input (exit 2) naming the URL", async () => {
    await assert.rejects(
      openS3Object(ctx.client, { bucket: "lists", key: "nope.csv" }),
      (e: unknown) => e instanceof UsageError && /^s3:\/\/lists\/nope\.csv: no such object \(NoSuchKey\)/.test(e.message),
    );
  });

  it("a download that stalls mid-body fails within the idle limit with how far it got, instead of hanging", async () => {
    ctx.server.objects.set("lists/slow.csv", Buffer.from("id,email\n" + "u1,a@example.com\n".repeat(100)));
    ctx.server.stall = { object: "lists/slow.csv", bytes: 100 };
    const opened = await openS3Object(ctx.client, { bucket: "lists", key: "slow.csv" }, { firstByteSeconds: 5, idleSeconds: 1 });
    const started = Date.now();
    await assert.rejects(
      readAll(opened.body),
      (e: unknown) =>
        e instanceof FindingsError && /s3:\/\/lists\/slow\.csv: the download stalled \(no data for 1 s after 100 bytes\)/.test(e.message),
    );
    assert.ok(Date.now() - started < 5_000);
  });
});

describe("StreamingPlanUpload: the plan goes to S3 while it is written, split below the ItemReader object limit", function () {
  this.timeout(30_000);
  const ctx = withLocalS3();
  const line = (i: number) => `{"schedule_name":"u${i}-1","n":${i}}\n`;

  it("uploads what is written as one object (multipart above 8 MiB), byte for byte", async () => {
    const upload = new StreamingPlanUpload(ctx.client, "plans-bucket", (n) => `plans/spring/up1/part-${n}.jsonl`, 1e12);
    let expected = "";
    for (let chunk = 0; chunk < 20; chunk++) {
      let text = "";
      for (let i = 0; i < 20_000; i++) text += line(chunk * 20_000 + i);
      expected += text;
      const pending = upload.write(text);
      if (pending) await pending;
    }
    const parts = await upload.close();
    assert.deepStrictEqual(
      parts.map((p) => [p.key, p.lines, p.bytes]),
      [["plans/spring/up1/part-1.jsonl", 400_000, Buffer.byteLength(expected)]],
    );
    assert.ok(Buffer.byteLength(expected) > 8 * 1024 * 1024, "big enough for a multipart upload");
    assert.strictEqual(ctx.server.objects.get("plans-bucket/plans/spring/up1/part-1.jsonl")!.toString(), expected);
    assert.ok(
      ctx.server.requests.some((r) => r.query.has("partNumber")),
      "sent as parts",
    );
    assert.strictEqual(ctx.server.openUploads.size, 0);
  });

  it("splits on line boundaries into parts no larger than the limit; the parts joined are the plan", async () => {
    const limit = 1_000;
    const upload = new StreamingPlanUpload(ctx.client, "b", (n) => `plans/c/u/part-${n}.jsonl`, limit);
    let expected = "";
    for (let i = 0; i < 200; i += 10) {
      const text = Array.from({ length: 10 }, (_, k) => line(i + k)).join("");
      expected += text;
      await upload.write(text);
    }
    const parts = await upload.close();
    assert.ok(parts.length > 3, `${parts.length} parts`);
    const bodies = parts.map((p) => ctx.server.objects.get(`b/${p.key}`)!.toString());
    assert.strictEqual(bodies.join(""), expected);
    for (const [i, body] of bodies.entries()) {
      assert.ok(Buffer.byteLength(body) <= limit, `part ${i + 1} is ${Buffer.byteLength(body)} bytes`);
      assert.ok(
        body.endsWith("\n") &&
          body
            .split("\n")
            .slice(0, -1)
            .every((l) => JSON.parse(l)),
        `part ${i + 1} holds whole lines`,
      );
    }
    assert.deepStrictEqual(
      parts.map((p) => p.key),
      parts.map((_, i) => `plans/c/u/part-${i + 1}.jsonl`),
    );
    assert.strictEqual(
      parts.reduce((s, p) => s + p.lines, 0),
      200,
    );
  });

  it("abort() leaves nothing in the bucket: open multipart uploads aborted, finished parts deleted", async () => {
    const upload = new StreamingPlanUpload(ctx.client, "b", (n) => `plans/c/u/part-${n}.jsonl`, 1_000);
    for (let i = 0; i < 100; i++) await upload.write(line(i));
    for (let waited = 0; ctx.server.objects.size < 2 && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    assert.ok(ctx.server.objects.size >= 2, "finished parts are in the bucket before the abort");
    await upload.abort();
    assert.deepStrictEqual([...ctx.server.objects.keys()], []);
    assert.strictEqual(ctx.server.openUploads.size, 0);
  });

  it("an S3 error ends the writes with one line naming the object (no hang on a full stream)", async () => {
    ctx.server.failures.set("PUT", { code: "AccessDenied", status: 403 });
    ctx.server.failures.set("POST", { code: "AccessDenied", status: 403 });
    const upload = new StreamingPlanUpload(ctx.client, "b", (n) => `plans/c/u/part-${n}.jsonl`, 1e12);
    const big = line(1).repeat(200_000);
    await assert.rejects(
      (async () => {
        for (let i = 0; i < 10; i++) await upload.write(big);
        await upload.close();
      })(),
      /upload of the plan to s3:\/\/b\/plans\/c\/u\/part-1\.jsonl failed: AccessDenied/,
    );
  });
});
