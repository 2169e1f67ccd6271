/**
 * Uploads the plan while it is being written, so a launch needs no second pass over the plan and, with
 * --no-local-plan, no local copy of it: each full 8 MiB goes to S3 as one part of a multipart upload (4 parts in
 * flight at most; the writer waits beyond that).
 *
 * Nothing is visible in S3 until `complete()`: the caller checks the finished plan first (the schedule quota, the
 * window), and `abort()` then leaves nothing behind (AbortMultipartUpload; a plan below one part was never sent).
 * Every part carries its own SHA-256, which S3 checks on arrival; after completion HeadObject must report the
 * checksum computed here from the bytes written (the digest for one PUT, the composite `-<parts>` digest of the
 * parts' digests for a multipart upload), or the launch stops.
 *
 * A Distributed Map reads one S3 object per execution, and Step Functions limits that object's size
 * (`stepFunctions.maxItemReaderObjectBytes`): the plan is split on line boundaries into objects below it,
 * `keyOf(1)`, `keyOf(2)`, …, each for its own execution. A key is asked for only when its object's first request is
 * made, so a plan below one part can be named after its own hash.
 *
 * Nothing is ever overwritten: the PUT and the CompleteMultipartUpload carry `If-None-Match: *` (S3 conditional
 * writes). S3 refusing one (412 PreconditionFailed: the key holds an object) is fine when that object has our
 * checksum — the same plan submitted again, whose execution name then decides (Step Functions' idempotency) — and
 * otherwise the launch stops (`PlanKeyTaken`) with the open upload aborted.
 */
import { createHash } from "crypto";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  PutObjectCommand,
  DeleteObjectCommand,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { stepFunctions } from "../../../infra/core/plan/quotas";
import { count } from "../text/format";
import { awsCall, boundedCall, Deadline } from "./call";
import { isAwsError } from "./clients";
import { FindingsError, InternalError } from "../../../infra/core/errors";

/** The plan's key holds an object with other bytes (another plan under the same launch id): nothing was written. */
export class PlanKeyTaken extends FindingsError {
  constructor(readonly where: string) {
    super(`${where} already holds another plan`);
  }
}

/** Multipart part size (S3: at least 5 MiB except the last part, at most 10,000 parts). */
export const UPLOAD_PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 4;
/**
 * Each clean-up call's own time limit (an abort runs also after the command's deadline has passed), and how far past
 * that deadline it may go: --timeout-seconds is the limit, give or take these few seconds. Tests shrink them.
 */
export const cleanupLimits = { callMs: 30_000, afterDeadlineMs: 5_000 };
const CONTENT_TYPE = "application/x-ndjson";

export interface PlanObject {
  bucket: string;
  key: string;
  bytes: number;
  lines: number;
  /** What S3 reports as ChecksumSHA256 for the object (checked by HeadObject). */
  checksumSha256: string;
  /** S3 already held this object (the same plan, launched before): this run did not write it. */
  preexisting: boolean;
}

/** A clean-up call's time limit: its own, but not more than a few seconds past the command's. */
function cleanupMs(d: Deadline): number {
  return Math.max(0, Math.min(cleanupLimits.callMs, d.endsAt + cleanupLimits.afterDeadlineMs - Date.now()));
}

/** A conditional write: true when written, false when S3 already holds an object under the key (412). */
async function unlessTaken(write: Promise<unknown>, where: string): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (e) {
    const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (isAwsError(e, "PreconditionFailed") || status === 412) return false;
    if (isAwsError(e, "ConditionalRequestConflict") || status === 409)
      throw new FindingsError(
        `${where}: another upload to this key was completing at the same moment (409 ConditionalRequestConflict); nothing started: run the launch again, it compares the plan with what S3 then holds`,
      );
    throw e;
  }
}

export interface UploadLimits {
  /** The largest object one execution may read (on line boundaries). */
  objectBytes: number;
  partBytes: number;
}

/** The limits every upload uses unless given its own; tests shrink them to split a small plan. */
export const uploadLimits: UploadLimits = {
  objectBytes: stepFunctions.maxItemReaderObjectBytes,
  partBytes: UPLOAD_PART_BYTES,
};

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest();

