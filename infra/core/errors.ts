/**
 * Every error sendtime throws on purpose, in one place. Each says in its message what is wrong, in one line naming the
 * file, line, flag or key; the CLIs print that line and exit by kind (scripts/lib/cli/run.ts failure()):
 *   InputError and its kinds → 2 (bad flags or input: nothing was done);
 *   FindingsError and its kinds → 1 (something the user must act on: a violation, a window that does not fit);
 *   any other → 1 (the run could not finish).
 */

/** The input cannot be used (a file that is not CSV, a header without `id`): exit 2, like a bad flag. */
export class InputError extends Error {}

/** Bad flags: exit 2. */
export class UsageError extends InputError {}

/** Something was found that the user must act on (a violation, a window that does not fit): exit 1. */
export class FindingsError extends Error {}

/** The command ran out of time (--timeout-seconds): exit 1, naming the call it was waiting for. */
export class DeadlineExceeded extends FindingsError {}

/**
 * Step Functions refused the start: an execution of that name exists (this plan was launched before). `afterRetry`:
 * the SDK had retried the request, so the execution may be this run's own first attempt (it reached Step Functions,
 * its answer was lost, and the execution ended before the retry): its plan must be kept.
 */
export class AlreadyLaunched extends FindingsError {
  constructor(
    message: string,
    readonly afterRetry: boolean,
  ) {
    super(message);
  }
}

/** The plan's key holds an object with other bytes (another plan under the same launch id): nothing was written. */
export class PlanKeyTaken extends FindingsError {
  constructor(readonly where: string) {
    super(`${where} already holds another plan`);
  }
}

/** A template folder that is not a template (a file missing, a name SES refuses, malformed Handlebars), or a template a run needs and lacks: exit 2. */
export class TemplateError extends InputError {}

/** A bad `sendtime:` stack config value: the message names the key and what is allowed. */
export class ConfigError extends Error {}

/** A bad journey definition: one line naming the journey and the field. */
export class JourneyDefinitionError extends Error {}

/** An AWS failure while enrolling, one line, with anything that looks like an address removed (logs hold no addresses). */
export class EnrolmentError extends Error {}

/** A stack's `Pulumi.<stack>.yaml` cannot be read for the offline preview. */
export class StackConfigError extends Error {}

/** The output folder cannot be written: exit 1, like any other run that could not finish. */
export class OutputError extends Error {}

/** A Pinpoint campaign file that does not have the shape of a CampaignResponse; the message names the key. */
export class CampaignShapeError extends Error {}

export type CsvProblem =
  | "invalid-opening-quote"
  | "invalid-closing-quote"
  | "quote-not-closed"
  | "record-too-large"
  | "utf8-bom-in-latin1"
  | "cr-cr-lf"
  | "lf-in-cr-file"
  | "cr-in-lf-file";

/** A CSV the reader cannot read exactly, at `line` (1-based; the record's first line). */
export class CsvSyntaxError extends Error {
  constructor(
    readonly problem: CsvProblem,
    readonly line: number,
  ) {
    super(`${problem} on line ${line}`);
  }
}

/**
 * An SES SUBSCRIPTION event for the stack's contact list that cannot be read as SES documents it (no single recipient,
 * an unknown status): the handler throws it so that the event is retried and then kept in the dead-letter queue,
 * where the alarm shows it; nothing is recorded from it.
 */
export class SubscriptionEventError extends Error {}
