/**
 * The flags of the commands that call AWS: where the stack is (its outputs) and how long the command may take. The AWS
 * layer takes what they give (outputs, a Deadline), never the flags.
 */
import { Deadline } from "../aws/call";
import { readStackOutputs, StackOutputs } from "../aws/stack-outputs";
import { secondsFlag } from "./run";

/** --timeout-seconds: the whole command's limit, 0.1 s to a day (decimals allowed). */
export const TIMEOUT_FLAG = { "timeout-seconds": { type: "string" } } as const;

export function deadlineFromFlag(raw: string | undefined, defaultSeconds: number, progress: (text: string) => void): Deadline {
  return new Deadline(secondsFlag("timeout-seconds", raw, 0.1, 86_400, defaultSeconds), progress);
}

/** The flags every operator script takes to find the deployed stack. */
export const STACK_FLAGS = {
  stack: { type: "string" },
  outputs: { type: "string" },
  region: { type: "string" },
  bucket: { type: "string" },
  "state-machine-arn": { type: "string" },
  "dlq-url": { type: "string" },
} as const;

export const STACK_FLAGS_HELP = `  --stack NAME            read the stack outputs with \`pulumi stack output --json\` (needs the Pulumi CLI)
  --outputs FILE          or from that command's saved JSON
  --region, --bucket, --state-machine-arn, --dlq-url   override single outputs`;

/** Stack outputs from STACK_FLAGS. */
export function outputsFromFlags(f: {
  stack?: string;
  outputs?: string;
  region?: string;
  bucket?: string;
  "state-machine-arn"?: string;
  "dlq-url"?: string;
}): StackOutputs {
  return readStackOutputs({
    stack: f.stack,
    outputsFile: f.outputs,
    overrides: { region: f.region, bucketName: f.bucket, stateMachineArn: f["state-machine-arn"], deadLetterQueueUrl: f["dlq-url"] },
  });
}
