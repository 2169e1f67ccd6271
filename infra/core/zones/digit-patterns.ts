/**
 * libphonenumber's metadata patterns as automata over the digits, to answer one question exactly: for every number that
 * starts with the digits `prefix` and has `length` digits, does a pattern give the same answer? (phone-validity.ts
 * caches a verdict for such a block of numbers only when every pattern libphonenumber-js consults does.)
 *
 * The patterns use a small part of JavaScript's syntax: digits, classes of digits (`[2-9]`), `\d`, groups (`(…)`,
 * `(?:…)`), `|`, the bounded repeats `?`, `{n}` and `{n,m}`, and `$` (the input's end). Without backreferences or
 * lookaround, a JavaScript regular expression matches a string exactly when the automaton of its language accepts it,
 * whatever order its backtracking tries; so `^(?:p)$`.test(s) is "s is in L(p)" and `^(?:p)`.exec(s) (or s.search(p)
 * === 0) is "some prefix of s is in L(p)". Anything else in a pattern throws UnsupportedPattern: the caller then never
 * caches for that calling code (a newer libphonenumber-js may use more syntax; it is then slower, never wrong).
 * Pure: no I/O.
 */
import { InternalError } from "../errors";

export class UnsupportedPattern extends InternalError {}

type Node =
  | { kind: "digits"; mask: number }
  | { kind: "end" }
  | { kind: "seq"; items: Node[] }
  | { kind: "alt"; options: Node[] }
  | { kind: "repeat"; item: Node; min: number; max: number };

const ALL_DIGITS = 0x3ff;
const DIGIT = /[0-9]/;

/** The syntax tree of `pattern`; throws UnsupportedPattern beyond the subset in this file's comment. */
function parse(pattern: string): Node {
  let at = 0;
  const fail = (): never => {
    throw new UnsupportedPattern(`pattern ${JSON.stringify(pattern)}: unsupported at ${at}`);
  };
  const number = (): number => {
    const start = at;
    while (DIGIT.test(pattern[at] ?? "")) at++;
    return at > start ? Number(pattern.slice(start, at)) : fail();
  };
  const digitClass = (): number => {
    let mask = 0;
    at++; // [
    while (pattern[at] !== "]") {
      if (!DIGIT.test(pattern[at] ?? "")) fail();
      const from = Number(pattern[at++]);
      let to = from;
      if (pattern[at] === "-") {
        at++;
        if (!DIGIT.test(pattern[at] ?? "")) fail();
        to = Number(pattern[at++]);
      }
      for (let d = from; d <= to; d++) mask |= 1 << d;
    }
    at++; // ]
    return mask;
  };
  const atom = (): Node => {
    const c = pattern[at];
    if (c === "(") {
      at += pattern.startsWith("(?:", at) ? 3 : 1;
      const inner = alternation();
      if (pattern[at++] !== ")") fail();
      return inner;
    }
    if (c === "[") return { kind: "digits", mask: digitClass() };
    if (c === "$") return (at++, { kind: "end" });
    if (c === "\\" && pattern[at + 1] === "d") return ((at += 2), { kind: "digits", mask: ALL_DIGITS });
    if (DIGIT.test(c ?? "")) return { kind: "digits", mask: 1 << Number(pattern[at++]) };
    return fail();
  };
  const repeated = (item: Node): Node => {
    if (pattern[at] === "?") return (at++, { kind: "repeat", item, min: 0, max: 1 });
    if (pattern[at] !== "{") return item;
    at++;
    const min = number();
    const max = pattern[at] === "," ? (at++, number()) : min;
    if (pattern[at++] !== "}" || max < min) fail();
    return { kind: "repeat", item, min, max };
  };
  const sequence = (): Node => {
    const items: Node[] = [];
    while (at < pattern.length && pattern[at] !== "|" && pattern[at] !== ")") items.push(repeated(atom()));
    return { kind: "seq", items };
  };
  function alternation(): Node {
    const options = [sequence()];
    while (pattern[at] === "|") (at++, options.push(sequence()));
    return options.length === 1 ? options[0] : { kind: "alt", options };
  }
  const tree = alternation();
  if (at !== pattern.length) fail();
  return tree;
}

/** A nondeterministic automaton: per state, its empty moves, its `$` moves (taken only at the end) and digit moves. */
interface Nfa {
  empty: number[][];
  end: number[][];
  moves: [mask: number, to: number][][];
  accept: number;
}

function build(tree: Node): { nfa: Nfa; start: number } {
  const nfa: Nfa = { empty: [], end: [], moves: [], accept: -1 };
  const state = () => (nfa.empty.push([]), nfa.end.push([]), nfa.moves.push([]), nfa.empty.length - 1);
  /** Wires `node` from state `from`; returns the state it ends in. */
  const wire = (node: Node, from: number): number => {
    switch (node.kind) {
      case "digits": {
        const to = state();
        nfa.moves[from].push([node.mask, to]);
        return to;
      }
      case "end": {
        const to = state();
        nfa.end[from].push(to);
        return to;
      }
      case "seq":
        return node.items.reduce((at, item) => wire(item, at), from);
      case "alt": {
        const to = state();
        for (const option of node.options) nfa.empty[wire(option, from)].push(to);
        return to;
      }
      case "repeat": {
        let at = from;
        for (let i = 0; i < node.min; i++) at = wire(node.item, at);
        const to = state();
        for (let i = node.min; i < node.max; i++) (nfa.empty[at].push(to), (at = wire(node.item, at)));
        nfa.empty[at].push(to);
        return to;
      }
    }
  };
  const start = state();
  nfa.accept = wire(tree, start);
  return { nfa, start };
}

