/**
 * AWS clients for the operator scripts: the standard SDK configuration (region, credential chain, AWS_MAX_ATTEMPTS,
 * and the AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> variables), adaptive retries for throttling, a connection and
 * a request timeout on every HTTP call, and AWS errors turned into one line.
 */
import { PinpointSMSVoiceV2Client } from "@aws-sdk/client-pinpoint-sms-voice-v2";
import { CloudWatchLogsClient } from "@aws-sdk/client-cloudwatch-logs";
import { CloudWatchClient } from "@aws-sdk/client-cloudwatch";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { SFNClient } from "@aws-sdk/client-sfn";
import { SQSClient } from "@aws-sdk/client-sqs";
import { SSMClient } from "@aws-sdk/client-ssm";

// The SDK warns on every run under a Node older than 22 (below `engines`; Lambda runs 24) that its releases after
// January 2027 need 22; it stays off stderr, where it buried the one-line errors. Set the variable to "false" to see it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/**
 * Per HTTP request, in milliseconds: connecting, the whole request and response, and a silent socket. One attempt
 * that hangs fails after these and is retried by the SDK; the command's own --timeout-seconds bounds the total.
 * An S3 upload part (8 MiB) gets longer for the whole request, not for silence.
 */
export const HTTP_TIMEOUTS = {
  connectionMs: 5_000,
  requestMs: 30_000,
  uploadRequestMs: 300_000,
  idleMs: 30_000,
} as const;

const requestHandler = (requestMs: number) => ({
  connectionTimeout: HTTP_TIMEOUTS.connectionMs,
  requestTimeout: requestMs,
  // Without this the SDK only logs a warning when requestTimeout passes.
  throwOnRequestTimeout: true,
  socketTimeout: HTTP_TIMEOUTS.idleMs,
});

const common = (region?: string) => ({
  region: region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION,
  retryMode: "adaptive",
  // The SDK reads AWS_MAX_ATTEMPTS only when the code sets no value; keep that standard variable working.
  maxAttempts: Number(process.env.AWS_MAX_ATTEMPTS) || 8,
  requestHandler: requestHandler(HTTP_TIMEOUTS.requestMs),
});

/** Whether an endpoint override applies to this service (AWS_ENDPOINT_URL_<SERVICE> or AWS_ENDPOINT_URL). */
const endpointOverridden = (service: string) =>
  Boolean(process.env[`AWS_ENDPOINT_URL_${service}`] || process.env.AWS_ENDPOINT_URL);

/** The last error one attempt of any call got (the SDK retries it unseen), with when. */
let lastAttempt: { at: number; error: unknown } | undefined;

/** The last attempt's error since `since` (epoch ms) as "Name: message (HTTP n)", or undefined. */
export function lastAttemptError(since: number): string | undefined {
  if (!lastAttempt || lastAttempt.at < since) return undefined;
  return awsErrorLine("", lastAttempt.error).replace(/^: /, "");
}

/** Records each failed attempt inside the SDK's retries (the deserialize step runs once per attempt). */
function recordingAttempts<C extends { middlewareStack: { add: (...a: any[]) => void } }>(client: C): C {
  client.middlewareStack.add(
    (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
      try {
        return await next(args);
      } catch (error) {
        // Our own abort (the time limit) is not the cause of the wait.
        if ((error as Error)?.name !== "AbortError") lastAttempt = { at: Date.now(), error };
        throw error;
      }
    },
    { step: "deserialize", priority: "high", name: "sendtimeLastAttemptError" },
  );
  return client;
}

export const s3Client = (region?: string) =>
  // A custom endpoint (a local S3) rarely serves virtual-hosted buckets: use path style there.
  recordingAttempts(
    new S3Client({
      ...common(region),
      requestHandler: requestHandler(HTTP_TIMEOUTS.uploadRequestMs),
      forcePathStyle: endpointOverridden("S3"),
    }),
  );
export const sfnClient = (region?: string) => recordingAttempts(new SFNClient(common(region)));
export const schedulerClient = (region?: string) => new SchedulerClient(common(region));
export const sqsClient = (region?: string) =>
  // By default the SQS client sends to the host of the QueueUrl it is given, ignoring an endpoint override; with an
  // override, send there (a stack's real https://sqs.<region>.amazonaws.com/… URL still names the queue).
  new SQSClient({ ...common(region), useQueueUrlAsEndpoint: !endpointOverridden("SQS") });
export const sesClient = (region?: string) => recordingAttempts(new SESv2Client(common(region)));
export const cloudWatchClient = (region?: string) => new CloudWatchClient(common(region));
export const ssmClient = (region?: string) => recordingAttempts(new SSMClient(common(region)));
/** The occurrence ledger's table (infra/core/send/ledger.ts); AWS_ENDPOINT_URL_DYNAMODB points it at a local DynamoDB. */
export const dynamodb = (region?: string) => recordingAttempts(new DynamoDBClient(common(region)));
/** End User Messaging SMS (the opt-out list); AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2 points it at a local stand-in. */
export const smsVoiceClient = (region?: string) => recordingAttempts(new PinpointSMSVoiceV2Client(common(region)));
/** CloudWatch Logs (Logs Insights queries of the SMS event log group); AWS_ENDPOINT_URL_CLOUDWATCH_LOGS. */
export const logsClient = (region?: string) => recordingAttempts(new CloudWatchLogsClient(common(region)));

/** `what failed: ErrorName: message` — one line, no stack. */
export function awsErrorLine(what: string, e: unknown): string {
  const err = e as { name?: string; message?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  const name = err.name && err.name !== "Error" ? err.name : (err.Code ?? "Error");
  const message = (err.message ?? String(e)).split("\n")[0];
  const status = err.$metadata?.httpStatusCode;
  // An error response without a body (a proxy's 500, a load balancer's 503) has no name the SDK can read.
  if (status && (name === "Unknown" || message === "UnknownError"))
    return `${what}: HTTP ${status} with no error details in the response`;
  if (name === "CredentialsProviderError" && /Could not load credentials from any providers/.test(message))
    return `${what}: ${noCredentials()}`;
  const hint = /Region is missing/.test(message)
    ? " (set AWS_REGION, or give --region, or --outputs with a region)"
    : "";
  return `${what}: ${name}: ${message}${status ? ` (HTTP ${status})` : ""}${hint}`;
}

/**
 * The SDK's credential chain found nothing (no variables, no ~/.aws profile, no SSO session, no instance role): how
 * to give credentials, in one line. A profile named in AWS_PROFILE that is not there ends the same way.
 */
function noCredentials(): string {
  const profile = process.env.AWS_PROFILE;
  return `no AWS credentials found${profile ? ` for AWS_PROFILE=${profile} (no such profile in ~/.aws?)` : ""}: set AWS_PROFILE to a profile of ~/.aws/config (for SSO, after aws sso login --profile NAME), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`;
}

export function isAwsError(e: unknown, ...names: string[]): boolean {
  const err = e as { name?: string; Code?: string };
  return names.includes(err?.name ?? "") || names.includes(err?.Code ?? "");
}
