/**
 * What every sendtime CLI shares: flag parsing, one-line errors and exit codes
 * (0 ok, 1 findings, 2 usage or input error).
 */
import { nearest } from "../../../infra/core/text/nearest";
import { parseArgs } from "util";
import { DeadlineExceeded, FindingsError, InputError, InternalError, UsageError } from "../../../infra/core/errors";
import type { Command, FlagTable, FlagValues } from "./flags";
import { helpText, parserOptions } from "./flags";
import { readConfigFile, withCommandLine } from "./config-file";

/** Where a CLI writes: stdout for results, stderr for progress. Tests pass their own. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** stderr is a terminal: progress is shown without --progress, as one line rewritten in place. Absent: not one. */
  readonly errIsTerminal?: boolean;
}
export const processIo: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  errIsTerminal: process.stderr.isTTY === true,
};

/** What parsing a command line gives: the command's typed values, or `--help` asked for (the runner prints it). */
export type ParseOutcome<T extends FlagTable> = { help: true } | { help: false; values: FlagValues<T> };

/**
 * Parses argv strictly with the command's flag table: each value through its flag's parser (after the campaign
 * file's, --config), defaults applied. `--help` is an outcome: the parser neither writes nor exits. A flag that takes
 * one value (not `multiple`) given twice is an error, not "the last one wins": `--holdout 20 … --holdout 10` would
 * silently hold out 10%. A flag not given is absent (unless it has a default); a boolean, false.
 */
export function parseFlags<T extends FlagTable>(argv: string[], command: Command<T>): ParseOutcome<T> {
  if (argv.includes("--help") || argv.includes("-h")) return { help: true };
  refuseRenamed(argv, command.renamed ?? {});
  const options = parserOptions(command.flags);
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: false, tokens: true });
  } catch (e) {
    throw new UsageError(parseProblem((e as Error).message, Object.keys(command.flags)));
  }
  const given = new Map<string, (string | undefined)[]>();
  for (const t of parsed.tokens) {
    if (t.kind !== "option" || options[t.name]?.multiple) continue;
    const values = given.get(t.name) ?? [];
    values.push(t.value);
    given.set(t.name, values);
    if (values.length === 2) {
      const shown = values.every((v) => v !== undefined) ? ` (${values.join(", ")})` : "";
      throw new UsageError(`--${t.name} is given twice${shown}: give it once`);
    }
  }
  const typed: Record<string, unknown> = { ...parsed.values };
  // A campaign file (--config) gives the flags not given on the command line: those win, a list replacing the file's,
  // a setting given another way replacing the file's whole setting.
  const fromFile =
    command.flags.config && typeof typed.config === "string"
      ? readConfigFile(typed.config, command.flags, command.configAlso?.())
      : {};
  const values = typedValues(withCommandLine(fromFile, typed, command.flags), command.flags);
  return { help: false, values: values as FlagValues<T> };
}

/** A renamed flag's old spelling (`--to`, `--to=…`) as one line naming the new one. */
function refuseRenamed(argv: string[], renamed: Readonly<Record<string, string>>): void {
  for (const arg of argv) {
    if (arg === "--") return;
    const name = /^--([^=]+)/.exec(arg)?.[1];
    const now = name === undefined ? undefined : renamed[name];
    if (now !== undefined)
      throw new UsageError(
        `--${name} is now --${now} in this command (--${name} means another thing elsewhere) (see --help)`,
      );
  }
}

/** Each given value through its flag's parser; defaults for the flags not given; booleans false when absent. */
export function typedValues(raw: Record<string, unknown>, flags: FlagTable): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries(flags)) {
    const v = raw[name];
    if (v === undefined) {
      if (flag.type === "boolean") values[name] = false;
      else if (flag.default !== undefined) values[name] = flag.default;
      continue;
    }
    const parse = flag.parse;
    values[name] =
      parse && flag.type === "string"
        ? Array.isArray(v)
          ? v.map((x: string) => parse.parse(x, name))
          : parse.parse(v as string, name)
        : v;
  }
  return values;
}