/** One object of the plan: buffered up to a part, then a multipart upload started on its first full part. */
class ObjectUpload {
  key?: string;
  bytes = 0;
  lines = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private uploadId?: Promise<string>;
  private readonly partDigests: Buffer[] = [];
  private readonly parts: { PartNumber: number; ETag?: string; ChecksumSHA256: string }[] = [];
  completed = false;
  preexisting = false;

  constructor(
    private readonly up: StreamingPlanUpload,
    readonly index: number,
  ) {}

  get where(): string {
    return `s3://${this.up.bucket}/${this.keyNow()}`;
  }

  keyNow(): string {
    return (this.key ??= this.up.keyOf(this.index));
  }

  get multipart(): boolean {
    return this.uploadId !== undefined;
  }

  /** Appends whole lines; returns the parts it filled, to be sent. */
  append(data: Buffer, lines: number): Buffer[] {
    this.bytes += data.length;
    this.lines += lines;
    this.pending.push(data);
    this.pendingBytes += data.length;
    const full: Buffer[] = [];
    const partBytes = this.up.limits.partBytes;
    if (this.pendingBytes < partBytes) return full;
    let joined = Buffer.concat(this.pending, this.pendingBytes);
    while (joined.length >= partBytes) {
      full.push(joined.subarray(0, partBytes));
      joined = joined.subarray(partBytes);
    }
    this.pending = joined.length ? [joined] : [];
    this.pendingBytes = joined.length;
    return full;
  }

  /** Sends one part (CreateMultipartUpload first when it is the object's first). */
  async sendPart(body: Buffer): Promise<void> {
    const PartNumber = this.partDigests.length + 1;
    const digest = sha256(body);
    this.partDigests.push(digest);
    const ChecksumSHA256 = digest.toString("base64");
    const Bucket = this.up.bucket;
    const Key = this.keyNow();
    this.uploadId ??= this.up
      .call(`upload of the plan to ${this.where} failed (CreateMultipartUpload)`, (o) =>
        this.up.s3.send(
          new CreateMultipartUploadCommand({ Bucket, Key, ContentType: CONTENT_TYPE, ChecksumAlgorithm: "SHA256" }),
          o,
        ),
      )
      .then((r) => r.UploadId!);
    const UploadId = await this.uploadId;
    const r = await this.up.call(`upload of the plan to ${this.where} failed (part ${PartNumber})`, (o) =>
      this.up.s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: body, ChecksumSHA256 }), o),
    );
    this.parts.push({ PartNumber, ETag: r.ETag, ChecksumSHA256 });
  }

  /** The rest as the last part (multipart) or as the whole object (one PUT); once every part has arrived. */
  async complete(): Promise<PlanObject> {
    const Bucket = this.up.bucket;
    const Key = this.keyNow();
    const rest = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    let checksumSha256: string;
    let written: boolean;
    if (!this.multipart) {
      checksumSha256 = sha256(rest).toString("base64");
      written = await this.up.call(`upload of the plan to ${this.where} failed`, (o) =>
        unlessTaken(
          this.up.s3.send(
            new PutObjectCommand({
              Bucket,
              Key,
              Body: rest,
              ContentType: CONTENT_TYPE,
              ChecksumSHA256: checksumSha256,
              IfNoneMatch: "*",
            }),
            o,
          ),
          this.where,
        ),
      );
    } else {
      if (rest.length) await this.sendPart(rest);
      const UploadId = await this.uploadId!;
      const Parts = [...this.parts].sort((a, b) => a.PartNumber - b.PartNumber);
      written = await this.up.call(`upload of the plan to ${this.where} failed (CompleteMultipartUpload)`, (o) =>
        unlessTaken(
          this.up.s3.send(
            new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts }, IfNoneMatch: "*" }),
            o,
          ),
          this.where,
        ),
      );
      checksumSha256 = `${sha256(Buffer.concat(this.partDigests)).toString("base64")}-${this.partDigests.length}`;
      // A refused completion leaves the upload open: its parts are not needed either way.
      const problem = written ? undefined : await this.abortOpenUpload();
      if (problem) this.up.progress(`warning: ${problem}`);
    }
    this.completed = true;
    this.preexisting = !written;
    return {
      bucket: Bucket,
      key: Key,
      bytes: this.bytes,
      lines: this.lines,
      checksumSha256,
      preexisting: this.preexisting,
    };
  }

  /**
   * Aborts this object's open multipart upload; returns a problem line, or undefined. A completed object is left as it
   * is (said so): its key may be one an earlier launch of the same plan is reading, which must not lose it; the
   * bucket's lifecycle rule expires plans.
   */
  async abort(): Promise<string | undefined> {
    if (this.preexisting) return undefined; // not ours: an earlier launch of the same plan wrote it
    if (this.completed)
      return `${this.where} was completed before the launch stopped and is left in place (plans expire with the bucket's lifecycle rule)`;
    return this.abortOpenUpload();
  }

  private async abortOpenUpload(): Promise<string | undefined> {
    const Bucket = this.up.bucket;
    try {
      if (this.uploadId) {
        const UploadId = await this.uploadId.catch(() => undefined);
        if (UploadId)
          await boundedCall(
            `aborting the multipart upload of ${this.where}`,
            cleanupMs(this.up.deadline),
            (abortSignal) =>
              this.up.s3.send(new AbortMultipartUploadCommand({ Bucket, Key: this.key!, UploadId }), { abortSignal }),
          );
      }
      return undefined;
    } catch (e) {
      return `${(e as Error).message}; the bucket's lifecycle rule removes incomplete uploads after a day`;
    }
  }
}

