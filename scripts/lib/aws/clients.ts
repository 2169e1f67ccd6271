/**
 * AWS clients for the operator scripts: the standard SDK configuration (region, credential chain, and the
 * AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> variables), adaptive retries for throttling, and AWS errors turned
 * into one line.
 */
import { CloudWatchClient } from "@aws-sdk/client-cloudwatch";
import { S3Client } from "@aws-sdk/client-s3";
import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { SFNClient } from "@aws-sdk/client-sfn";
import { SQSClient } from "@aws-sdk/client-sqs";

// The pinned SDK runs on Node 20; its notice that releases after January 2027 need Node 22 is in the README, not on
// every run's stderr (where it buried the one-line errors). Set the variable to "false" to see it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

const common = (region?: string) => ({
  region: region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION,
  retryMode: "adaptive",
  maxAttempts: 8,
});

export const s3Client = (region?: string) =>
  // A custom endpoint (a local S3) rarely serves virtual-hosted buckets: use path style there.
  new S3Client({ ...common(region), forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3 || process.env.AWS_ENDPOINT_URL) });
export const sfnClient = (region?: string) => new SFNClient(common(region));
export const schedulerClient = (region?: string) => new SchedulerClient(common(region));
export const sqsClient = (region?: string) => new SQSClient(common(region));
export const cloudWatchClient = (region?: string) => new CloudWatchClient(common(region));

/** `what failed: ErrorName: message` — one line, no stack. */
export function awsErrorLine(what: string, e: unknown): string {
  const err = e as { name?: string; message?: string; Code?: string };
  const name = err.name && err.name !== "Error" ? err.name : (err.Code ?? "Error");
  const message = (err.message ?? String(e)).split("\n")[0];
  const hint = /Region is missing/.test(message) ? " (set AWS_REGION, or give --region, or --outputs with a region)" : "";
  return `${what}: ${name}: ${message}${hint}`;
}

export function isAwsError(e: unknown, ...names: string[]): boolean {
  const err = e as { name?: string; Code?: string };
  return names.includes(err?.name ?? "") || names.includes(err?.Code ?? "");
}