/** A flag the command cannot run without, or a UsageError. */
export function required<V>(value: V | undefined, name: string, what = ""): V {
  if (value === undefined) throw new UsageError(`--${name}${what ? ` ${what}` : ""} is required (see --help)`);
  return value;
}

/** A command's main: argv and where it writes (tests pass their own); returns the exit code. */
export type Main<A extends unknown[] = []> = (argv: string[], io?: Io, ...rest: A) => Promise<number>;

/**
 * A command's main from its table and its body: the body gets the typed values; `--help` prints the help generated
 * from the table on stdout and exits 0.
 */
export function commandMain<T extends FlagTable, A extends unknown[] = []>(
  command: Command<T>,
  body: (f: FlagValues<T>, io: Io, ...rest: A) => Promise<number>,
): Main<A> {
  return async (argv, io = processIo, ...rest) => {
    const parsed = parseFlags(argv, command);
    if (parsed.help) {
      io.out(helpText(command));
      return 0;
    }
    return body(parsed.values, io, ...rest);
  };
}

/**
 * node's parseArgs message as one line that says what to do: an unknown flag with the nearest one; a bare word with
 * the likeliest cause, a flag's value given apart from it or npm's `--` left out (`npm run -s size-window -- …`).
 */
export function parseProblem(message: string, names: readonly string[]): string {
  const unknown = /^Unknown option '--?([^']+)'/.exec(message);
  if (unknown) {
    const near = nearest(unknown[1], names);
    return `unknown flag --${unknown[1]}${near ? ` (did you mean --${near}?)` : ""} (see --help)`;
  }
  const word = /^Unexpected argument '([^']*)'/.exec(message);
  if (word)
    return `unexpected argument "${word[1]}": flags start with -- (through npm, put -- before them: npm run -s <command> -- --flag value) (see --help)`;
  return `${message.replace(/\. To specify.*$/, "")} (see --help)`;
}

/**
 * The exit code of each kind of error (infra/core/errors.ts), most specific first: the one place that decides it.
 * Anything else (a kind of error sendtime does not throw on purpose) is 1, the run could not finish.
 */
const EXIT_CODE_OF_KIND: readonly [new (...args: never[]) => Error, number][] = [
  [UsageError, 2],
  [InputError, 2],
  [DeadlineExceeded, 1],
  [FindingsError, 1],
  [InternalError, 1],
];

/** What an error becomes on the command line: one line on stderr and the exit code its kind gives. */
export function failure(e: unknown): { code: number; line: string } {
  const message = (e instanceof Error ? e.message : String(e)).split("\n")[0];
  const code = EXIT_CODE_OF_KIND.find(([kind]) => e instanceof kind)?.[1] ?? 1;
  const line =
    e instanceof InternalError
      ? `internal: ${message} (a bug in sendtime: please report it; SENDTIME_DEBUG=1 prints the stack)`
      : message;
  return { code, line: `error: ${line}\n` };
}

/** Runs a CLI body: its return value is the exit code; known errors become one line on stderr. */
export function runMain(main: () => Promise<number | void>): void {
  main().then(
    (code) => exitWhenWritten(code ?? 0),
    (e: unknown) => {
      const { code, line } = failure(e);
      process.stderr.write(line);
      if (process.env.SENDTIME_DEBUG && e instanceof Error) process.stderr.write(`${e.stack}\n`);
      exitWhenWritten(code);
    },
  );
}

/**
 * Exits once stdout and stderr have taken everything written to them. To a pipe, a write the pipe cannot hold yet
 * (64 KiB on Linux) is finished later: exiting at once cut a long --json report short with exit 0. The exit stays
 * explicit (an SDK's idle sockets would keep the process alive); a reader that has gone (EPIPE) does not hold it.
 */
function exitWhenWritten(code: number): void {
  let waiting = 2;
  const written = () => {
    if (--waiting === 0) process.exit(code);
  };
  for (const stream of [process.stdout, process.stderr]) {
    let done = false;
    const once = () => {
      if (done) return;
      done = true;
      written();
    };
    stream.once("error", once);
    stream.write("", once);
  }
}
