/**
 * Progress on stderr for the long reads (planning, size-window --recipients, import-pinpoint, an enrol backlog): rows
 * done, the rate and, when the total is known, how long is left. Shown when stderr is a terminal or --progress is
 * given, once the work has run ~2 s: on a terminal one line rewritten in place (\r) at most 4 times a second and
 * cleared at the end; elsewhere (a log, a pipe) one line every ~5 s. Never on stdout.
 */
import { count, formatDuration } from "../text/format";
import type { RowProgress } from "../recipients/row-progress";
import type { Io } from "./run";

/** The time, replaceable by tests so that a short list passes the first report. */
export const progressClock = { now: (): number => Date.now() };

/** When lines are printed (ms): the first after `firstMs` of a phase, then every `terminalMs` or `lineMs`. */
export const PROGRESS_TIMING = { firstMs: 2_000, terminalMs: 250, lineMs: 5_000 };

/** --progress, for a command's flag table. */
export function progressFlag(group?: string) {
  return {
    progress: {
      type: "boolean",
      help: "progress on stderr (rows, rate, time left) even when stderr is not a terminal",
      ...(group === undefined ? {} : { group }),
    },
  } as const;
}

const CLEAR_LINE = "\r\x1b[K";

export class ProgressReporter {
  private phase?: { what: string; startedAt: number; startDone: number };
  private printedAt = -Infinity;
  /** A terminal line is on the screen (it is cleared before any other stderr line). */
  private shown = false;

  constructor(
    private readonly io: Io,
    /** What the work is, first on each line ("planning"). */
    private readonly label: string,
    readonly enabled: boolean,
    private readonly terminal: boolean,
  ) {}

  /** The callback the domain loop takes. */
  readonly report: RowProgress = (done, what, total) => {
    if (!this.enabled) return;
    const now = progressClock.now();
    // A new phase (endpoints read, then written) has its own rate, measured from its first report.
    if (this.phase?.what !== what) this.phase = { what, startedAt: now, startDone: done };
    const { startedAt, startDone } = this.phase;
    if (now - startedAt < PROGRESS_TIMING.firstMs) return;
    if (now - this.printedAt < (this.terminal ? PROGRESS_TIMING.terminalMs : PROGRESS_TIMING.lineMs)) return;
    this.printedAt = now;
    const rate = ((done - startDone) * 1000) / (now - startedAt);
    const line = progressLine(this.label, done, what, rate, total);
    if (this.terminal) {
      this.io.err(`\r${line}\x1b[K`);
      this.shown = true;
    } else this.io.err(`${line}\n`);
  };

  /** Another stderr line (a warning, a "still waiting"): the terminal line is cleared first, redrawn by the next report. */
  say(text: string): void {
    this.clear();
    this.io.err(`${text}\n`);
  }

  /** The work is over: the terminal line goes. */
  end(): void {
    this.clear();
  }

  private clear(): void {
    if (!this.shown) return;
    this.io.err(CLEAR_LINE);
    this.shown = false;
  }
}

/** `planning: 412,288 rows read (41%), 125,300/s, about 5 s left`; the share and time left only with a total. */
export function progressLine(label: string, done: number, what: string, perSecond: number, total?: number): string {
  const parts = [`${label}: ${count(done)} ${what}`];
  const known = total !== undefined && total >= done && total > 0;
  if (known) parts[0] += ` (${Math.floor((done / total) * 100)}%)`;
  if (perSecond > 0) {
    parts.push(`${count(Math.round(perSecond))}/s`);
    if (known) parts.push(`about ${formatDuration(Math.ceil((total - done) / perSecond))} left`);
  }
  return parts.join(", ");
}

/** The reporter of one command run: on with --progress, or when stderr is a terminal. */
export function progressReporter(io: Io, flag: boolean, label: string): ProgressReporter {
  const terminal = io.errIsTerminal === true;
  return new ProgressReporter(io, label, flag || terminal, terminal);
}
