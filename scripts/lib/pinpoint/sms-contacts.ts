/**
 * Each user's SMS contact, for the user's EMAIL row: the number (and the place) of the user's first SMS endpoint in
 * export order that still counts once the whole export is known. A user's endpoints need not be adjacent in an export
 * (nor in one file), and nothing of them may be kept per user in a Map (millions of users), so:
 *
 * 1. First pass (candidate): every usable SMS line (endpoints.ts, smsContact) goes to a temporary file, in read order,
 *    with its ledger entry.
 * 2. Once the ledger is settled (choose): that file is read once; a user's first line that counts (not superseded,
 *    its endpoint not opted out, its number opted out nowhere) is chosen. Its record (user id first) goes to a second
 *    temporary file; kept in memory are its byte offset, the user id's 32-bit hash, and a slot in an open-addressing
 *    table of record numbers. The user's later lines are passed over.
 * 3. Second pass (contactOf): the user's record is found by hash and read back, one read of that record (a record
 *    whose hash is equal is read and its user id compared: the lookup is exact).
 *
 * Memory: about 20 bytes a user with an SMS endpoint (8 the offset, 4 the hash, 4 to 8 the slot); the contacts stay
 * on disk. (The launcher's CompactSeenKeys reads a group of records to confirm a key; here every lookup that finds its
 * user reads that user's record anyway.)
 */
import * as fs from "fs";
import * as path from "path";
import { EndpointLocation, SmsContact } from "./endpoints";
import { LedgerEntry } from "./ledger";
import { BufferedFile, lines } from "./lines";
import { fnv1a32, KeyHash } from "../recipients/seen-keys";
import { InternalError } from "../../../infra/core/errors";

/**
 * A contact as stored: [id, phone, timezone, latitude, longitude, postal code, country, from alpha-3 (0|1), the id
 * from the endpoint Id (0|1), the line's ordinal].
 */
type ContactRecord = [string, string, string, string, string, string, string, 0 | 1, 0 | 1, number];

/** A chosen contact as the importer reads it back: where its line is, and whether its id is the endpoint Id. */
export interface ChosenContact extends SmsContact {
  ordinal: number;
}

/** The table's key: a User.UserId as it is, an endpoint Id apart (an endpoint Id never gives a user's number). */
const keyOf = (id: string, idFrom: SmsContact["idFrom"]) => (idFrom === "Id" ? `\u0000${id}` : id);

const EMPTY = -1;
/** The table is doubled before more than half its slots are used. */
const MAX_LOAD = 0.5;

export class SmsContacts {
  private readonly candidatesFile: string;
  private readonly candidates: BufferedFile;
  private readonly chosenFile: string;
  private chosen: BufferedFile | undefined;
  private count = 0;
  /** Record n spans offsets[n] to offsets[n + 1] in the chosen file; hashes[n] is its user id's hash. */
  private offsets = new Float64Array(1 << 10);
  private hashes = new Uint32Array(1 << 10);
  /** Open addressing, linear probing: a record number, or EMPTY. */
  private slots = new Int32Array(1 << 11).fill(EMPTY);
  private fd: number | undefined;
  private buffer = Buffer.alloc(1 << 10);

  /** `hash` is injectable so tests can force collisions. */
  constructor(
    tmpDir: string,
    private readonly hashOf: KeyHash = fnv1a32,
  ) {
    this.candidatesFile = path.join(tmpDir, "sms-endpoints.partial");
    this.candidates = new BufferedFile(this.candidatesFile);
    this.chosenFile = path.join(tmpDir, "sms-endpoints.chosen.partial");
  }

  /** First pass: a usable SMS line (its ordinal), with its ledger entry. */
  candidate(entry: LedgerEntry, c: SmsContact, ordinal: number) {
    this.candidates.write(JSON.stringify([entry.idIndex, entry.date, recordOf(c, ordinal)]) + "\n");
  }

  /**
   * After the ledger is settled: each user's first candidate, in read order, for which `counts` (its line's entry and
   * its number) is true.
   */
  async choose(counts: (entry: LedgerEntry, phone: string) => boolean): Promise<void> {
    this.candidates.close();
    this.chosen = new BufferedFile(this.chosenFile);
    // The records are read back while the file is written (a user's second line): from the file, or not yet flushed.
    this.fd = fs.openSync(this.chosenFile, "r");
    for await (const { text } of lines(fs.createReadStream(this.candidatesFile))) {
      const [idIndex, date, record] = JSON.parse(text) as [number, number | null, ContactRecord];
      const key = keyOf(record[0], record[8] ? "Id" : "UserId");
      const hash = this.hashOf(key) >>> 0;
      if (this.find(key, hash) !== undefined || !counts({ idIndex, date }, record[1])) continue;
      this.append(record, hash);
    }
    this.chosen.close();
    this.chosen = undefined;
    fs.rmSync(this.candidatesFile, { force: true });
  }

