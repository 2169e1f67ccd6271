/**
 * Streams a Pinpoint endpoint export (newline-delimited JSON, each file plain or gzip, detected by its first bytes)
 * into a sendtime recipient CSV and a skipped file, in two passes so that no recipient is written before every
 * opt-out of the export is known, with memory that barely grows with the export:
 *
 * 1. The export is read once. Each line is decided on its own (endpointOutcome) and that outcome goes to a temporary
 *    file; the ledger (pinpoint-ledger.ts) learns each endpoint Id's latest EffectiveDate and the lines that opt out.
 * 2. The temporary file is read back in the same order: a line that is superseded, opted out elsewhere or a duplicate
 *    is skipped, the others are written. Only the ids written are kept, in the launcher's exact compact set
 *    (CompactSeenKeys: 4.4 to 6.7 bytes an id in memory, the ids themselves in a temporary file).
 *
 * An EMAIL row takes its user's SMS number (and, where its own endpoint gives none, that endpoint's Location and
 * Demographic.Timezone) from the user's first SMS endpoint that counts (sms-contacts.ts: chosen between the passes,
 * read back by user in the second).
 *
 * The CSV header depends on every attribute name written, and on which place columns any row has a value for, so rows
 * go first to a temporary file (JSON arrays by column position) and are written out as CSV once the names are known.
 * All files are written under temporary names and renamed at the end: a failed run leaves no half-written recipient
 * list.
 */
import { PROGRESS_EVERY_ROWS, RowProgress } from "../recipients/row-progress";
import * as fs from "fs";
import * as path from "path";
import {
  AttributeSource,
  columnNames,
  CONTROL_COLUMNS,
  endpointOutcome,
  hasLocation,
  PinpointEndpoint,
  PLACE_COLUMNS,
  placeValues,
  RecipientPlace,
  recipientPlace,
  SkipReason,
  smsNumber,
  smsOutcome,
  optsOut,
} from "./endpoints";
import { SmsContacts } from "./sms-contacts";
import { endpointsOf, ExportSource } from "./export-files";
import { RecipientFields, recipientFields, recipientOf } from "./stored-rows";
import { csvField, reportField } from "../recipients/csv-fields";
import { EndpointLedger, LedgerEntry } from "./ledger";
import { BufferedFile, lines } from "./lines";
import { CompactSeenKeys } from "../recipients/seen-keys";
import { canonicalZone } from "../../../infra/core/timing/send-time";
import { OutputLock, RunFiles } from "../planning/output-folder";

export { lines } from "./lines";
export { decompressIfGzip, endpointsOf, localExportSources } from "./export-files";
export type { ExportSource } from "./export-files";

export interface ImportOptions {
  sources: ExportSource[];
  outDir: string;
  separator: string;
  /** Endpoints read (first pass), then recipients' lines written (second pass, of the endpoints read). */
  progress?: RowProgress;
}

export interface ImportSummary {
  files: number;
  endpoints: number;
  recipients: number;
  idsFrom: { UserId: number; Id: number };
  /** Endpoint Ids read on more than one line: each counts its latest line, the others are skipped as superseded. */
  repeatedIds: number;
  skipped: { total: number; byReason: Partial<Record<SkipReason, number>> };
  zones: { missing: number; unknown: number };
  /** Rows with a value in each place column; what came from the user's SMS endpoint; countries mapped from alpha-3. */
  places: {
    coordinates: number;
    postalCode: number;
    country: number;
    phone: number;
    fromSms: { location: number; timezone: number };
    countryFromAlpha3: number;
  };
  columns: string[];
  /**
   * SMS endpoints: read; each user's chosen one gives the number of the user's EMAIL row, or a row of its own (email
   * empty) when the user has none; the others are skipped with their reason. `optOuts`: the distinct numbers opted
   * out, listed in sms-opt-outs.csv (import-pinpoint --put-sms-opt-outs puts them into the stack's opt-out list).
   */
  sms: { endpoints: number; intoEmailRows: number; ownRows: number; optOuts: number };
  output: { recipients: string; skipped: string; smsOptOuts: string };
}

