/**
 * One flag table per command. Each flag is declared once, with its value name, description, parser, typed default,
 * whether it repeats and its help group; the parser's options, the checks of each value, the `--help` text and the
 * campaign file's keys (--config) all come from that table, so they cannot drift apart.
 */
import { ExitCodes, exitCodesLines } from "./exit-codes";
import type { Parser } from "./parsers";

export interface Flag {
  readonly type: "string" | "boolean";
  /** The value's name in the help (FILE, N, YYYY-MM-DD); string flags only; a choice's values when absent. */
  readonly value?: string;
  /**
   * One short line: what the flag means. A flag several commands take means one thing: the same `help` in each
   * (tests/scripts/flag-meanings.test.ts); what a command adds goes in `note`.
   */
  readonly help: string;
  /** What this command adds to the flag's meaning, shown after it. */
  readonly note?: string;
  /**
   * Parses and checks the value (scripts/lib/cli/parsers.ts): the command receives what it returns. Without one the
   * command receives the text, parsed with other flags by the code that reads them together (--after, --every, …).
   */
  readonly parse?: Parser<unknown>;
  /** The value when the flag is not given (after the campaign file's): the command receives it as given. */
  readonly default?: unknown;
  /** A default that is not a value (`now`, `the schedule's own`), as the help shows it; the command applies it. */
  readonly defaultHelp?: string;
  /** Repeatable: each occurrence adds a value. */
  readonly multiple?: boolean;
  /** The help section it is listed under. */
  readonly group?: string;
  /** Shown on the line of that flag (closely related flags share one help line; their own `help` is for the docs). */
  readonly with?: string;
  /** Its key in a campaign file (--config), when not the flag's camelCase name (`steps` for --step). */
  readonly key?: string;
  /** A file path: in a campaign file, relative to the file's folder. */
  readonly path?: boolean;
  /** Words such a flag takes besides a path (`none`): kept as they are, never resolved. */
  readonly words?: readonly string[];
  /**
   * One of the ways to give one setting: `group` names the setting (the send-time rule: --date, --after, --at,
   * --every; the rate: --tps or the quotas), `form` the way; a flag without `form` is a part of the setting that
   * some ways take (--hour, --until). In a campaign file the setting gives way to one given on the command line in
   * another form: then every flag of the group the file gives is dropped (config-file.ts withCommandLine).
   */
  readonly oneOf?: { readonly group: string; readonly form?: string };
}

export type FlagTable = Readonly<Record<string, Flag>>;

type Parsed<F> = F extends { readonly parse: Parser<infer V> }
  ? V
  : F extends { readonly type: "boolean" }
    ? boolean
    : string;
type ValueOf<F> = F extends { readonly multiple: true } ? Parsed<F>[] : Parsed<F>;
/** Always present: a boolean (false when not given) or a flag with a default. */
type Always<F> = F extends { readonly type: "boolean" } ? true : F extends { readonly default: unknown } ? true : false;

/**
 * The values a table's flags parse to: each parser's value (the text without one), lists for repeatable flags,
 * booleans; a flag that is not given is absent unless it has a default.
 */
export type FlagValues<T extends FlagTable> = {
  -readonly [K in keyof T as Always<T[K]> extends true ? K : never]: ValueOf<T[K]>;
} & { -readonly [K in keyof T as Always<T[K]> extends true ? never : K]?: ValueOf<T[K]> };

/** A command: how it is run, what it does in a few lines, its flags, its exit codes and where its reference is. */
export interface Command<T extends FlagTable = FlagTable> {
  /** The npm script that runs it (package.json), also its file: scripts/<script>.ts. */
  readonly script: string;
  /** The argument patterns of its usage lines, after `npm run -s <script> --`. */
  readonly usage: readonly string[];
  /** What it does: a few lines. */
  readonly summary: string;
  readonly flags: T;
  /** Help groups this command lists under another heading (a shared table's "Stack" under "Launch"). */
  readonly regroup?: Readonly<Record<string, string>>;
  /** With a `config` flag: another command's flags a campaign file may hold and this one ignores (loaded when needed). */
  readonly configAlso?: () => FlagTable;
  readonly exitCodes: ExitCodes;
  /** It creates, changes or deletes something in AWS (or sends): it takes --dry-run (tests/scripts/flag-meanings.test.ts). */
  readonly changesAws: boolean;
  /** It reports what it found or did on stdout: it takes --json. */
  readonly reports: boolean;
  /** The docs page holding the full reference. */
  readonly reference: string;
  /**
   * Flags this command has renamed, old name → new (each old name means another thing in other commands): given, the
   * old spelling is a usage error naming the new one, never taken for it.
   */
  readonly renamed?: Readonly<Record<string, string>>;
}

