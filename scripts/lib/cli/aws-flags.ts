/**
 * The flags of the commands that call AWS: where the stack is (its outputs) and how long the command may take. The AWS
 * layer takes what they give (outputs, a Deadline), never the flags. A command takes only the output overrides it
 * uses (stackFlags("bucket")), so no flag is accepted that it would ignore.
 */
import { readStackOutputs, StackOutputs } from "../aws/stack-outputs";
import { seconds } from "./parsers";
import { jsonFlag } from "./common-flags";

const STACK = "Stack";

/**
 * --timeout-seconds: the whole command's limit, 0.1 s to a day (decimals allowed), with the command's default; each
 * AWS call inside it keeps its own bound, cut to what is left. `note`: what this command adds.
 */
export function timeoutFlag<N extends string | undefined = undefined>(defaultSeconds: number, note?: N) {
  return {
    "timeout-seconds": {
      type: "string",
      value: "S",
      parse: seconds(0.1, 86_400),
      help: "the whole command's time limit, every AWS call included",
      ...(note === undefined ? {} : { note: note as N }),
      default: defaultSeconds,
      group: STACK,
    },
  } as const;
}

/** Where the stack's outputs come from. */
const WHERE = {
  stack: {
    type: "string",
    value: "NAME",
    help: "the Pulumi stack",
    note: "its outputs from `pulumi stack output --json` (needs the Pulumi CLI), or saved in FILE",
    group: STACK,
    oneOf: { group: "stack outputs", form: "stack" },
  },
  outputs: {
    type: "string",
    value: "FILE",
    help: "the stack's outputs as saved JSON (offline: `npm run preview -- --write-outputs FILE`)",
    group: STACK,
    with: "stack",
    path: true,
    oneOf: { group: "stack outputs", form: "outputs" },
  },
  region: {
    type: "string",
    value: "R",
    help: "the AWS Region",
    note: "it and the flags beside it override single stack outputs",
    group: STACK,
  },
} as const;

/** Single outputs a command may override, each named for the output it replaces. */
const OVERRIDES = {
  bucket: {
    type: "string",
    value: "B",
    help: "the recipient bucket (output bucketName)",
    group: STACK,
    with: "region",
  },
  "state-machine-arn": {
    type: "string",
    value: "ARN",
    help: "the fan-out state machine (output stateMachineArn)",
    group: STACK,
    with: "region",
  },
  "dlq-url": {
    type: "string",
    value: "URL",
    help: "the dead-letter queue (output deadLetterQueueUrl)",
    group: STACK,
    with: "region",
  },
} as const;

type Override = keyof typeof OVERRIDES;

/** The flags that find the deployed stack, with the overrides the command uses. */
export function stackFlags<K extends Override = never>(...overrides: K[]): typeof WHERE & Pick<typeof OVERRIDES, K> {
  return { ...WHERE, ...(Object.fromEntries(overrides.map((k) => [k, OVERRIDES[k]])) as Pick<typeof OVERRIDES, K>) };
}

/** Stack outputs from the stack flags (the overrides a command does not take are simply absent). */
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
    overrides: {
      region: f.region,
      bucketName: f.bucket,
      stateMachineArn: f["state-machine-arn"],
      deadLetterQueueUrl: f["dlq-url"],
    },
  });
}

/**
 * The tail every reporting stack command's table ends with: --json (with its note, the shape), --timeout-seconds with
 * the command's default, the stack flags with the overrides it uses.
 */
export function reportingStackFlags<K extends Override = never, N extends string | undefined = undefined>(
  timeout: { seconds: number; json?: N },
  ...overrides: K[]
) {
  return { ...jsonFlag(timeout.json), ...timeoutFlag(timeout.seconds), ...stackFlags(...overrides) };
}
