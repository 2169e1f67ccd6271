/**
 * The unsubscribe endpoint's one DynamoDB call: record an address in the opt-out table (UpdateItem, idempotent: the
 * first opt-out's time is kept), which the sender reads before every SendBulkEmail.
 *
 * Why not @aws-sdk/client-dynamodb: the project does not depend on it, and one UpdateItem needs only a signer. This is DynamoDB's JSON 1.0 protocol
 * (`X-Amz-Target: DynamoDB_20120810.UpdateItem`), signed with SigV4 by @smithy/signature-v4 (the SDK's own signer),
 * with the Lambda's credentials from its environment. Bounded in time: 1 s to connect, 1.5 s per attempt, 3 attempts
 * on throttling and 5xx. AWS_ENDPOINT_URL_DYNAMODB redirects it, as it would the SDK.
 */
import { createHash, createHmac } from "crypto";
import * as http from "http";
import * as https from "https";
import { SignatureV4 } from "@smithy/signature-v4";
import { OPT_OUT_KEY, OPT_OUT_SINCE } from "../core/consent/unsubscribe-endpoint";

export interface OptOutTable {
  tableName: string;
  region: string;
  env: NodeJS.ProcessEnv;
}

const ATTEMPTS = 3;
/** Short: the function has 10 s in all, and SES's contact calls come after this one. */
const CONNECT_MS = 1_000;
const ATTEMPT_MS = 1_500;
const RETRYABLE =
  /ProvisionedThroughputExceeded|Throttling|RequestLimitExceeded|InternalServerError|ServiceUnavailable/;

/** A DynamoDB error, by its type's short name (as the SDK names its exceptions). */
export class DynamoDbError extends Error {
  constructor(
    public readonly name: string,
    message: string,
  ) {
    super(message);
  }
}

/** Records `address` (already in the form the token names) as opted out at `now`; a repeat changes nothing. */
export async function recordOptOut(t: OptOutTable, address: string, now: Date): Promise<void> {
  await call(t, "UpdateItem", {
    TableName: t.tableName,
    Key: { [OPT_OUT_KEY]: { S: address } },
    UpdateExpression: "SET #since = if_not_exists(#since, :now)",
    ExpressionAttributeNames: { "#since": OPT_OUT_SINCE },
    ExpressionAttributeValues: { ":now": { S: now.toISOString() } },
  });
}

async function call(t: OptOutTable, action: string, body: unknown): Promise<unknown> {
  const endpoint = new URL(t.env.AWS_ENDPOINT_URL_DYNAMODB || `https://dynamodb.${t.region}.amazonaws.com`);
  const text = JSON.stringify(body);
  let last: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    let answer: { status: number; body: string };
    try {
      answer = await send(endpoint, await sign(t, endpoint, action, text), text);
    } catch (e) {
      // No answer (refused, reset, timed out): another attempt.
      last = e;
      await pause(attempt);
      continue;
    }
    if (answer.status === 200) return safeJson(answer.body) ?? {};
    const type = String(safeJson(answer.body)?.__type ?? `HTTP${answer.status}`);
    const name = type.slice(type.lastIndexOf("#") + 1);
    last = new DynamoDbError(name, `DynamoDB ${action} answered ${answer.status} ${name}`);
    if (!(answer.status >= 500 || RETRYABLE.test(name))) throw last;
    await pause(attempt);
  }
  throw last;
}

async function sign(t: OptOutTable, endpoint: URL, action: string, text: string) {
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN } = t.env;
  if (!AWS_ACCESS_KEY_ID || !AWS_SECRET_ACCESS_KEY)
    throw new DynamoDbError("CredentialsMissing", "no AWS credentials in the environment");
  const signer = new SignatureV4({
    service: "dynamodb",
    region: t.region,
    credentials: {
      accessKeyId: AWS_ACCESS_KEY_ID,
      secretAccessKey: AWS_SECRET_ACCESS_KEY,
      sessionToken: AWS_SESSION_TOKEN,
    },
    sha256: Sha256,
  });
  return signer.sign({
    method: "POST",
    protocol: endpoint.protocol,
    hostname: endpoint.hostname,
    port: endpoint.port ? Number(endpoint.port) : undefined,
    path: "/",
    query: {},
    headers: {
      host: endpoint.host,
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": `DynamoDB_20120810.${action}`,
    },
    body: text,
  });
}

function send(
  endpoint: URL,
  signed: { headers: Record<string, string> },
  text: string,
): Promise<{ status: number; body: string }> {
  const transport = endpoint.protocol === "http:" ? http : https;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      {
        method: "POST",
        hostname: endpoint.hostname,
        port: endpoint.port || undefined,
        path: "/",
        headers: signed.headers,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", reject);
      },
    );
    const connect = setTimeout(
      () => req.destroy(new DynamoDbError("TimeoutError", `no connection to DynamoDB in ${CONNECT_MS} ms`)),
      CONNECT_MS,
    );
    req.on("socket", (s) =>
      s.once(endpoint.protocol === "http:" ? "connect" : "secureConnect", () => clearTimeout(connect)),
    );
    req.setTimeout(ATTEMPT_MS, () =>
      req.destroy(new DynamoDbError("TimeoutError", `DynamoDB did not answer in ${ATTEMPT_MS} ms`)),
    );
    req.on("error", (e) => (clearTimeout(connect), reject(e)));
    req.on("close", () => clearTimeout(connect));
    req.end(text);
  });
}

/** Full jitter before attempt `attempt + 1`; none after the last. */
function pause(attempt: number): Promise<void> {
  return attempt < ATTEMPTS ? new Promise((r) => setTimeout(r, 100 * 2 ** attempt * Math.random())) : Promise.resolve();
}

function safeJson(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytes = (d: SourceData): string | Uint8Array =>
  typeof d === "string"
    ? d
    : d instanceof ArrayBuffer
      ? new Uint8Array(d)
      : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);

/** SHA-256 (and its HMAC) in the shape the signer asks for, from Node's crypto. */
class Sha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}