/** What an import writes or removes in --out: its outputs and its temporary files (ImportRun, EndpointLedger). */
export const IMPORT_RUN_FILES: RunFiles = {
  names: [
    "recipients.csv",
    "skipped.csv",
    "endpoints.decided",
    "recipients.rows",
    "opt-outs",
    "opt-ins",
    "sms-endpoints",
    "sms-opt-outs.csv",
    "sms-opt-outs",
  ],
  input: (file) => `an endpoint export file (--endpoints ${file})`,
  when: "once it has read the export",
  move: "the export",
};

export async function importEndpoints(o: ImportOptions): Promise<ImportSummary> {
  // An export file under one of those names (or a link to one) would be read and then replaced: refused, and the
  // folder locked against a second import, as launch-campaign does.
  const lock = OutputLock.acquire(
    o.outDir,
    o.sources.flatMap((s) => (s.file === undefined ? [] : [s.file])),
    IMPORT_RUN_FILES,
  );
  const output = {
    recipients: path.join(o.outDir, "recipients.csv"),
    skipped: path.join(o.outDir, "skipped.csv"),
    smsOptOuts: path.join(o.outDir, "sms-opt-outs.csv"),
  };
  let run: ImportRun;
  try {
    run = new ImportRun(o, output);
  } catch (e) {
    lock.release();
    throw e;
  }
  try {
    let base = 0;
    for (const [index, source] of o.sources.entries()) {
      run.startFile(index, source.name, base);
      for await (const { line, endpoint, invalidAt } of endpointsOf(source)) run.take(base + line, endpoint, invalidAt);
      base += run.linesOf(index) + 1;
    }
    return await run.finish();
  } finally {
    run.discard();
    lock.release();
  }
}

/** The state of one import: counts, the ledger, the attribute positions seen so far, the ids written, the open files. */
class ImportRun {
  readonly summary: ImportSummary;
  private readonly ledger: EndpointLedger;
  private readonly sms: SmsContacts;
  private readonly decidedFile: string;
  private readonly decided: BufferedFile;
  private readonly rowsFile: string;
  private readonly rows: BufferedFile;
  private readonly skipped: BufferedFile;
  /** First pass: each opting-out SMS line's number and ordinal; kept at the end if the number is still opted out. */
  private readonly optOutsFile: string;
  private readonly optOuts: BufferedFile;
  private readonly files: { name: string; base: number; lines: number }[] = [];
  private readonly keys = new Map<string, number>();
  private readonly keyList: { source: AttributeSource; name: string }[] = [];
  /** Per place column (PLACE_COLUMNS): whether a row written has a value for it. */
  private readonly placeUsed = PLACE_COLUMNS.map(() => false);
  /** Each id written, with its row number in recipients.csv (1 = the first row after the header). */
  private readonly written = new CompactSeenKeys();

  constructor(
    private readonly o: ImportOptions,
    private readonly output: ImportSummary["output"],
  ) {
    this.ledger = new EndpointLedger(o.outDir);
    this.sms = new SmsContacts(o.outDir);
    this.decidedFile = path.join(o.outDir, "endpoints.decided.partial");
    this.decided = new BufferedFile(this.decidedFile);
    this.rowsFile = path.join(o.outDir, "recipients.rows.partial");
    this.rows = new BufferedFile(this.rowsFile);
    this.skipped = new BufferedFile(output.skipped + ".partial");
    this.skipped.write("file,line,endpoint_id,user_id,reason,detail\n");
    this.optOutsFile = path.join(o.outDir, "sms-opt-outs.partial");
    this.optOuts = new BufferedFile(this.optOutsFile);
    this.summary = {
      files: o.sources.length,
      endpoints: 0,
      recipients: 0,
      idsFrom: { UserId: 0, Id: 0 },
      repeatedIds: 0,
      skipped: { total: 0, byReason: {} },
      zones: { missing: 0, unknown: 0 },
      places: {
        coordinates: 0,
        postalCode: 0,
        country: 0,
        phone: 0,
        fromSms: { location: 0, timezone: 0 },
        countryFromAlpha3: 0,
      },
      columns: [],
      sms: { endpoints: 0, intoEmailRows: 0, ownRows: 0, optOuts: 0 },
      output,
    };
  }

  startFile(index: number, name: string, base: number) {
    this.files[index] = { name, base, lines: 0 };
    this.ledger.startFile(name, base);
  }

  linesOf(index: number): number {
    return this.files[index].lines;
  }

