/**
 * How every AWS call of the operator scripts is made: within the command's time limit (a Deadline, from
 * --timeout-seconds), as one line naming what failed when it fails, with "still waiting" progress when it is slow,
 * and with pagination that refuses a page token the service already returned (instead of looping forever).
 */
import { awsErrorLine, isAwsError, lastAttemptError } from "./clients";
import { DeadlineExceeded, FindingsError } from "../../../infra/core/errors";

/** Waiting and the time, replaceable by tests so that polling loops run without real sleeps (and redrive at a set time). */
export const clock = {
  /** Now, epoch ms: what redrive times its sends from. */
  now: (): number => Date.now(),
  sleep: (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done);
    }),
  /** How long a call may run before "still waiting" is printed, and how often after that. */
  heartbeatMs: 5_000,
};

/** The time limit of one command: every AWS call and every wait between polls takes its signal. */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  readonly signal = this.controller.signal;
  /** When the limit runs out (epoch ms): clean-up calls that run after it are bounded by it too. */
  readonly endsAt: number;

  constructor(
    readonly seconds: number,
    /** Where "still waiting" lines go (stderr in the CLIs). */
    readonly progress: (text: string) => void = () => {},
  ) {
    this.endsAt = Date.now() + seconds * 1000;
    this.timer = setTimeout(() => this.controller.abort(), seconds * 1000);
    this.timer.unref();
  }

  get expired(): boolean {
    return this.signal.aborted;
  }

  /** The time-limit line; `since` (epoch ms): an AWS error seen from then on (a retried SlowDown) is named as the cause. */
  exceeded(what: string, since?: number): DeadlineExceeded {
    const seen = since === undefined ? undefined : lastAttemptError(since);
    return new DeadlineExceeded(
      `${what}: no result within the command's time limit of ${this.seconds} s (--timeout-seconds)${seen ? `; the last error from AWS: ${seen}` : ""}`,
    );
  }

  /** Waits `ms`, or less when the deadline comes first (the caller then finds `expired`). */
  sleep(ms: number): Promise<void> {
    return clock.sleep(ms, this.signal);
  }

  /** Releases the timer (a finished command). */
  dispose(): void {
    clearTimeout(this.timer);
  }
}

/**
 * Work that is not one AWS call (an export read through, its calls each bounded by their own limit) within the
 * command's limit: past it, the command stops with the time-limit line naming `what`.
 */
export function beforeDeadline<T>(d: Deadline, what: string, work: Promise<T>): Promise<T> {
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(d.exceeded(what));
    if (d.expired) onAbort();
    else d.signal.addEventListener("abort", onAbort);
  });
  aborted.catch(() => {});
  return Promise.race([work, aborted]).finally(() => d.signal.removeEventListener("abort", onAbort));
}

/**
 * One AWS call: `call` gets the abort signal to pass to `client.send`; a failure becomes one line naming `what`;
 * `ifNotFound` answers (or throws) when the resource does not exist. The deadline is enforced here too (a race),
 * so a retry back-off inside the SDK cannot outlive it.
 */
export async function awsCall<T, U = never>(
  d: Deadline,
  what: string,
  call: (options: { abortSignal: AbortSignal }) => Promise<T>,
  ifNotFound?: () => U,
): Promise<T | U> {
  if (d.expired) throw d.exceeded(what);
  const started = Date.now();
  // The SDK retries throttling and 5xx answers by itself: what it saw is named when the time runs out.
  const heartbeat = setInterval(() => {
    const seen = lastAttemptError(started);
    d.progress(
      `still waiting for ${what} (${Math.round((Date.now() - started) / 1000)} s${seen ? `; retrying after ${seen}` : ""})`,
    );
  }, clock.heartbeatMs);
  heartbeat.unref();
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(d.exceeded(what, started));
    d.signal.addEventListener("abort", onAbort);
  });
  try {
    return await Promise.race([call({ abortSignal: d.signal }), aborted]);
  } catch (e) {
    if (e instanceof DeadlineExceeded) throw e;
    if (d.expired) throw d.exceeded(what, started);
    if (e instanceof FindingsError) throw e; // already worded by the caller
    if (ifNotFound && isAwsError(e, "ResourceNotFoundException")) return ifNotFound();
    throw new FindingsError(awsErrorLine(what, e));
  } finally {
    clearInterval(heartbeat);
    d.signal.removeEventListener("abort", onAbort);
    aborted.catch(() => {});
  }
}

/**
 * Every page of a paginated AWS call, in order. A page token the service already returned is an error (a
 * misbehaving endpoint would otherwise keep the command listing the same pages forever).
 */
export async function* allPages<P>(
  d: Deadline,
  what: string,
  fetchPage: (token: string | undefined, options: { abortSignal: AbortSignal }) => Promise<P>,
  nextToken: (page: P) => string | undefined,
): AsyncGenerator<P> {
  const seen = new Set<string>();
  let token: string | undefined;
  for (let page = 1; ; page++) {
    const result = await awsCall(d, page === 1 ? what : `${what} (page ${page})`, (o) => fetchPage(token, o));
    yield result;
    token = nextToken(result);
    if (!token) return;
    if (seen.has(token)) {
      const shown = token.length > 24 ? `${token.slice(0, 24)}…` : token;
      throw new FindingsError(
        `${what}: the service returned page token "${shown}" a second time (page ${page}); stopped instead of looping`,
      );
    }
    seen.add(token);
  }
}

/** A progress line at most every `everyMs` (slow listings report how far they are without flooding stderr). */
export function throttled(progress: (text: string) => void, everyMs = 2_000): (text: () => string) => void {
  let last = 0;
  return (text) => {
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    progress(text());
  };
}

/**
 * One AWS call with its own time limit (tools that have no command deadline): the signal fires after `ms`, and a
 * call that ignores it is abandoned all the same; a failure becomes one line naming `what`, as `Failure` (exit 1 by
 * default; the importer's S3 reads are input errors, exit 2).
 */
export async function boundedCall<T>(
  what: string,
  ms: number,
  call: (abortSignal: AbortSignal) => Promise<T>,
  Failure: new (message: string) => Error = FindingsError,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Failure(`${what}: no answer within ${seconds(ms)} s`));
    }, ms);
  });
  try {
    return await Promise.race([call(controller.signal), timeout]);
  } catch (e) {
    if (e instanceof Failure) throw e;
    if (controller.signal.aborted) throw new Failure(`${what}: no answer within ${seconds(ms)} s`);
    throw new Failure(awsErrorLine(what, e));
  } finally {
    clearTimeout(timer);
    timeout.catch(() => {});
  }
}

/** Seconds for a message: whole from 1 s on, tenths below. */
const seconds = (ms: number) => (ms >= 1_000 ? String(Math.round(ms / 1000)) : (Math.max(ms, 0) / 1000).toFixed(1));
