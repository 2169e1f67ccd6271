/**
 * The value parsers of the flag tables (in the manner of Vitest's CLIOption transforms): each parses one flag's text,
 * checks it, and refuses it with one line naming the flag and what is allowed. A table declares a flag's parser once;
 * the command receives the typed value, the help shows what is allowed, and no command restates a range or a choice.
 */
import { UsageError } from "../../../infra/core/errors";
import { parseInstant } from "../../../infra/core/timing/send-rules";

export interface Parser<T> {
  /** What kind of value it is (`int`, `choice`, `instant`, …): a flag shared by commands has one kind everywhere. */
  readonly kind: string;
  /** What is allowed, in a few words, for the help (`1-60`, `skip|send-now|next-day`); empty: the value name says it. */
  readonly allowed: string;
  /** A value it accepts (the tests parse every flag of every table with it). */
  readonly example: string;
  /** The value, or a UsageError: `--<name> <raw>: <what is allowed>`. */
  parse(raw: string, name: string): T;
}

/** The one refusal line of a flag's value. */
export function refusal(name: string, raw: string, what: string): UsageError {
  return new UsageError(`--${name} ${raw}: ${what}`);
}

const thousands = (n: number) => (Number.isFinite(n) ? n.toLocaleString("en-US") : String(n));

/** A whole number within [min, max]. */
export function int(min: number, max: number = Number.MAX_SAFE_INTEGER): Parser<number> {
  return {
    kind: "int",
    allowed: max === Number.MAX_SAFE_INTEGER ? `${thousands(min)} or more` : `${thousands(min)}-${thousands(max)}`,
    example: String(min),
    parse(raw, name) {
      const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
      if (!(n >= min && n <= max)) throw refusal(name, raw, `must be a whole number from ${min} to ${max}`);
      return n;
    },
  };
}

/** A number of seconds within [min, max], decimals allowed (0.5). */
export function seconds(min: number, max: number): Parser<number> {
  return {
    kind: "seconds",
    allowed: `${min}-${thousands(max)} s`,
    example: String(max),
    parse(raw, name) {
      const n = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN;
      if (!(n >= min && n <= max)) throw refusal(name, raw, `must be a number of seconds from ${min} to ${max}`);
      return n;
    },
  };
}

/** A number above 0, decimals allowed (a rate). */
export function positive(): Parser<number> {
  return {
    kind: "positive",
    allowed: "",
    example: "10",
    parse(raw, name) {
      const n = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN;
      if (!(n > 0)) throw refusal(name, raw, "must be a number above 0");
      return n;
    },
  };
}

/** One of `values`; `normalise` maps a spelling to its value first (`utf-8` → `utf8`). */
export function choice<V extends string>(values: readonly V[], normalise: (raw: string) => string = (r) => r) {
  const parser: Parser<V> = {
    kind: "choice",
    allowed: values.join("|"),
    example: values[0],
    parse(raw, name) {
      const v = normalise(raw);
      if (!(values as readonly string[]).includes(v)) throw refusal(name, raw, `one of ${values.join(", ")}`);
      return v as V;
    },
  };
  return parser;
}

/**
 * An instant that means the same on every machine, as epoch ms: ISO 8601 with `Z` or an offset (fractions allowed; a
 * time without an offset would be read in the machine's zone, so it is refused).
 */
export function instant(): Parser<number> {
  return {
    kind: "instant",
    allowed: "",
    example: "2026-12-01T08:00:00Z",
    parse(raw, name) {
      const t = parseInstant(raw);
      if (typeof t === "number") return t;
      throw refusal(
        name,
        raw,
        `expected an ISO 8601 instant with Z or an offset, such as 2026-12-01T08:00:00Z or 2026-12-01T09:00:00+01:00${t === "no-offset" ? " (a time without an offset is ambiguous)" : ""}`,
      );
    },
  };
}

/** A file or folder (in a campaign file, relative to its folder: Flag.path); never empty. */
export function path(): Parser<string> {
  return {
    kind: "path",
    allowed: "",
    example: "out/x",
    parse(raw, name) {
      if (raw === "") throw refusal(name, '""', "give a path");
      return raw;
    },
  };
}

/**
 * Text checked by `problem` (undefined: fine), e.g. a campaign id or a zone name; `kind` names what it is, `value`
 * turns the text into the value (trimmed, re-cased). `quote`: the refusal repeats the text (`--timezone EST: …`);
 * without, `--campaign: …` (the problem names it, or it is long).
 */
export function checked<T = string>(
  kind: string,
  example: string,
  problem: (raw: string) => string | undefined,
  options: { value?: (raw: string) => T; quote?: boolean } = {},
): Parser<T> {
  const { value = (raw: string) => raw as unknown as T, quote = true } = options;
  return {
    kind,
    allowed: "",
    example,
    parse(raw, name) {
      const why = problem(raw);
      if (why !== undefined) throw new UsageError(quote ? `--${name} ${raw}: ${why}` : `--${name}: ${why}`);
      return value(raw);
    },
  };
}

/** Any text: the value is used as it is, or parsed with other flags by the code that reads them together. */
export function text(kind = "text", example = "v1"): Parser<string> {
  return { kind, allowed: "", example, parse: (raw) => raw };
}

/** A comma-separated list of `values`, in the one order of `values`, or `none` (empty). */
export function listOf<V extends string>(values: readonly V[]): Parser<readonly V[]> {
  return {
    kind: "list",
    allowed: "",
    example: values.join(","),
    parse(raw, name) {
      if (raw.trim() === "none") return [];
      const names = raw.split(",").map((s) => s.trim());
      const bad = names.find((n) => !(values as readonly string[]).includes(n));
      if (bad !== undefined) throw refusal(name, raw, `none, or a list of ${values.join(", ")} (${bad}?)`);
      return values.filter((v) => names.includes(v));
    },
  };
}