  /** First pass: one line of the export, decided on its own and remembered for the second. */
  take(ordinal: number, endpoint: PinpointEndpoint, invalidAt: number) {
    const s = this.summary;
    if (++s.endpoints % PROGRESS_EVERY_ROWS === 0) this.o.progress?.(s.endpoints, "endpoints read");
    const file = this.files[this.files.length - 1];
    file.lines = ordinal - file.base;
    const entry = this.ledger.observe(ordinal, endpoint, invalidAt < 0);
    const ids = [endpoint.Id, endpoint.User?.UserId].map((v) => (typeof v === "string" ? v : ""));
    const head = [ordinal, entry.idIndex, entry.date, ...ids];
    if (invalidAt < 0 && endpoint.ChannelType === "SMS") return this.takeSms(ordinal, entry, endpoint, head);
    const outcome =
      invalidAt >= 0
        ? {
            skip: "invalid-text" as const,
            detail: `the line is not valid UTF-8 (byte offset ${invalidAt}): no field of it is read`,
          }
        : endpointOutcome(endpoint, this.o.separator);
    const tail = "skip" in outcome ? [outcome.skip, outcome.detail] : [recipientFields(outcome.recipient)];
    this.decided.write(JSON.stringify([...head, ...tail]) + "\n");
  }

  /** First pass, an SMS line: a candidate for its user's number (sms-contacts.ts), or skipped with its reason. */
  private takeSms(ordinal: number, entry: LedgerEntry, endpoint: PinpointEndpoint, head: unknown[]) {
    this.summary.sms.endpoints++;
    const outcome = smsOutcome(endpoint);
    const phone = smsNumber(endpoint);
    if (phone !== undefined && optsOut(endpoint)) this.optOuts.write(`${JSON.stringify([phone, ordinal])}\n`);
    if ("contact" in outcome) {
      this.sms.candidate(entry, outcome.contact, ordinal);
      this.decided.write(
        JSON.stringify([...head, SMS_LINE, outcome.contact.userId, outcome.contact.idFrom, outcome.contact.phone]) +
          "\n",
      );
    } else this.decided.write(JSON.stringify([...head, outcome.skip, outcome.detail]) + "\n");
  }

  async finish(): Promise<ImportSummary> {
    this.decided.close();
    await this.ledger.settle();
    this.summary.repeatedIds = this.ledger.repeatedIds;
    await this.sms.choose((entry, phone) => this.ledger.counts(entry) && !this.ledger.optedOutBy(phone));
    let replayed = 0;
    for await (const { text } of lines(fs.createReadStream(this.decidedFile))) {
      this.replay(JSON.parse(text) as unknown[]);
      if (++replayed % PROGRESS_EVERY_ROWS === 0)
        this.o.progress?.(replayed, "endpoints written", this.summary.endpoints);
    }
    await this.writeSmsRows();
    this.summary.sms.optOuts = await this.writeOptOuts();
    this.rows.close();
    this.skipped.close();
    // Written: id, email, timezone, the place columns some row has a value for, the attributes (stored after them).
    const places = PLACE_COLUMNS.flatMap((name, i) => (this.placeUsed[i] ? [{ name, at: FIRST_PLACE + i }] : []));
    const attributes = columnNames(this.keyList).map((name, i) => ({ name, at: FIRST_ATTRIBUTE + i }));
    const columns = [
      ...CONTROL_COLUMNS.slice(0, FIRST_PLACE).map((name, at) => ({ name, at })),
      ...places,
      ...attributes,
    ];
    this.summary.columns = columns.map((c) => c.name);
    await writeCsv(
      this.rowsFile,
      this.output.recipients + ".partial",
      columns.map((c) => c.name),
      columns.map((c) => c.at),
    );
    fs.renameSync(this.output.recipients + ".partial", this.output.recipients);
    fs.renameSync(this.output.skipped + ".partial", this.output.skipped);
    fs.renameSync(this.output.smsOptOuts + ".partial", this.output.smsOptOuts);
    return this.summary;
  }