/** What a pattern says of every number in a block: all match, none does, or some do. */
export type Verdict = "all" | "none" | "mixed";
const combine = (a: Verdict, b: Verdict): Verdict => (a === b ? a : "mixed");

/**
 * A pattern as a deterministic automaton built as it is walked (each state a set of the NFA's states, closed under its
 * empty moves), with the verdicts per state and digits left memoized: the same few states recur across numbers.
 */
export class DigitPattern {
  private readonly nfa: Nfa;
  private readonly sets: number[][] = [];
  private readonly ids = new Map<string, number>();
  private readonly next: Int32Array[] = [];
  /** Per state: the NFA accepts there (a prefix matched); accepts once `$` moves are allowed (the input ends here). */
  private readonly acceptsNow: boolean[] = [];
  private readonly acceptsAtEnd: boolean[] = [];
  private readonly memo = new Map<number, Verdict>();
  readonly start: number;

  constructor(readonly pattern: string) {
    const { nfa, start } = build(parse(pattern));
    this.nfa = nfa;
    this.start = this.intern([start]);
  }

  /** The state after reading digit `d` (0-9) in `state`; -1 is the dead state (nothing can match any more). */
  step(state: number, d: number): number {
    if (state < 0) return -1;
    const row = this.next[state];
    if (row[d] === -2) {
      const to: number[] = [];
      for (const s of this.sets[state]) for (const [mask, t] of this.nfa.moves[s]) if (mask & (1 << d)) to.push(t);
      row[d] = to.length === 0 ? -1 : this.intern(to);
    }
    return row[d];
  }

  /** The state after `digits` from the start. */
  walk(digits: string): number {
    let state = this.start;
    for (let i = 0; i < digits.length && state >= 0; i++) state = this.step(state, digits.charCodeAt(i) - 48);
    return state;
  }

  /** Whole-string matching (`^(?:p)$`) of the numbers that go on from `state` with `left` more digits. */
  whole(state: number, left: number): Verdict {
    if (state < 0) return "none";
    if (left === 0) return this.acceptsAtEnd[state] ? "all" : "none";
    return this.memoized(state, left, 0, () => this.overDigits(state, (s) => this.whole(s, left - 1)));
  }

  /** Prefix matching (`^(?:p)` or search(p) === 0) of the numbers that go on from `state` with `left` more digits. */
  prefix(state: number, left: number): Verdict {
    if (state < 0) return "none";
    if (this.acceptsNow[state]) return "all";
    if (left === 0) return this.acceptsAtEnd[state] ? "all" : "none";
    return this.memoized(state, left, 1, () => this.overDigits(state, (s) => this.prefix(s, left - 1)));
  }

  /** Prefix matching of the numbers that start with `digits` (already read) and go on with `left` more digits. */
  prefixAfter(digits: string, left: number): Verdict {
    let state = this.start;
    for (let i = 0; i < digits.length; i++) {
      if (state < 0) return "none";
      if (this.acceptsNow[state]) return "all";
      state = this.step(state, digits.charCodeAt(i) - 48);
    }
    return this.prefix(state, left);
  }

  private overDigits(state: number, verdict: (next: number) => Verdict): Verdict {
    let out = verdict(this.step(state, 0));
    for (let d = 1; d <= 9 && out !== "mixed"; d++) out = combine(out, verdict(this.step(state, d)));
    return out;
  }

  private memoized(state: number, left: number, mode: number, compute: () => Verdict): Verdict {
    const key = (state * 64 + left) * 2 + mode;
    let verdict = this.memo.get(key);
    if (verdict === undefined) this.memo.set(key, (verdict = compute()));
    return verdict;
  }

  /** The id of the state made of `states` and what their empty moves reach. */
  private intern(states: number[]): number {
    const closed = this.closure(states, false);
    const key = closed.join(",");
    let id = this.ids.get(key);
    if (id !== undefined) return id;
    id = this.sets.length;
    this.sets.push(closed);
    this.ids.set(key, id);
    this.next.push(new Int32Array(10).fill(-2));
    this.acceptsNow.push(closed.includes(this.nfa.accept));
    this.acceptsAtEnd.push(this.closure(closed, true).includes(this.nfa.accept));
    return id;
  }

  private closure(states: number[], atEnd: boolean): number[] {
    const seen = new Set(states);
    const stack = [...states];
    while (stack.length > 0) {
      const s = stack.pop()!;
      for (const t of atEnd ? [...this.nfa.empty[s], ...this.nfa.end[s]] : this.nfa.empty[s])
        if (!seen.has(t)) (seen.add(t), stack.push(t));
    }
    return [...seen].sort((a, b) => a - b);
  }
}
