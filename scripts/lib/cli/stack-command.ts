/**
 * What the commands that operate a deployed stack share, so that each is a flag table and one function: the command
 * line parsed (`--help` through the runner), the stack outputs read when the body asks for them, the command's
 * Deadline from --timeout-seconds (disposed at the end), and the report printed as text or, with --json, as JSON.
 */
import { Deadline } from "../aws/call";
import { StackOutputs } from "../aws/stack-outputs";
import { outputsFromFlags } from "./aws-flags";
import { EXIT_CODES } from "./exit-codes";
import type { Command, FlagTable, FlagValues } from "./flags";
import { commandMain, Io, Main, required } from "./run";

/** What a body gets: the typed flags, the stack's outputs (read on the first call), the deadline, where to write. */
export interface StackRun<T extends FlagTable> {
  f: FlagValues<T>;
  outputs(): StackOutputs;
  deadline: Deadline;
  io: Io;
  /** --campaign, required (its parser has checked it). */
  campaignId(): string;
}

/**
 * A stack command's declaration: its exit codes are its row of EXIT_CODES; it reports unless it says otherwise; its
 * reference is docs/operating.md unless it names another page.
 */
export type StackDeclaration<T extends FlagTable> = Omit<Command<T>, "exitCodes" | "reports" | "reference"> & {
  readonly script: keyof typeof EXIT_CODES;
  readonly reports?: boolean;
  readonly reference?: string;
};

/** How a report is shown: the text without --json, and the exit code it means. */
export interface ReportShape<T extends FlagTable, R> {
  text(report: R, run: StackRun<T>): string;
  exitCode(report: R): number;
  /** What --json prints, when not the report itself. */
  json?(report: R): unknown;
}

/** The flags every stack command has (timeoutFlag; jsonFlag for a command that reports). */
type StackCommandFlags = { "timeout-seconds": number; json?: boolean };

/**
 * A stack command from its declaration: COMMAND (the table, the help) and main. `body` does the work and returns the
 * report (undefined: nothing to print, the body said why on stderr); `shape` prints it and gives the exit code.
 */
export function stackCommand<T extends FlagTable, R>(
  declaration: StackDeclaration<T>,
  body: (run: StackRun<T>) => Promise<R>,
  shape: ReportShape<T, R>,
): { COMMAND: Command<T>; main: Main } {
  const command: Command<T> = {
    ...declaration,
    exitCodes: EXIT_CODES[declaration.script],
    reports: declaration.reports ?? true,
    reference: declaration.reference ?? "docs/operating.md",
  };
  const main = commandMain(command, async (f, io) => {
    const own = f as unknown as StackCommandFlags;
    let outputs: StackOutputs | undefined;
    const deadline = new Deadline(own["timeout-seconds"], (t) => io.err(`${t}\n`));
    const run: StackRun<T> = {
      f,
      outputs: () => (outputs ??= outputsFromFlags(f)),
      deadline,
      io,
      campaignId: () => required((f as { campaign?: string }).campaign, "campaign"),
    };
    let report: R;
    try {
      report = await body(run);
    } finally {
      deadline.dispose();
    }
    // No report (undefined): the body has said why on stderr.
    if (report !== undefined)
      io.out(
        own.json ? JSON.stringify(shape.json ? shape.json(report) : report, null, 2) + "\n" : shape.text(report, run),
      );
    return shape.exitCode(report);
  });
  return { COMMAND: command, main };
}