export class StreamingPlanUpload {
  private readonly objects: ObjectUpload[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure?: unknown;
  private state: "writing" | "completing" | "completed" | "aborted" = "writing";

  constructor(
    readonly deadline: Deadline,
    readonly s3: S3Client,
    readonly bucket: string,
    readonly keyOf: (object: number) => string,
    readonly limits: UploadLimits = { ...uploadLimits },
    readonly progress: (text: string) => void = () => {},
  ) {
    if (limits.partBytes > limits.objectBytes) this.limits = { ...limits, partBytes: limits.objectBytes };
  }

  /** An AWS call within the command's time limit, as one line naming `what` when it fails. */
  call<T>(what: string, send: (o: { abortSignal: AbortSignal }) => Promise<T>): Promise<T> {
    return awsCall(this.deadline, what, send);
  }

  /** Appends whole lines (each ending in "\n"). Resolves at once unless S3 is behind; rejects once an upload failed. */
  write(text: string): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    if (this.state !== "writing") throw new InternalError(`plan write after ${this.state}`);
    if (text.length === 0) return undefined;
    const data = Buffer.from(text, "utf8");
    const current = this.objects[this.objects.length - 1];
    let full: Buffer[];
    if (current && current.bytes + data.length <= this.limits.objectBytes)
      full = current.append(data, countLines(data));
    else full = this.appendAcrossObjects(data);
    for (const part of full) this.send(this.objects[this.objects.length - 1], part);
    return this.inFlight.size >= PARTS_IN_FLIGHT ? this.roomForAPart() : undefined;
  }

  /**
   * Sends what is left, completes every object and checks each with HeadObject; returns them. Call it only once the
   * plan is known to be launched: before it, nothing is visible in S3.
   */
  async complete(): Promise<PlanObject[]> {
    this.state = "completing";
    await this.settled();
    if (this.failure) throw this.failure;
    const done: PlanObject[] = [];
    for (const o of this.objects) {
      const object = await o.complete();
      await this.verify(object);
      this.progress(
        object.preexisting
          ? `${o.where} already holds this plan (an earlier launch of it): kept as it is`
          : `uploaded ${o.where}: ${count(object.lines)} lines, ${count(object.bytes)} bytes`,
      );
      done.push(object);
    }
    this.state = "completed";
    return done;
  }

  /**
   * Leaves no incomplete upload behind: open multipart uploads are aborted, each call with its own time limit (it
   * runs also when the command's has run out). Returns what was not cleaned up, one line each.
   */
  async abort(): Promise<string[]> {
    if (this.state === "aborted") return [];
    this.state = "aborted";
    await this.settled();
    const problems = await Promise.all(this.objects.map((o) => o.abort()));
    return problems.filter((p): p is string => p !== undefined);
  }

