/**
 * A run's output folder (plan-files.ts says what a run writes there): the run's lock on it (OutputLock), and the
 * refusal of a run whose inputs are files it would remove or replace there (refuseInputsInOutputFolder). A failure to
 * write there is one OutputError naming the folder or the file (failure).
 */
import { randomBytes } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { FindingsError, InputError } from "../../../infra/core/errors";

/** The output folder cannot be written: exit 1, like any other run that could not finish. */
export class OutputError extends FindingsError {}

export const FINAL_NAMES = ["summary.json", "plan.jsonl", "rejects.csv", "notes.csv", "holdout.csv"];
const LOCK_NAME = ".sendtime.lock";

export const failure = (where: string, e: unknown) => {
  const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  return new OutputError(`${where} (${code})`);
};

/** The files a command writes or removes in its output folder, and what its inputs are, for the message. */
export interface RunFiles {
  /** Names it writes or removes (a temporary `<name>.…` of each too). */
  names: readonly string[];
  /** What an input is: `the recipient list (--recipients list.csv)`. */
  input: (file: string) => string;
  /** When the run replaces its files, and what to move when one is refused: `before it reads the list`, `the list`. */
  when: string;
  move: string;
}

/** launch-campaign's (a dry run's) files. */
export const LAUNCH_RUN_FILES: RunFiles = {
  names: FINAL_NAMES,
  input: (file) => `the recipient list (--recipients ${file})`,
  when: "before it reads the list",
  move: "the list",
};

/**
 * Whether a run writes or removes a file of this name in its folder: a final name, the lock, or a temporary one of
 * theirs. Without case: on the file systems of macOS and Windows, Rejects.csv is rejects.csv.
 */
function isRunFileName(files: RunFiles, name: string): boolean {
  const lower = name.toLowerCase();
  return [...files.names, LOCK_NAME].some((n) => lower === n || lower.startsWith(n + "."));
}

/**
 * Throws InputError when one of `inputs` (local files the run reads) is, in output folder `dir`, a file the run writes
 * or removes (`files`): named so (as given, or where a symbolic link leads), or the same file under such a name (a
 * hard or symbolic link to it there). Touches nothing; a few stat calls.
 */
export function refuseInputsInOutputFolder(
  dir: string,
  inputs: readonly string[],
  files: RunFiles = LAUNCH_RUN_FILES,
): void {
  const realDir = realpathOrUndefined(dir);
  if (realDir === undefined) return; // no folder yet: nothing in it
  const runFiles = fs.readdirSync(realDir).filter((name) => isRunFileName(files, name));
  for (const input of inputs) {
    const stat = statOrUndefined(input);
    if (!stat) continue; // reading it will say so
    const refuse = (name: string, how: string) => {
      throw new InputError(
        `--out ${dir}: ${path.join(dir, name)} is ${files.input(input)}${how}; the run removes and rewrites ${name} ${files.when}: give another --out, or move or rename ${files.move}`,
      );
    };
    const given = path.basename(input);
    if (realpathOrUndefined(path.dirname(path.resolve(input))) === realDir && isRunFileName(files, given))
      refuse(given, "");
    const real = realpathOrUndefined(input)!;
    if (path.dirname(real) === realDir && isRunFileName(files, path.basename(real)))
      refuse(path.basename(real), " (through a symbolic link)");
    for (const name of runFiles) {
      const other = statOrUndefined(path.join(realDir, name));
      if (other && other.dev === stat.dev && other.ino === stat.ino)
        refuse(name, " (the same file under another name: a link)");
    }
  }
}

function realpathOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

function statOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}

/** Exclusive use of an output folder by this run, until release(). */
export class OutputLock {
  private released = false;
  private constructor(
    readonly dir: string,
    private readonly file: string,
    /** The local files the run reads, which it must never remove or replace. */
    readonly inputs: readonly string[],
    /** The files the run writes or removes in `dir`. */
    readonly files: RunFiles,
  ) {}

  /**
   * Creates the folder if needed and locks it; throws OutputError naming the holder when another run has it, and
   * InputError, before creating anything, when one of `inputs` is a file the run would remove or replace there.
   */
  static acquire(dir: string, inputs: readonly string[] = [], files: RunFiles = LAUNCH_RUN_FILES): OutputLock {
    if (dir === "") throw new OutputError(`--out '': cannot write the output folder (an empty path)`);
    refuseInputsInOutputFolder(dir, inputs, files);
    try {
      fs.mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw failure(`${dir}: cannot write the output folder`, e);
    }
    const file = path.join(dir, LOCK_NAME);
    const holder = { pid: process.pid, host: os.hostname(), started: new Date().toISOString() };
    // The lock appears whole or not at all: written under a private name, then hard-linked into place (link fails
    // if the lock exists). A lock created empty and then written could be read, by a second run, between the two.
    const draft = `${file}.${process.pid}-${randomBytes(4).toString("hex")}`;
    try {
      fs.writeFileSync(draft, JSON.stringify(holder) + "\n", { flag: "wx" });
    } catch (e) {
      throw failure(`${dir}: cannot write the output folder`, e);
    }
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          fs.linkSync(draft, file);
          return new OutputLock(dir, file, inputs, files);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST")
            throw failure(`${dir}: cannot write the output folder`, e);
        }
        const other = readHolder(file);
        if (!other || !gone(other)) {
          const who = other ? `pid ${other.pid} on ${other.host}, started ${other.started}` : "unreadable lock";
          throw new OutputError(
            `${dir}: in use by another run (${who}); wait for it to finish, or remove ${file} if that process is gone`,
          );
        }
        fs.rmSync(file, { force: true }); // its process is gone: take it over
      }
    } finally {
      fs.rmSync(draft, { force: true });
    }
    throw new OutputError(`${dir}: in use by another run (the lock ${file} keeps coming back)`);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    fs.rmSync(this.file, { force: true });
  }
}

function readHolder(file: string): { pid: number; host: string; started: string } | undefined {
  try {
    const h = JSON.parse(fs.readFileSync(file, "utf8"));
    return typeof h.pid === "number" && typeof h.host === "string" ? h : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the lock's process is known to be gone: only decidable on the same host. */
function gone(h: { pid: number; host: string }): boolean {
  if (h.host !== os.hostname()) return false;
  try {
    process.kill(h.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}