/** The options node:util's parseArgs takes, from the table. No defaults: "not given" stays visible (--config). */
export function parserOptions(flags: FlagTable): Record<string, { type: "string" | "boolean"; multiple?: boolean }> {
  return Object.fromEntries(
    Object.entries(flags).map(([name, f]) => [name, f.multiple ? { type: f.type, multiple: true } : { type: f.type }]),
  );
}

/** `--name VALUE` (or `--name` for a boolean). */
export function flagSyntax(name: string, flag: Flag): string {
  const value = flag.value ?? (flag.parse?.kind === "choice" ? flag.parse.allowed : "VALUE");
  return flag.type === "boolean" ? `--${name}` : `--${name} ${value}`;
}

/** The kind of value a flag takes (a flag shared by commands has one kind everywhere). */
export function flagKind(flag: Flag): string {
  return flag.type === "boolean" ? "boolean" : (flag.parse?.kind ?? "text");
}

/** What the help says of a flag: its meaning, this command's note, what is allowed (a range) and the default. */
export function flagHelp(flag: Flag): string {
  const allowed = flag.parse && flag.parse.kind !== "choice" ? flag.parse.allowed : "";
  const shown = flag.defaultHelp ?? (flag.default === undefined ? undefined : defaultText(flag.default));
  const extra = [allowed, shown === undefined ? "" : `default ${shown}`].filter(Boolean).join("; ");
  return `${flag.help}${flag.note ? `; ${flag.note}` : ""}${extra ? ` (${extra})` : ""}`;
}

const defaultText = (v: unknown) =>
  typeof v === "number" ? v.toLocaleString("en-US") : Array.isArray(v) ? v.join(",") : String(v);

const NAME_COLUMN = 28;
const HELP_WIDTH = 140;

/** `first` then `text`, wrapped at HELP_WIDTH columns; continuation lines start under the text at NAME_COLUMN. */
function wrapped(first: string, text: string): string[] {
  const lines = [first];
  for (const word of text.split(" ")) {
    const last = lines.length - 1;
    const empty = last === 0 ? lines[0] === first : lines[last].trim() === "";
    if (empty || lines[last].length + 1 + word.length <= HELP_WIDTH)
      lines[last] += empty && last === 0 ? word : empty ? word : ` ${word}`;
    else lines.push(" ".repeat(NAME_COLUMN) + word);
  }
  return lines;
}

/** The --help text, generated from the command's table (≤ 50 lines; the rest is in its reference page). */
export function helpText(command: Command): string {
  const lines = command.usage.map((u, i) =>
    `${i === 0 ? "Usage:" : "      "} npm run -s ${command.script} -- ${u}`.trimEnd(),
  );
  lines.push("", ...command.summary.trim().split("\n"));
  const groups = new Map<string, [string, Flag][]>();
  for (const [name, flag] of Object.entries(command.flags)) {
    if (flag.with !== undefined && command.flags[flag.with]) continue;
    const group = command.regroup?.[flag.group ?? ""] ?? flag.group ?? "Flags";
    groups.set(group, [...(groups.get(group) ?? []), [name, flag]]);
  }
  lines.push("");
  for (const [group, flags] of groups) {
    lines.push(`${group}:`);
    for (const [name, flag] of flags) {
      const shared = Object.entries(command.flags).filter(([, f]) => f.with === name);
      const syntax = [[name, flag] as const, ...shared].map(([n, f]) =>
        f.multiple ? `${flagSyntax(n, f)} ...` : flagSyntax(n, f),
      );
      const left = `  ${syntax.join(", ")}`;
      const right = flagHelp(flag);
      const first = left.length < NAME_COLUMN ? left.padEnd(NAME_COLUMN) : `${left}  `;
      lines.push(...wrapped(first, right));
    }
  }
  lines.push("", ...exitCodesLines(command.exitCodes), `Reference: ${command.reference}`);
  return lines.join("\n") + "\n";
}
