/**
 * What the whole export says about consent, learnt in the importer's first pass and asked in its second, so that no
 * recipient is written before every opt-out is known:
 *
 * - Each endpoint Id's current lines. An Id read more than once (two export jobs under one prefix) counts its line
 *   with the latest EffectiveDate; a line without a readable date cannot be ordered, so it may be the latest: it is
 *   current too (it ties). Older lines are superseded. Of tied current lines, one that opts out wins (an opt-out is
 *   never overridden by a tie); otherwise the first read counts.
 * - The opted-out addresses: the address (trimmed, lower-cased) of every line that opts out, whatever its channel,
 *   status or date — an opt-out is the person's, not the endpoint's: a later line of that endpoint with another
 *   address does not take it back — unless a line of the same endpoint with a later EffectiveDate opts that same
 *   address back in (OptOut NONE). A line without an Id or without a readable date cannot be followed by a later one.
 *
 * Memory stays bounded for exports of millions of endpoints: per endpoint Id about 6 bytes in a compact exact set
 * (the Ids themselves in a temporary file) and 17 bytes of typed arrays; opting-out lines, and the dated opting-in lines
 * of endpoints with an Id, go to temporary files during the first pass; settling keeps in memory only the opt-outs of
 * endpoints read more than once (the only ones a later line can lift), and the opted-out addresses in a second
 * compact set.
 */
import * as fs from "fs";
import * as path from "path";
import {
  consentAddress,
  effectiveDateMs,
  endpointIdKey,
  foldAddress,
  isWellFormed,
  optsOut,
  PinpointEndpoint,
} from "./endpoints";
import { BufferedFile, lines } from "./lines";
import { CompactSeenKeys } from "../recipients/seen-keys";
import { InternalError } from "../../../infra/core/errors";

/** Where a line is: its global ordinal is the line number plus the lines of the files read before it. */
export interface LinePlace {
  file: string;
  line: number;
}

/** A line's part in the ledger: its endpoint Id's index (-1 when it has none) and its EffectiveDate (null when none). */
export interface LedgerEntry {
  idIndex: number;
  date: number | null;
}

const REPEATED = 1;
const OPTED_OUT = 2;
const TAKEN = 4;

/** An opt-out's endpoint (its index) and folded address, as one key. */
const liftKey = (idIndex: number, address: string) => `${idIndex} ${address}`;

export class EndpointLedger {
  /** Endpoint Id → its index in the arrays below. */
  private readonly ids = new CompactSeenKeys();
  /** Per Id: its latest readable EffectiveDate (ms; NaN while none), the ordinal of its first line at that date, flags. */
  private latest = new Float64Array(1 << 12).fill(NaN);
  private latestAt = new Float64Array(1 << 12);
  private flags = new Uint8Array(1 << 12);
  /** Opting-out lines, [ordinal, idIndex, date, folded address] a line, until settle(). */
  private readonly optOutsFile: string;
  private readonly optOuts: BufferedFile;
  /** Dated opting-in lines with an Id, `idIndex,date,"folded address"` a line, until settle(). */
  private readonly optInsFile: string;
  private readonly optIns: BufferedFile;
  /** Folded address → the ordinal of the first current line that opts it out (after settle()). */
  private readonly optedOut = new CompactSeenKeys();
  private readonly starts: { ordinal: number; file: string }[] = [];
  private settled = false;
  /** Endpoint Ids read on more than one line. */
  repeatedIds = 0;

  constructor(tmpDir: string) {
    this.optOutsFile = path.join(tmpDir, "opt-outs.partial");
    this.optOuts = new BufferedFile(this.optOutsFile);
    this.optInsFile = path.join(tmpDir, "opt-ins.partial");
    this.optIns = new BufferedFile(this.optInsFile);
  }

  /** Marks where a file's lines start: its line n is ordinal `ordinal + n`. */
  startFile(file: string, ordinal: number) {
    this.starts.push({ ordinal, file });
  }

