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
