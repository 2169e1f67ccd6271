import { spawnSync } from "child_process";
import * as path from "path";
import { failure, Io } from "../../scripts/lib/cli/run";

export const ROOT = path.resolve(__dirname, "..", "..");

/** Runs a script the way a user does (ts-node, transpile-only), from the project root. */
export function runScript(
  script: string,
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
) {
  const r = spawnSync(
    process.execPath,
    [require.resolve("ts-node/dist/bin"), "--transpile-only", path.join(ROOT, script), ...args],
    {
      cwd: ROOT,
      encoding: "utf8",
      input: options.input,
      env: { ...process.env, ...options.env },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs a CLI's `main(argv, io)` in this process, turning a thrown error into its line and exit code as runMain does. */
export async function runMain(main: (argv: string[], io: Io) => Promise<number>, args: string[]) {
  let stdout = "",
    stderr = "";
  const io: Io = { out: (t) => (stdout += t), err: (t) => (stderr += t) };
  let code: number;
  try {
    code = await main(args, io);
  } catch (e) {
    const f = failure(e);
    stderr += f.line;
    code = f.code;
  }
  return { code, stdout, stderr };
}

/**
 * `base` with `more` on top: a flag of `more` that `base` already has replaces its value (or is dropped, for a flag
 * without a value); the others are appended, each time given. For tests' common flags: the CLIs refuse a one-value
 * flag given twice. Not for a flag given several times on purpose (--step, --variant) that `base` has too.
 */
export function withFlags(base: string[], more: string[]): string[] {
  const args = [...base];
  for (let i = 0; i < more.length; i++) {
    const flag = more[i];
    const value = flag.startsWith("--") && i + 1 < more.length && !more[i + 1].startsWith("--") ? more[++i] : undefined;
    const at = flag.startsWith("--") ? base.indexOf(flag) : -1;
    if (at < 0) args.push(...(value === undefined ? [flag] : [flag, value]));
    else if (value !== undefined) args[at + 1] = value;
  }
  return args;
}