  /** First pass: one line of the export. `exactText` is false when its bytes were not valid UTF-8. */
  observe(ordinal: number, e: PinpointEndpoint, exactText: boolean): LedgerEntry {
    // On a line that was not valid UTF-8, a field holding U+FFFD may be one that held the invalid bytes: not the Id.
    const usable = (s: string | undefined) => s !== undefined && (exactText || !s.includes("\uFFFD"));
    const key = endpointIdKey(e);
    const date = effectiveDateMs(e) ?? null;
    let idIndex = -1;
    if (usable(key)) {
      const first = this.ids.firstLine(key!);
      if (first === undefined) {
        idIndex = this.ids.size;
        this.ids.add(key!, idIndex);
        this.grow(idIndex);
      } else {
        idIndex = first;
        if (!(this.flags[idIndex] & REPEATED)) {
          this.flags[idIndex] |= REPEATED;
          this.repeatedIds++;
        }
      }
      if (date !== null && !(date <= this.latest[idIndex])) {
        this.latest[idIndex] = date;
        this.latestAt[idIndex] = ordinal;
      }
    }
    if (optsOut(e)) {
      // Any opting-out line's address counts, bytes read exactly or not: a wrong one only keeps an address out.
      const address = consentAddress(e);
      if (address !== "" && isWellFormed(address))
        this.optOuts.write(JSON.stringify([ordinal, idIndex, date, address]) + "\n");
    } else if (idIndex >= 0 && date !== null && exactText) {
      // An opt-in may lift an earlier opt-out of its endpoint and address (settle): only one read exactly can.
      const address = consentAddress(e);
      if (address !== "" && isWellFormed(address)) this.optIns.write(`${idIndex},${date},${JSON.stringify(address)}\n`);
    }
    return { idIndex, date };
  }

  /**
   * After the first pass: the opted-out addresses, from every opting-out line but those a later opt-in of the same
   * endpoint and address lifts; and the endpoints whose current lines opt out (a tie never overrides an opt-out).
   */
  async settle(): Promise<void> {
    this.optOuts.close();
    this.optIns.close();
    const lifted = await this.liftedOptOuts();
    for await (const { text } of lines(fs.createReadStream(this.optOutsFile))) {
      const [ordinal, idIndex, date, address] = JSON.parse(text) as [number, number, number | null, string];
      if (idIndex >= 0 && this.current(idIndex, date)) this.flags[idIndex] |= OPTED_OUT;
      if (idIndex >= 0 && lifted.has(liftKey(idIndex, address))) continue;
      if (this.optedOut.firstLine(address) === undefined) this.optedOut.add(address, ordinal);
    }
    fs.rmSync(this.optOutsFile, { force: true });
    fs.rmSync(this.optInsFile, { force: true });
    this.settled = true;
  }

  /**
   * The opt-outs (liftKey: endpoint and address) that a line of the same endpoint opting the same address in lifts:
   * its EffectiveDate is later than every opt-out's of them (an undated opt-out may be the latest: never lifted).
   * Only an endpoint read more than once has another line.
   */
  private async liftedOptOuts(): Promise<Set<string>> {
    const latestOptOut = new Map<string, number>();
    for await (const { text } of lines(fs.createReadStream(this.optOutsFile))) {
      const [, idIndex, date, address] = JSON.parse(text) as [number, number, number | null, string];
      if (idIndex < 0 || !(this.flags[idIndex] & REPEATED)) continue;
      const key = liftKey(idIndex, address);
      latestOptOut.set(key, Math.max(latestOptOut.get(key) ?? -Infinity, date ?? Infinity));
    }
    const lifted = new Set<string>();
    if (latestOptOut.size === 0) return lifted;
    for await (const { text } of lines(fs.createReadStream(this.optInsFile))) {
      const comma = text.indexOf(",");
      const idIndex = Number(text.slice(0, comma));
      if (!(this.flags[idIndex] & REPEATED)) continue;
      const second = text.indexOf(",", comma + 1);
      const date = Number(text.slice(comma + 1, second));
      const key = liftKey(idIndex, JSON.parse(text.slice(second + 1)) as string);
      const optedOut = latestOptOut.get(key);
      if (optedOut !== undefined && date > optedOut) lifted.add(key);
    }
    return lifted;
  }

