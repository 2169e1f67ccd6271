/**
 * Uploads the plan while it is being written: each write goes into a multipart upload (8 MiB parts, 4 in flight), so
 * a launch needs no local copy of a plan of any size and no second pass over it.
 *
 * A Distributed Map reads one S3 object per execution, and Step Functions limits the size of that object
 * (`stepFunctions.maxItemReaderObjectBytes`): the plan is split into parts below it, on line boundaries, each its own
 * object (`keyOfPart(1)`, `keyOfPart(2)`, …) for its own execution.
 */
import { PassThrough } from "stream";
import { DeleteObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { FindingsError } from "../cli/run";
import { awsErrorLine } from "./clients";

export interface PlanObject {
  bucket: string;
  key: string;
  bytes: number;
  lines: number;
}

interface OpenPart extends PlanObject {
  body: PassThrough;
  upload: Upload;
  /** Settles when S3 has the whole object (or the upload failed). */
  done: Promise<void>;
}

export class StreamingPlanUpload {
  private readonly parts: OpenPart[] = [];
  private aborted = false;

  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
    private readonly keyOfPart: (part: number) => string,
    private readonly maxPartBytes: number,
    private readonly progress: (text: string) => void = () => {},
  ) {}

  /** Appends whole lines (each ending in "\n"). Resolves at once unless S3 is behind. */
  write(lines: string): Promise<void> | undefined {
    if (this.aborted) throw new Error("write after abort");
    if (lines.length === 0) return undefined;
    const part = this.parts[this.parts.length - 1];
    const bytes = Buffer.byteLength(lines);
    if (part && part.bytes + bytes <= this.maxPartBytes) return this.append(part, lines, bytes);
    return this.writeAcrossParts(lines);
  }

  /** Ends the upload; resolves with every part once S3 has all of them. */
  async close(): Promise<PlanObject[]> {
    const last = this.parts[this.parts.length - 1];
    last?.body.end();
    await Promise.all(this.parts.map((p) => p.done));
    return this.parts.map(({ bucket, key, bytes, lines }) => ({ bucket, key, bytes, lines }));
  }

  /** Stops uploading and leaves nothing behind: open multipart uploads are aborted, finished parts deleted. */
  async abort(): Promise<void> {
    if (this.aborted) return;
    this.aborted = true;
    await Promise.all(
      this.parts.map(async (p) => {
        p.body.destroy();
        await p.upload.abort().catch(() => undefined);
        await p.done.catch(() => undefined);
        await this.s3.send(new DeleteObjectCommand({ Bucket: p.bucket, Key: p.key })).catch(() => undefined);
      }),
    );
  }

  /** Slow path, once per part boundary: fill the current part up to the limit, then start the next. */
  private async writeAcrossParts(lines: string): Promise<void> {
    let start = 0;
    while (start < lines.length) {
      const part = this.parts[this.parts.length - 1] ?? this.startPart();
      let end = start;
      let bytes = 0;
      for (let nl = lines.indexOf("\n", start); nl !== -1; nl = lines.indexOf("\n", nl + 1)) {
        const lineBytes = Buffer.byteLength(lines.slice(end, nl + 1));
        if (part.bytes + bytes + lineBytes > this.maxPartBytes) break;
        bytes += lineBytes;
        end = nl + 1;
      }
      if (end === start) {
        if (part.bytes === 0) throw new Error(`a plan line is longer than a whole part (${this.maxPartBytes} bytes)`);
        this.startPart();
        continue;
      }
      const pending = this.append(part, lines.slice(start, end), bytes);
      if (pending) await pending;
      start = end;
    }
  }

  private append(part: OpenPart, lines: string, bytes: number): Promise<void> | undefined {
    part.bytes += bytes;
    for (let nl = lines.indexOf("\n"); nl !== -1; nl = lines.indexOf("\n", nl + 1)) part.lines++;
    if (part.body.write(lines)) return undefined;
    // Wait for S3 to take more, but not forever: a failed upload stops reading its stream.
    return new Promise<void>((resolve, reject) => {
      part.body.once("drain", resolve);
      part.done.catch(reject);
    });
  }

  private startPart(): OpenPart {
    const previous = this.parts[this.parts.length - 1];
    previous?.body.end();
    const key = this.keyOfPart(this.parts.length + 1);
    const body = new PassThrough({ highWaterMark: 1 << 20 });
    const upload = new Upload({
      client: this.s3,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: "application/x-ndjson" },
      partSize: 8 * 1024 * 1024,
      queueSize: 4,
      leavePartsOnError: false,
    });
    let reported = 0;
    upload.on("httpUploadProgress", (p) => {
      const loaded = p.loaded ?? 0;
      if (loaded - reported >= 64 * 1024 * 1024) {
        reported = loaded;
        this.progress(`uploading s3://${this.bucket}/${key}: ${Math.round(loaded / 1048576)} MB`);
      }
    });
    const part: OpenPart = {
      bucket: this.bucket,
      key,
      bytes: 0,
      lines: 0,
      body,
      upload,
      done: upload.done().then(
        () => this.progress(`uploaded s3://${this.bucket}/${key}: ${part.lines.toLocaleString("en-US")} lines`),
        (e) => {
          throw new FindingsError(awsErrorLine(`upload of the plan to s3://${this.bucket}/${key} failed`, e));
        },
      ),
    };
    part.done.catch(() => undefined); // observed in close(); avoids an unhandled rejection while still writing
    this.parts.push(part);
    return part;
  }
}
