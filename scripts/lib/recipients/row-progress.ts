/**
 * How a long read of rows says how far it is: the loop counts rows and calls back every PROGRESS_EVERY_ROWS rows
 * (never per row, never with a clock); the caller (a CLI's reporter) decides whether and when to print.
 */

/** `done` rows so far (`what`: "rows read", "endpoints read"), of at most `total` when the caller knows a bound. */
export type RowProgress = (done: number, what: string, total?: number) => void;

/** How often a loop calls its RowProgress: rare enough to cost nothing per row, often enough for a line a second. */
export const PROGRESS_EVERY_ROWS = 4096;