  /**
   * Second pass, every line in the order read: why the line does not count (superseded), or undefined. `recipient`
   * says whether the line would otherwise be written: only those lose a tie (a tied line skipped for a reason of its
   * own keeps that reason, but still takes the endpoint's turn).
   */
  superseded(entry: LedgerEntry, endpointId: string, recipient: boolean): string | undefined {
    if (!this.settled) throw new InternalError("the ledger is asked before it is settled");
    const { idIndex, date } = entry;
    if (idIndex < 0) return undefined;
    if (!this.current(idIndex, date)) {
      const at = this.place(this.latestAt[idIndex]);
      return `endpoint ${endpointId}: ${at.file}:${at.line} has a later EffectiveDate (${new Date(this.latest[idIndex]).toISOString()})`;
    }
    const flags = this.flags[idIndex];
    this.flags[idIndex] |= TAKEN;
    if (!recipient) return undefined;
    if (flags & OPTED_OUT)
      return `endpoint ${endpointId}: a line of it with the same EffectiveDate, or without one, opts out (an opt-out is never overridden by a tie)`;
    if (flags & TAKEN)
      return `endpoint ${endpointId}: an earlier line of it with the same EffectiveDate, or without one, counts (the first read of tied lines)`;
    return undefined;
  }

  /**
   * After settle(), for a line that is no recipient (a user's SMS endpoint): whether it still counts for its endpoint
   * — at the endpoint's latest EffectiveDate (or undated), and no line of the endpoint that ties with it opts out.
   * Unlike superseded(), it takes no turn: the second pass asks that of every line in order.
   */
  counts(entry: LedgerEntry): boolean {
    if (!this.settled) throw new InternalError("the ledger is asked before it is settled");
    const { idIndex, date } = entry;
    return idIndex < 0 || (this.current(idIndex, date) && !(this.flags[idIndex] & OPTED_OUT));
  }

  /** The line that opts `address` out (the first current one read), or undefined when none does. */
  optedOutBy(address: string): LinePlace | undefined {
    const ordinal = this.optedOut.firstLine(foldAddress(address));
    return ordinal === undefined ? undefined : this.place(ordinal);
  }

  /** Bytes of memory the ledger's tables take (for the benchmark). */
  get tableBytes(): number {
    return (
      this.ids.tableBytes +
      this.optedOut.tableBytes +
      this.latest.byteLength +
      this.latestAt.byteLength +
      this.flags.byteLength
    );
  }

  close() {
    this.optOuts.close();
    this.optIns.close();
    fs.rmSync(this.optInsFile, { force: true });
    this.ids.close();
    this.optedOut.close();
    fs.rmSync(this.optOutsFile, { force: true });
  }

  /** Current: at the Id's latest readable date, or without a readable date of its own (it may be the latest). */
  private current(idIndex: number, date: number | null): boolean {
    return date === null || date === this.latest[idIndex];
  }

  private place(ordinal: number): LinePlace {
    let lo = 0;
    for (let hi = this.starts.length - 1; lo < hi;) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid].ordinal < ordinal) lo = mid;
      else hi = mid - 1;
    }
    return { file: this.starts[lo].file, line: ordinal - this.starts[lo].ordinal };
  }

  private grow(index: number) {
    if (index < this.flags.length) return;
    const size = this.flags.length * 2;
    const latest = new Float64Array(size).fill(NaN);
    latest.set(this.latest);
    const latestAt = new Float64Array(size);
    latestAt.set(this.latestAt);
    const flags = new Uint8Array(size);
    flags.set(this.flags);
    [this.latest, this.latestAt, this.flags] = [latest, latestAt, flags];
  }
}
