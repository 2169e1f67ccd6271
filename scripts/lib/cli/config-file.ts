/**
 * Campaign files (--config FILE, YAML or JSON): any flag of the command as a key, in camelCase (`quietHours` for
 * --quiet-hours), a repeatable flag under its plural key as a list (`steps: ["+3d:followup"]`). Read into the same
 * values the command line gives; flags given on the command line win. An unknown key or a value of the wrong type is
 * refused, naming the key and the file.
 */
import * as fs from "fs";
import * as path from "path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { UsageError } from "../../../infra/rules/errors";
import type { Flag, FlagTable } from "./flags";

/** --config FILE: a campaign file (the same for launch-campaign and size-window). */
export const CONFIG_FLAG = {
  config: {
    type: "string",
    value: "FILE",
    help: "a campaign file (YAML or JSON): any flag as a camelCase key (steps, variants: lists); flags given win",
    group: "Campaign",
  },
} as const;

/** Flags that have no meaning in a file. */
const NOT_IN_FILES = new Set(["config", "help"]);

/** A flag's key in a campaign file: its declared key, else its name in camelCase. */
export function configKey(name: string, flag: Flag): string {
  return flag.key ?? name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

type Value = string | boolean | string[];

/**
 * The flag values a campaign file gives, by flag name. `alsoAccepted`: another command's flags whose keys may be in
 * the file and are ignored here (size-window reads a launch file: `dryRun`, `out` mean nothing to it).
 */
export function readConfigFile(file: string, flags: FlagTable, alsoAccepted: FlagTable = {}): Record<string, Value> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(
      `--config ${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  let doc: unknown;
  try {
    doc = parseYaml(text); // YAML is a superset of JSON
  } catch (e) {
    throw new UsageError(`--config ${file}: not YAML or JSON: ${(e as Error).message.split("\n")[0]}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc))
    throw new UsageError(
      `--config ${file}: expected a mapping of keys (the flags in camelCase, e.g. template: spring) to values`,
    );
  const byKey = keysOf(flags);
  const ignored = keysOf(alsoAccepted);
  const values: Record<string, Value> = {};
  for (const [key, raw] of Object.entries(doc as Record<string, unknown>)) {
    const known = byKey.get(key);
    if (!known) {
      if (ignored.has(key)) continue;
      const near = nearest(key, [...byKey.keys(), ...ignored.keys()]);
      throw new UsageError(
        `--config ${file}: unknown key "${key}"${near ? ` (did you mean "${near}"?)` : ""}; the keys are the flags in camelCase (see --help)`,
      );
    }
    const [name, flag] = known;
    values[name] = valueOf(file, key, flag, raw);
    const value = values[name];
    if (flag.path && typeof value === "string" && !flag.words?.includes(value)) values[name] = relativeTo(file, value);
  }
  return values;
}

function keysOf(flags: FlagTable): Map<string, [string, Flag]> {
  return new Map(
    Object.entries(flags)
      .filter(([name]) => !NOT_IN_FILES.has(name))
      .map(([name, flag]) => [configKey(name, flag), [name, flag]]),
  );
}

/** A file's value as the command line would give it: a string, true/false, or a list of strings. */
function valueOf(file: string, key: string, flag: Flag, raw: unknown): Value {
  const where = `--config ${file}: key "${key}"`;
  const scalar = (v: unknown): string | undefined =>
    typeof v === "string" ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : undefined;
  const shown = (v: unknown) =>
    Array.isArray(v) ? "a list" : v !== null && typeof v === "object" ? "a mapping" : JSON.stringify(v);
  if (flag.type === "boolean") {
    if (typeof raw !== "boolean") throw new UsageError(`${where}: expected true or false, got ${shown(raw)}`);
    return raw;
  }
  if (flag.multiple) {
    if (!Array.isArray(raw))
      throw new UsageError(
        `${where}: expected a list, e.g. ${key}: [${JSON.stringify(flag.value ?? "VALUE")}], got ${shown(raw)}`,
      );
    return raw.map((v, i) => {
      const s = scalar(v);
      if (s === undefined)
        throw new UsageError(`${where}: item ${i + 1} must be a string (${flag.value ?? "VALUE"}), got ${shown(v)}`);
      return s;
    });
  }
  const s = scalar(raw);
  if (s === undefined)
    throw new UsageError(`${where}: expected a string or a number (${flag.value ?? "VALUE"}), got ${shown(raw)}`);
  return s;
}

/** A path in a campaign file is relative to the file's folder (an S3 URL or an absolute path stays as it is). */
function relativeTo(file: string, value: string): string {
  if (/^s3:\/\//.test(value) || path.isAbsolute(value)) return value;
  return path.join(path.dirname(file), value);
}

/** The closest key by edit distance, when it is close enough to be a likely misspelling. */
function nearest(key: string, keys: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of keys) {
    const d = distance(key.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/**
 * A command line (`--flag value …`, the flags of `flags`) as a campaign file, in YAML. Paths are written relative
 * to `dir`, where the file goes; whole numbers are written as numbers (hour: 9), everything else as strings.
 */
export function campaignFileText(argv: string[], flags: FlagTable, dir: string): string {
  const doc: Record<string, unknown> = {};
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].replace(/^--/, "");
    const flag = flags[name];
    if (!flag || !argv[i].startsWith("--")) throw new Error(`campaignFileText: ${argv[i]} is not a flag of the table`);
    const key = configKey(name, flag);
    if (flag.type === "boolean") {
      doc[key] = true;
      continue;
    }
    let value = argv[++i];
    if (flag.path && !/^s3:\/\//.test(value) && !flag.words?.includes(value))
      value = path.relative(path.resolve(dir), path.resolve(value)) || ".";
    const typed = /^(0|[1-9]\d{0,5})$/.test(value) ? Number(value) : value;
    if (flag.multiple) doc[key] = [...((doc[key] as unknown[]) ?? []), value];
    else doc[key] = typed;
  }
  return stringifyYaml(doc);
}