  /**
   * Deletes objects this run wrote that no execution reads (the caller knows: their keys are unique to this run and
   * the start that would have read them was refused); returns one line each, what was done or why not.
   */
  async deleteUnread(objects: PlanObject[]): Promise<string[]> {
    const lines: string[] = [];
    for (const o of objects) {
      const where = `s3://${o.bucket}/${o.key}`;
      try {
        await boundedCall(`deleting ${where}`, cleanupMs(this.deadline), (abortSignal) =>
          this.s3.send(new DeleteObjectCommand({ Bucket: o.bucket, Key: o.key }), { abortSignal }),
        );
        lines.push(`deleted ${where} (this run's own upload, read by no execution)`);
      } catch (e) {
        lines.push(
          `warning: ${(e as Error).message}; ${where} is this run's own upload, read by no execution: delete it`,
        );
      }
    }
    return lines;
  }

  /** The objects started so far (for messages). */
  get objectCount(): number {
    return this.objects.length;
  }

  private send(object: ObjectUpload, part: Buffer): void {
    const sent: Promise<void> = object.sendPart(part).then(
      () => {
        this.inFlight.delete(sent);
      },
      (e) => {
        this.inFlight.delete(sent);
        this.failure ??= e;
      },
    );
    this.inFlight.add(sent);
  }

  private async roomForAPart(): Promise<void> {
    while (this.inFlight.size >= PARTS_IN_FLIGHT) await Promise.race(this.inFlight);
    if (this.failure) throw this.failure;
  }

  private async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.race(this.inFlight);
  }

  /** Slow path, once per object boundary: fill the current object up to the limit, then start the next. */
  private appendAcrossObjects(data: Buffer): Buffer[] {
    const full: Buffer[] = [];
    let start = 0;
    while (start < data.length) {
      const object = this.objects[this.objects.length - 1] ?? this.startObject();
      let end = start;
      let lines = 0;
      for (let nl = data.indexOf(10, start); nl !== -1; nl = data.indexOf(10, nl + 1)) {
        if (object.bytes + (nl + 1 - start) > this.limits.objectBytes) break;
        end = nl + 1;
        lines++;
      }
      if (end === start) {
        if (object.bytes === 0)
          throw new FindingsError(
            `a plan line is longer than one ItemReader object may be (${count(this.limits.objectBytes)} bytes)`,
          );
        // The object is full: its parts so far go out, and the next object starts.
        for (const part of full.splice(0)) this.send(object, part);
        this.startObject();
        continue;
      }
      full.push(...object.append(data.subarray(start, end), lines));
      start = end;
    }
    return full;
  }

  private startObject(): ObjectUpload {
    const object = new ObjectUpload(this, this.objects.length + 1);
    this.objects.push(object);
    return object;
  }

  /** HeadObject with checksums: S3's ChecksumSHA256 must be the one computed from the bytes written. */
  private async verify(o: PlanObject): Promise<void> {
    const where = `s3://${o.bucket}/${o.key}`;
    const head = await this.call(`checking the uploaded plan ${where} (HeadObject)`, (opts) =>
      this.s3.send(new HeadObjectCommand({ Bucket: o.bucket, Key: o.key, ChecksumMode: "ENABLED" }), opts),
    );
    const reported = head?.ChecksumSHA256;
    const parts = /-(\d+)$/.exec(o.checksumSha256)?.[1];
    // S3 may give a composite checksum with or without its "-<parts>" suffix; the digest must match either way.
    const matches =
      reported !== undefined &&
      (reported === o.checksumSha256 || (parts !== undefined && `${reported}-${parts}` === o.checksumSha256));
    if (!matches && o.preexisting) throw new PlanKeyTaken(where);
    if (!matches)
      throw new FindingsError(
        `${where} does not hold the planned bytes: S3 reports ChecksumSHA256 ${reported ?? "(none)"}${head?.ChecksumType ? ` (${head.ChecksumType})` : ""}, the plan written gives ${o.checksumSha256}; fan-out not started`,
      );
  }
}

function countLines(data: Buffer): number {
  let n = 0;
  for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, nl + 1)) n++;
  return n;
}
