import { spawnSync } from "child_process";
import * as path from "path";
import { failure, Io } from "../../scripts/lib/cli/run";

export const ROOT = path.resolve(__dirname, "..", "..");

/** Runs a script the way a user does (ts-node, transpile-only), from the project root. */
export function runScript(script: string, args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  const r = spawnSync(process.execPath, [require.resolve("ts-node/dist/bin"), "--transpile-only", path.join(ROOT, script), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    input: options.input,
    env: { ...process.env, ...options.env },
    maxBuffer: 64 * 1024 * 1024,
  });
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