  /** Second pass: the user's chosen contact, or undefined when the user has none. */
  contactOf(userId: string): Omit<SmsContact, "userId"> | undefined {
    const record = this.find(userId, this.hashOf(userId) >>> 0);
    return record && contactOf(record);
  }

  /** Second pass: the chosen contact of an id (a User.UserId, or an endpoint Id when `idFrom` says so). */
  chosenFor(id: string, idFrom: SmsContact["idFrom"]): ChosenContact | undefined {
    const key = keyOf(id, idFrom);
    const record = this.find(key, this.hashOf(key) >>> 0);
    return record && contactOf(record);
  }

  /** After the second pass: every chosen contact, in the order chosen. */
  async *all(): AsyncGenerator<ChosenContact> {
    this.chosen?.flush();
    for await (const { text } of lines(fs.createReadStream(this.chosenFile)))
      yield contactOf(JSON.parse(text) as ContactRecord);
  }

  /** Closes and removes the temporary files. */
  close() {
    this.candidates.close();
    this.chosen?.close();
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    fs.rmSync(this.candidatesFile, { force: true });
    fs.rmSync(this.chosenFile, { force: true });
  }

  /** The user's record, read back, or undefined when none was chosen. */
  private find(key: string, hash: number): ContactRecord | undefined {
    const mask = this.slots.length - 1;
    for (let i = hash & mask; this.slots[i] !== EMPTY; i = (i + 1) & mask) {
      const n = this.slots[i];
      if (this.hashes[n] !== hash) continue;
      const record = this.read(n);
      if (keyOf(record[0], record[8] ? "Id" : "UserId") === key) return record;
    }
    return undefined;
  }

  private append(record: ContactRecord, hash: number) {
    const n = this.count++;
    if (this.count >= this.offsets.length) {
      this.offsets = grown(this.offsets, new Float64Array(this.offsets.length * 2));
      this.hashes = grown(this.hashes, new Uint32Array(this.hashes.length * 2));
    }
    const line = JSON.stringify(record) + "\n";
    this.chosen!.write(line);
    this.offsets[n + 1] = this.offsets[n] + Buffer.byteLength(line);
    this.hashes[n] = hash;
    if (this.count > this.slots.length * MAX_LOAD) this.rehash(this.slots.length * 2);
    else this.place(n);
  }

  private place(n: number) {
    const mask = this.slots.length - 1;
    let i = this.hashes[n] & mask;
    while (this.slots[i] !== EMPTY) i = (i + 1) & mask;
    this.slots[i] = n;
  }

  private rehash(size: number) {
    this.slots = new Int32Array(size).fill(EMPTY);
    for (let n = 0; n < this.count; n++) this.place(n);
  }

  private read(n: number): ContactRecord {
    this.chosen?.flush();
    const length = this.offsets[n + 1] - this.offsets[n];
    if (this.buffer.length < length) this.buffer = Buffer.alloc(Math.max(length, 2 * this.buffer.length));
    for (let got = 0; got < length;) {
      const read = fs.readSync(this.fd!, this.buffer, got, length - got, this.offsets[n] + got);
      if (read === 0) throw new InternalError(`${this.chosenFile} ends inside record ${n}`);
      got += read;
    }
    return JSON.parse(this.buffer.toString("utf8", 0, length)) as ContactRecord;
  }
}

function grown<T extends Float64Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

function recordOf(c: SmsContact, ordinal: number): ContactRecord {
  const l = c.location;
  const alpha3 = l.countryFromAlpha3 ? 1 : 0;
  const fromId = c.idFrom === "Id" ? 1 : 0;
  return [c.userId, c.phone, c.timezone, l.latitude, l.longitude, l.postalCode, l.country, alpha3, fromId, ordinal];
}

function contactOf(r: ContactRecord): ChosenContact {
  const [userId, phone, timezone, latitude, longitude, postalCode, country, alpha3, fromId, ordinal] = r;
  const location: EndpointLocation = { latitude, longitude, postalCode, country, countryFromAlpha3: alpha3 === 1 };
  return { userId, idFrom: fromId === 1 ? "Id" : "UserId", phone, timezone, location, ordinal };
}
