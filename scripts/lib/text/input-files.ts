/**
 * How every command reads a file the user names (a list, a campaign file, stack outputs, a journeys file, a policy
 * config): the text, or one line naming the file and what is wrong with it in words (`list.csv: no such file`), not
 * Node's `ENOENT: no such file or directory, open '…'`.
 */
import * as fs from "fs";
import { InputError } from "../../../infra/core/errors";

/** What a file-system error means for the file the user named, in words; the code only when there are none. */
export function fileProblem(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  switch (code) {
    case "ENOENT":
      return "no such file";
    case "ENOTDIR":
      return "no such file (a part of its path is a file, not a folder)";
    case "EISDIR":
      return "a folder, not a file";
    case "EACCES":
    case "EPERM":
      return "not readable (permission denied)";
    default:
      return `cannot read (${code ?? (e as Error).message})`;
  }
}

/** `file`'s text (UTF-8), or an InputError `<shown>: no such file` (`shown` names it as the user gave it: `--config x`). */
export function readInputFile(file: string, shown: string = file): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new InputError(`${shown}: ${fileProblem(e)}`);
  }
}
