/**
 * Campaign files (--config FILE, YAML or JSON): any flag of the command as a key, in camelCase (`quietHours` for
 * --quiet-hours), a repeatable flag under its plural key as a list (`steps: ["+3d:followup"]`). Read into the same
 * values the command line gives — every scalar as the text written (YAML's failsafe schema: `0012` stays "0012",
 * `9.0` is "9.0", refused by --hour's own parser as on the command line), `true`/`false` for a boolean flag, paths
 * relative to the file — and then parsed by the flags' own code; flags given on the command line win. An unknown key
 * or a value of the wrong shape is refused, naming the key and the file. A step may also be a mapping (stepItem):
 * `{offset: +1d, channel: sms, template: NAME}`; `channel: sms` at the top is the first step's (--channel).
 */
import * as path from "path";
import { parseDocument, stringify as stringifyYaml } from "yaml";
import { UsageError } from "../../../infra/core/errors";
import type { Flag, FlagTable } from "./flags";
import { nearest } from "../../../infra/core/text/nearest";
import { readInputFile } from "../text/input-files";

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
  const text = readInputFile(file, `--config ${file}`);
  const doc = parseText(file, text);
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

/**
 * The file's document, every scalar a string (YAML is a superset of JSON: a JSON file's 9 and true are "9" and
 * "true"); a tag (`!!int 9`) asks for a type the file's values do not have, and is refused like a syntax error.
 */
function parseText(file: string, text: string): unknown {
  const doc = parseDocument(text, { schema: "failsafe", logLevel: "silent" });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw new UsageError(`--config ${file}: not YAML or JSON: ${problem.message.split("\n")[0]}`);
  return doc.toJS();
}

/**
 * The flag values of a run: the command line's over the file's, flag by flag, except that a setting given on the
 * command line in another form than the file's (Flag.oneOf: --date --hour over the file's `at:`, --tps over its
 * `sesRate:`) replaces the file's whole setting: its flags of that group are dropped.
 */
export function withCommandLine(
  fromFile: Record<string, unknown>,
  given: Record<string, unknown>,
  flags: FlagTable,
): Record<string, unknown> {
  const file = { ...fromFile };
  const formsOf = (values: Record<string, unknown>, group: string) =>
    new Set(
      Object.keys(values)
        .map((name) => flags[name]?.oneOf)
        .filter((o) => o?.group === group && o.form !== undefined)
        .map((o) => o!.form!),
    );
  const groups = new Set(Object.values(flags).map((f) => f.oneOf?.group));
  for (const group of groups) {
    if (group === undefined) continue;
    const onCommandLine = formsOf(given, group);
    if (onCommandLine.size === 0 || [...formsOf(file, group)].every((f) => onCommandLine.has(f))) continue;
    for (const name of Object.keys(file)) if (flags[name]?.oneOf?.group === group) delete file[name];
  }
  return { ...file, ...given };
}

function keysOf(flags: FlagTable): Map<string, [string, Flag]> {
  return new Map(
    Object.entries(flags)
      .filter(([name]) => !NOT_IN_FILES.has(name))
      .map(([name, flag]) => [configKey(name, flag), [name, flag]]),
  );
}

/** A file's value as the command line would give it: its text, true/false, or a list of texts. */
function valueOf(file: string, key: string, flag: Flag, raw: unknown): Value {
  const where = `--config ${file}: key "${key}"`;
  const scalar = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  const shown = (v: unknown) =>
    Array.isArray(v) ? "a list" : v !== null && typeof v === "object" ? "a mapping" : JSON.stringify(v);
  if (flag.type === "boolean") {
    if (raw !== "true" && raw !== "false") throw new UsageError(`${where}: expected true or false, got ${shown(raw)}`);
    return raw === "true";
  }
  if (flag.multiple) {
    if (!Array.isArray(raw))
      throw new UsageError(
        `${where}: expected a list, e.g. ${key}: [${JSON.stringify(flag.value ?? "VALUE")}], got ${shown(raw)}`,
      );
    return raw.map((v, i) => {
      if (key === "steps" && v !== null && typeof v === "object" && !Array.isArray(v)) return stepItem(where, i, v);
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

const STEP_KEYS = ["offset", "channel", "template"];

/**
 * A step of `steps:` written as a mapping, `{offset: +1d, channel: sms, template: spring-sale-sms}`, as the
 * command line's `+1d:sms:spring-sale-sms` (channel email, or none: `+1d:TEMPLATE`).
 */
function stepItem(where: string, i: number, v: object): string {
  const item = v as Record<string, unknown>;
  const at = `${where}: item ${i + 1}`;
  const stray = Object.keys(item).find((k) => !STEP_KEYS.includes(k));
  if (stray !== undefined) throw new UsageError(`${at}: unknown key "${stray}"; a step has ${STEP_KEYS.join(", ")}`);
  const text = (k: string) => {
    const value = item[k];
    if (value !== undefined && typeof value !== "string")
      throw new UsageError(`${at}: key "${k}" must be a string, e.g. offset: +1d, channel: sms, template: NAME`);
    return value;
  };
  const [offset, channel, template] = STEP_KEYS.map(text);
  if (offset === undefined) throw new UsageError(`${at}: a step needs offset (+Nd or +Nh from the first send)`);
  if (channel !== undefined && channel !== "email" && channel !== "sms")
    throw new UsageError(`${at}: channel "${channel}": email or sms`);
  return [offset, ...(channel === "sms" ? ["sms"] : []), ...(template === undefined ? [] : [template])].join(":");
}

/**
 * A path in a campaign file is relative to the file's folder (an S3 URL, an absolute path or no path at all stays as
 * it is: the flag's own check refuses "").
 */
function relativeTo(file: string, value: string): string {
  if (value === "" || /^s3:\/\//.test(value) || path.isAbsolute(value)) return value;
  return path.join(path.dirname(file), value);
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
