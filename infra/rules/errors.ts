/**
 * The core's one error kind: the input cannot be used (a file that is not CSV, a header without `id`). The message is
 * one line naming the file and line; the CLIs print it and exit 2, like a bad flag.
 */
export class InputError extends Error {}
