/**
 * One entry taken out of a bulk schedule's Input (the sender's input, infra/core/send/sender-input.ts SenderInput)
 * without touching the others: the text is cut, not parsed and written again, so every other entry, its template
 * data and headers stay byte for byte as the fan-out wrote them (whatever escapes Step Functions chose). Pure.
 */
import { InputError } from "../../../infra/core/errors";

/** Where a JSON value lies in a text: [start, end), and, for arrays and objects, where its parts lie. */
interface Span {
  start: number;
  end: number;
  elements?: Span[];
  members?: Map<string, Span>;
}

const WS = /[ \t\n\r]*/y;

function skip(text: string, i: number): number {
  WS.lastIndex = i;
  WS.exec(text);
  return WS.lastIndex;
}

const fail = (what: string, i: number): never => {
  throw new InputError(`the schedule's Input is not JSON (${what} at character ${i})`);
};

/** The value at `i` (after whitespace): its span and those of its parts. */
function scan(text: string, at: number): Span {
  const i = skip(text, at);
  const c = text[i];
  if (c === "{" || c === "[") {
    const object = c === "{";
    const span: Span = { start: i, end: i, ...(object ? { members: new Map() } : { elements: [] }) };
    let j = skip(text, i + 1);
    if (text[j] === (object ? "}" : "]")) return { ...span, end: j + 1 };
    for (;;) {
      if (object) {
        const key = scan(text, j);
        if (text[key.start] !== '"') fail("a key that is not a string", key.start);
        j = skip(text, key.end);
        if (text[j] !== ":") fail('no ":"', j);
        const value = scan(text, j + 1);
        span.members!.set(JSON.parse(text.slice(key.start, key.end)), value);
        j = skip(text, value.end);
      } else {
        const value = scan(text, j);
        span.elements!.push(value);
        j = skip(text, value.end);
      }
      if (text[j] === ",") {
        j = j + 1;
        continue;
      }
      if (text[j] !== (object ? "}" : "]")) fail("an unclosed " + (object ? "object" : "array"), j);
      return { ...span, end: j + 1 };
    }
  }
  if (c === '"') {
    let j = i + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
    if (j >= text.length) fail("an unclosed string", i);
    return { start: i, end: j + 1 };
  }
  const m = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
  m.lastIndex = i;
  if (!m.exec(text)) fail("an unexpected character", i);
  return { start: i, end: m.lastIndex };
}

function arrayAt(text: string, path: string[]): Span {
  let span = scan(text, 0);
  for (const key of path) {
    const next = span.members?.get(key);
    if (!next) throw new InputError(`the schedule's Input has no ${path.join(".")}: not a sender's input`);
    span = next;
  }
  if (!span.elements) throw new InputError(`the schedule's Input's ${path.join(".")} is not a list`);
  return span;
}

/** `text` with only the elements `keep` (indices, ascending) of the array at `path`, each as it was. */
function keepElements(text: string, path: string[], keep: (i: number) => boolean): string {
  const array = arrayAt(text, path);
  const kept = array.elements!.filter((_, i) => keep(i)).map((e) => text.slice(e.start, e.end));
  return text.slice(0, array.start) + "[" + kept.join(",") + "]" + text.slice(array.end);
}

const ENTRIES = ["bulk", "BulkEmailEntries"];
const RECIPIENTS = ["recipients"];

/** The recipient ids of a bulk schedule's Input, in entry order; undefined when the Input is not a sender's. */
export function bulkRecipients(input: string): string[] | undefined {
  try {
    const parsed = JSON.parse(input);
    const ids = parsed?.recipients;
    const entries = parsed?.bulk?.BulkEmailEntries;
    if (!Array.isArray(ids) || !Array.isArray(entries) || ids.length !== entries.length) return undefined;
    return ids.every((x) => typeof x === "string") ? ids : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Splits entry `index` out of a sender's Input: `rest`, the Input without it (every other entry and every other
 * byte as they were), and `alone`, the Input holding that entry only (for its own one-entry bulk schedule).
 */
export function splitBulkEntry(input: string, index: number): { rest: string; alone: string } {
  const n = arrayAt(input, ENTRIES).elements!.length;
  const ids = arrayAt(input, RECIPIENTS).elements!.length;
  if (ids !== n) throw new InputError(`the schedule's Input has ${n} entries but ${ids} recipient ids: not changed`);
  if (!Number.isInteger(index) || index < 0 || index >= n)
    throw new InputError(`no entry ${index + 1} of ${n} in the schedule's Input`);
  const cut = (keep: (i: number) => boolean) => keepElements(keepElements(input, ENTRIES, keep), RECIPIENTS, keep);
  return { rest: cut((i) => i !== index), alone: cut((i) => i === index) };
}
