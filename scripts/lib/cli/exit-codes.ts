/**
 * Every command's exit codes, in one place: each command's --help shows its row, and the docs show the table.
 *
 * The rule for rows (recipients, endpoints, subscribers): a row that cannot be used is rejected with its reason,
 * written where the user reads it (rejects.csv, skipped.csv, the report and its --json), and does not by itself
 * change the exit code. Exit 1 is for a finding about the run as a whole: nothing to send or import (every row
 * rejected), not launched, a send that will not happen (late), an AWS error, the time limit. Exit 2: bad flags or an
 * input that cannot be read (one line naming the file, row or key and what is allowed).
 */
export interface ExitCodes {
  readonly 0: string;
  readonly 1: string;
  readonly 2: string;
}

export const ROWS_RULE =
  "A rejected row is written with its reason (rejects.csv, skipped.csv, the report, --json) and does not change the exit code; 1 is for a finding about the whole run.";

const BAD_FLAGS = "bad flags or input";

export const EXIT_CODES = {
  "launch-campaign": {
    0: "planned or launched",
    1: "not launched (nothing to send, quota, no window fits), an AWS error, a bad upload, failed fan-out rows, the time limit",
    2: "bad flags, campaign file or list, or a failed preflight check",
  },
  "size-window": {
    0: "sized (rejected rows counted by reason, as the launcher would reject them)",
    1: "no window up to 1,440 minutes fits, or nothing to send (every row rejected)",
    2: "bad flags, campaign file or list",
  },
  enrol: {
    0: "done (rejected subscribers listed with their reason)",
    1: "nothing to enrol (every subscriber rejected), a step late (not sent), an AWS error or the time limit",
    2: BAD_FLAGS,
  },
  "import-pinpoint": {
    0: "imported (skipped endpoints in skipped.csv with their reason)",
    1: "no endpoint could be imported, the campaign cannot be a sendtime campaign (the notes say what to use), or the time limit",
    2: "bad flags or input (file, line or key, what is allowed)",
  },
  preview: { 0: "ok (advisory findings allowed)", 1: "a mandatory policy violation", 2: "bad flags or stack config" },
  "cancel-campaign": {
    0: "cancelled: nothing of the campaign can send any more (and its guardrail alarms deleted)",
    1: "a send of the campaign could still fire or be under way (state not set, group still there, a fan-out not stopped, the wait cut short, an AWS error, the time limit), or its guardrail alarms not deleted (the campaign is cancelled all the same)",
    2: "bad flags or input, or a stack without the ledger",
  },
  "pause-campaign": {
    0: "paused: no send of the campaign leaves until resume-campaign",
    1: "a cancelled campaign, sends that may still be under way (the wait cut short), an AWS error or the time limit",
    2: "bad flags or input, or a stack without the ledger",
  },
  "resume-campaign": {
    0: "live again, held sends counted",
    1: "a cancelled campaign, the held sends not fully counted, an AWS error or the time limit",
    2: "bad flags or input, or a stack without the ledger",
  },
  "campaign-status": {
    0: "ok",
    1: "an AWS error or the time limit (a failing dead-letter queue read still prints the report)",
    2: BAD_FLAGS,
  },
  "campaign-report": {
    0: "ok (also for a campaign with no sends yet)",
    1: "nothing known of the campaign, an AWS error or the time limit",
    2: "bad flags or a bad --conversions file",
  },
  "list-campaigns": {
    0: "ok (also when there is no campaign)",
    1: "an AWS error, the time limit, or a page token AWS repeated",
    2: "bad flags or outputs",
  },
  redrive: {
    0: "every message of the campaign(s) redriven or with nothing left to send, or none there",
    1: "anything left in the queue (not a pointer, not in the plan, unknown outcomes), an AWS error or the time limit",
    2: "bad flags or stack outputs",
  },
  reschedule: {
    0: "done (--dry-run: what it would do, said)",
    1: "no such schedule, a send that may have fired, an AWS error or the time limit",
    2: BAD_FLAGS,
  },
  demo: {
    0: "every step done: the files are in DIR",
    1: "a step found a problem (a mandatory policy violation, nothing planned)",
    2: "bad flags, or DIR cannot be written",
  },
  "send-test": {
    0: "rendered, sent, or (--dry-run) checked",
    1: "SES refused or did not answer, or the time limit",
    2: "bad flags, data or template",
  },
} as const satisfies Record<string, ExitCodes>;

/** The help's exit-code lines, wrapped at 120 columns. */
export function exitCodesLines(codes: ExitCodes): string[] {
  const words = `Exit codes: 0 ${codes[0]}; 1 ${codes[1]}; 2 ${codes[2]}.`.split(" ");
  const lines: string[] = [];
  for (const word of words) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + 1 + word.length <= 120) lines[last] += ` ${word}`;
    else lines.push(lines.length ? `  ${word}` : word);
  }
  return lines;
}

/** The table as Markdown, for the docs. */
export function exitCodesMarkdown(): string {
  const rows = Object.entries(EXIT_CODES).map(([c, e]) => `| \`${c}\` | ${e[0]} | ${e[1]} | ${e[2]} |`);
  return ["| command | 0 | 1 | 2 |", "|---|---|---|---|", ...rows, "", ROWS_RULE].join("\n") + "\n";
}