  /** Closes and removes whatever is left under a temporary name (everything, when the import failed). */
  discard() {
    this.ledger.close();
    this.sms.close();
    this.written.close();
    this.decided.close();
    this.rows.close();
    this.skipped.close();
    this.optOuts.close();
    for (const p of [
      this.decidedFile,
      this.rowsFile,
      this.optOutsFile,
      this.output.smsOptOuts + ".partial",
      this.output.recipients + ".partial",
      this.output.skipped + ".partial",
    ])
      fs.rmSync(p, { force: true });
  }

  /** Second pass: one line's outcome, now that the whole export is known. */
  private replay(d: unknown[]) {
    const [ordinal, idIndex, date, endpointId, userId] = d as [number, number, number | null, string, string];
    const place = this.place(ordinal);
    const e: PinpointEndpoint = { Id: endpointId, User: { UserId: userId } };
    const skip = (reason: SkipReason, detail: string) => this.skip(place.file, place.line, e, reason, detail);
    const entry: LedgerEntry = { idIndex, date };
    const isSms = d[5] === SMS_LINE;
    const isRecipient = d.length === 6 || isSms;
    const superseded = this.ledger.superseded(entry, endpointId, isRecipient);
    if (superseded) return skip("superseded", superseded);
    if (isSms) return this.replaySms(ordinal, d.slice(6) as [string, "UserId" | "Id", string], skip);
    if (!isRecipient) return skip(d[5] as SkipReason, d[6] as string);
    const r = recipientOf(d[5] as RecipientFields);
    const optedOut = this.ledger.optedOutBy(r.email);
    if (optedOut) return skip("opted-out-elsewhere", `${optedOut.file}:${optedOut.line} opts this address out`);
    const s = this.summary;
    // Only rows written count: an SMS or opted-out endpoint of a user does not keep the user's EMAIL endpoint out.
    const row = this.written.firstLineOrAdd(r.id, s.recipients + 1);
    if (row !== undefined) {
      if (r.idFrom === "Id") return skip("duplicate-id", `id ${r.id} already has row ${row}`);
      const detail = `user ${r.id} already has row ${row} (a user's first usable EMAIL endpoint in export order is kept)`;
      return skip("duplicate-user", detail);
    }
    s.recipients++;
    s.idsFrom[r.idFrom]++;
    const where = recipientPlace(r, r.idFrom === "UserId" ? this.sms.contactOf(r.id) : undefined);
    this.count(where);
    const values: string[] = [r.id, r.email, where.timezone, ...placeValues(where)];
    for (const a of r.attributes) values[FIRST_ATTRIBUTE + this.position(a.source, a.name)] = a.value;
    this.rows.write(JSON.stringify(values) + "\n");
  }

  /**
   * Second pass, an SMS line that counts on its own: skipped when its number is opted out by another line, or when
   * it is not its id's chosen SMS endpoint (its user's first that counts); the chosen one is written later
   * (writeSmsRows), into its user's EMAIL row or as a row of its own.
   */
  private replaySms(
    ordinal: number,
    [id, idFrom, phone]: [string, "UserId" | "Id", string],
    skip: (reason: SkipReason, detail: string) => void,
  ) {
    const optedOut = this.ledger.optedOutBy(phone);
    if (optedOut) return skip("opted-out-elsewhere", `${optedOut.file}:${optedOut.line} opts ${phone} out`);
    const chosen = this.sms.chosenFor(id, idFrom);
    if (chosen && chosen.ordinal !== ordinal) {
      const at = this.place(chosen.ordinal);
      const whose = idFrom === "UserId" ? `user ${id}` : `endpoint ${id}`;
      return skip(
        "duplicate-user",
        `${whose}'s number is ${at.file}:${at.line}'s (a user's first usable SMS endpoint in export order is kept)`,
      );
    }
  }

  /** After the second pass: each chosen SMS endpoint whose user has no EMAIL row written becomes a row of its own. */
  private async writeSmsRows() {
    const s = this.summary;
    for await (const c of this.sms.all()) {
      const row = this.written.firstLine(c.userId);
      if (row !== undefined) {
        if (c.idFrom === "UserId") s.sms.intoEmailRows++;
        else {
          const at = this.place(c.ordinal);
          this.skip(at.file, at.line, { Id: c.userId }, "duplicate-id", `id ${c.userId} already has row ${row}`);
        }
        continue;
      }
      this.written.add(c.userId, ++s.recipients);
      s.idsFrom[c.idFrom]++;
      s.sms.ownRows++;
      const where: RecipientPlace = {
        ...c,
        fromSms: { timezone: c.timezone !== "", location: hasLocation(c.location) },
      };
      this.count(where);
      this.rows.write(JSON.stringify([c.userId, "", c.timezone, ...placeValues(where)]) + "\n");
    }
  }

