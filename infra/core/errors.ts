/**
 * The kinds of error sendtime throws on purpose. Each specific error is declared beside the code that throws it and
 * extends one of these; its message says in one line what is wrong, naming the file, line, flag or key and what is
 * allowed. The CLIs print that line, and one place decides the exit code from the kind
 * (scripts/lib/cli/run.ts `failure`): a command throws a kind, it never exits and never re-wraps an error to change
 * its code.
 *
 *   UsageError        bad flags                                              exit 2
 *   InputError        a file, row or key that cannot be used                 exit 2
 *   FindingsError     the command ran and found what the user must act on    exit 1
 *   DeadlineExceeded  a bound ran out (--timeout-seconds); a kind of finding exit 1
 *   InternalError     a bug: what sendtime itself should never do            exit 1
 *   anything else     the run could not finish                               exit 1
 */

/** The input cannot be used (a file that is not there or not CSV, a header without `id`): exit 2, like a bad flag. */
export class InputError extends Error {}

/** Bad flags (unknown, malformed, out of range, missing): exit 2. A kind of input error. */
export class UsageError extends InputError {}

/** The command ran and found something the user must act on (a violation, a window that does not fit): exit 1. */
export class FindingsError extends Error {}

/** A bound ran out (the command's --timeout-seconds): exit 1, naming the call it was waiting for. A kind of finding. */
export class DeadlineExceeded extends FindingsError {}

/** What sendtime itself should never do (a broken invariant): exit 1, saying so, so that it is reported. */
export class InternalError extends Error {}
