/**
 * JSONata evaluated synchronously, for the synchronous ASL interpreter: the jsonata library only evaluates
 * asynchronously, so a worker thread evaluates and this thread waits for its answer (Atomics.wait). The expressions
 * are the library's own, not a re-implementation.
 */
import { MessageChannel, MessagePort, receiveMessageOnPort, Worker } from "worker_threads";

const WORKER = `
const { workerData } = require("worker_threads");
const jsonata = require(workerData.jsonata);
const flag = new Int32Array(workerData.shared);
workerData.port.on("message", async ({ id, expression, bindings }) => {
  let reply;
  try {
    reply = { id, value: await jsonata(expression).evaluate({}, bindings) };
  } catch (e) {
    reply = { id, error: String(e && e.message), code: e && e.code };
  }
  workerData.port.postMessage(JSON.parse(JSON.stringify(reply)));
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
`;

let evaluator: { port: MessagePort; flag: Int32Array } | undefined;
/** Questions asked so far: each answer carries its question's number. */
let asked = 0;
/** Waited on for a millisecond at a time (never notified): a synchronous pause. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

function start() {
  const shared = new SharedArrayBuffer(4);
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { shared, port: port2, jsonata: require.resolve("jsonata") },
    transferList: [port2],
  });
  worker.unref();
  port1.unref();
  return { port: port1, flag: new Int32Array(shared) };
}

export class JsonataError extends Error {
  constructor(
    message: string,
    public readonly code?: string,
  ) {
    super(message);
  }
}

/** Evaluates `expression` with `bindings` (e.g. {states: {input, context}}); an expression error throws JsonataError. */
export function evaluateJsonataSync(expression: string, bindings: Record<string, unknown>): unknown {
  evaluator ??= start();
  const id = ++asked;
  Atomics.store(evaluator.flag, 0, 0);
  evaluator.port.postMessage({ id, expression, bindings: JSON.parse(JSON.stringify(bindings)) });
  if (Atomics.wait(evaluator.flag, 0, 0, 10_000) === "timed-out")
    throw new Error(`JSONata did not answer in 10 s: ${expression}`);
  // The worker signals after posting; under load the message can reach this port a moment after the signal. An
  // answer to an earlier question (one that gave up waiting) is passed over: it never stands for this one's.
  const next = () => {
    for (let m = receiveMessageOnPort(evaluator!.port)?.message; m; m = receiveMessageOnPort(evaluator!.port)?.message)
      if (m.id === id) return m;
    return undefined;
  };
  let reply = next();
  for (let ms = 0; !reply && ms < 5_000; ms++) {
    Atomics.wait(PAUSE, 0, 0, 1);
    reply = next();
  }
  if (!reply) throw new Error(`JSONata gave no answer: ${expression}`);
  if (reply.error !== undefined) throw new JsonataError(reply.error, reply.code);
  return reply.value;
}
