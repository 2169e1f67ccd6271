/**
 * `sendtime <command> [flags]`: one command for every operator script (package.json `bin`; the npm scripts stay as
 * aliases). `sendtime --version`, `sendtime help [<command>]`; an unknown command gets the nearest name. Each command
 * is its script's own `main`, loaded only when asked for (a command's AWS SDK clients load with it).
 */
import * as fs from "fs";
import * as path from "path";
import { UsageError } from "../infra/core/errors";
import { Io, processIo, runMain } from "./lib/cli/run";
import { nearest } from "../infra/core/text/nearest";

type Main = (argv: string[], io?: Io) => Promise<number>;

/** The commands, as the scripts are named, each with what it does in a few words (the overview's lines). */
export const COMMANDS: Readonly<Record<string, string>> = {
  demo: "the whole path offline on a sample list: stack, plan, a mail, a report (start here)",
  "size-window": "size the flexible window for a list or a volume (offline)",
  "launch-campaign": "plan a list (--dry-run: offline) and launch it",
  "campaign-status": "a campaign's schedules, fan-outs and sends",
  "list-campaigns": "the campaigns of a stack, with their state",
  "campaign-report": "a campaign's sends, opens, clicks and bounces, per variant (text, JSON or HTML)",
  "pause-campaign": "hold a campaign's sends (the one door reads its state)",
  "resume-campaign": "let a paused campaign's sends go, as its missed-time policy says",
  "cancel-campaign": "stop a campaign: every send, also those under way",
  reschedule: "move or remove one recipient's send",
  redrive: "send again what the dead-letter queue holds, as the plan says",
  enrol: "enrol subscribers in a journey (events or a backlog list)",
  "import-pinpoint": "turn an Amazon Pinpoint export into a list and campaign files",
  "send-test": "send one rendered template to yourself",
  preview: "render the stack under Pulumi's mocks, with the policy pack's verdict (offline)",
};

const ROOT = path.resolve(__dirname, "..");

function version(): string {
  return (JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;
}

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    "Usage: sendtime <command> [flags]   (through npm: npm run -s sendtime -- <command> [flags])",
    "       sendtime help <command>      a command's flags",
    "       sendtime --version",
    "",
    "Commands:",
    ...Object.entries(COMMANDS).map(([c, what]) => `  ${c.padEnd(width)}  ${what}`),
    "",
    "Reference: docs/README.md",
    "",
  ].join("\n");
}

function commandMain(name: string): Main {
  if (!Object.prototype.hasOwnProperty.call(COMMANDS, name)) {
    const near = nearest(name, Object.keys(COMMANDS));
    throw new UsageError(
      `unknown command "${name}"${near ? ` (did you mean "${near}"?)` : ""}: sendtime help lists the commands`,
    );
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(path.join(__dirname, name)) as { main: Main }).main;
}

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.err(overview());
    return 2;
  }
  if (first === "--help" || first === "-h" || (first === "help" && rest.length === 0)) {
    io.out(overview());
    return 0;
  }
  if (first === "--version" || first === "-V") {
    io.out(`sendtime ${version()}\n`);
    return 0;
  }
  if (first === "help") return commandMain(rest[0])(["--help"], io);
  return commandMain(first)(rest, io);
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