  /** sms-opt-outs.csv: each number an SMS line opts out and no later line opts back in, once, with its first line. */
  private async writeOptOuts(): Promise<number> {
    this.optOuts.close();
    const out = new BufferedFile(this.output.smsOptOuts + ".partial");
    out.write("phone,file,line\n");
    const seen = new CompactSeenKeys();
    let count = 0;
    try {
      for await (const { text } of lines(fs.createReadStream(this.optOutsFile))) {
        const [phone, ordinal] = JSON.parse(text) as [string, number];
        if (!this.ledger.optedOutBy(phone) || seen.firstLine(phone) !== undefined) continue;
        seen.add(phone, ++count);
        const at = this.place(ordinal);
        out.write(`${phone},${reportField(at.file)},${at.line}\n`);
      }
    } finally {
      seen.close();
      out.close();
    }
    return count;
  }

  /** A row's place in the summary (zones, places) and in the columns written. */
  private count(p: RecipientPlace) {
    const s = this.summary;
    if (p.timezone === "") s.zones.missing++;
    else if (canonicalZone(p.timezone) === undefined) s.zones.unknown++;
    placeValues(p).forEach((v, i) => v !== "" && (this.placeUsed[i] = true));
    const l = p.location;
    if (l.latitude !== "") s.places.coordinates++;
    if (l.postalCode !== "") s.places.postalCode++;
    if (l.country !== "") s.places.country++;
    if (l.countryFromAlpha3) s.places.countryFromAlpha3++;
    if (p.phone !== "") s.places.phone++;
    if (p.fromSms.location) s.places.fromSms.location++;
    if (p.fromSms.timezone) s.places.fromSms.timezone++;
  }

  private place(ordinal: number): { file: string; line: number } {
    let lo = 0;
    for (let hi = this.files.length - 1; lo < hi;) {
      const mid = (lo + hi + 1) >> 1;
      if (this.files[mid].base < ordinal) lo = mid;
      else hi = mid - 1;
    }
    return { file: this.files[lo].name, line: ordinal - this.files[lo].base };
  }

  private skip(file: string, line: number, e: PinpointEndpoint, reason: SkipReason, detail: string) {
    const s = this.summary.skipped;
    s.total++;
    s.byReason[reason] = (s.byReason[reason] ?? 0) + 1;
    // A report for people: values a spreadsheet would run as formulas are guarded (recipients.csv stays exact).
    const ids = [e.Id, e.User?.UserId].map((v) => reportField(typeof v === "string" ? v : ""));
    this.skipped.write(`${reportField(file)},${line},${ids.join(",")},${reason},${reportField(detail)}\n`);
  }

  private position(source: AttributeSource, name: string): number {
    const key = `${source}\u0000${name}`;
    let index = this.keys.get(key);
    if (index === undefined) {
      this.keys.set(key, (index = this.keyList.length));
      this.keyList.push({ source, name });
    }
    return index;
  }
}

/** The decided file's mark of an SMS line that counts on its own: [head…, SMS_LINE, id, idFrom, phone]. */
const SMS_LINE = "sms";

/** Where a stored row's place values (PLACE_COLUMNS) and attribute values start: after id, email and timezone. */
const FIRST_PLACE = 3;
const FIRST_ATTRIBUTE = FIRST_PLACE + PLACE_COLUMNS.length;

/**
 * The header, then each stored row's values at the columns' positions (`at`), padded: rows stored before a new
 * attribute are shorter.
 */
async function writeCsv(rowsFile: string, csvFile: string, names: string[], at: number[]) {
  const csv = new BufferedFile(csvFile);
  csv.write(names.map(csvField).join(",") + "\n");
  for await (const { text } of lines(fs.createReadStream(rowsFile))) {
    const values = JSON.parse(text) as (string | null)[];
    let out = "";
    for (let i = 0; i < at.length; i++) out += (i ? "," : "") + csvField(values[at[i]] ?? "");
    csv.write(out + "\n");
  }
  csv.close();
}
