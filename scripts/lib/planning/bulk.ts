/**
 * Bulk planning (launch-campaign --bulk): the recipients of one step who share its UTC instant and variant (and so its
 * template) share one schedule of at most MAX_BULK_ENTRIES entries whose Input stays within Scheduler's payload, sent
 * by the sender state machine with SendBulkEmail. Every entry carries its recipient's one-click unsubscribe link once,
 * in `{{unsubscribe_url}}`; the fan-out makes the List-Unsubscribe pair from it (infra/core/consent/unsubscribe.ts).
 *
 * Chunks fill in the list's order: a group's entries go into its open chunk until the next would not fit (50 entries,
 * the Input's bytes, the plan line's bytes), which is then written as one line named by the group and the chunk's
 * position (naming.ts bulkScheduleName). So a group of n recipients whose entries fit takes ⌈n ÷ 50⌉ schedules, the
 * fewest 50 allows, and the same list and flags give the same names on every run. Memory: one open chunk per group;
 * when open chunks' entries pass MAX_OPEN_CHARS characters, the oldest is written early (counted: splitEarly).
 */
import { bulkScheduleName } from "../../../infra/core/plan/naming";
import { atExpression } from "../../../infra/core/plan/schedule-expression";
import {
  BULK_ENTRY_END,
  BULK_LINE_END,
  bulkEntryStart,
  bulkEntrySizes,
  jsonTextBytes,
  bulkLineStart,
  MAX_BULK_ENTRIES,
  MAX_BULK_ENTRIES_INPUT_BYTES,
} from "../../../infra/core/plan/bulk-plan-row";
import { MAX_PLAN_ROW_BYTES } from "../../../infra/core/plan/plan-row";
import { ses } from "../../../infra/core/plan/quotas";
import {
  UNSUBSCRIBE_TEMPLATE_KEY,
  MAX_TOKEN_ADDRESS_CHARS,
  unsubscribeAddress,
  UnsubscribeSigner,
  unsubscribeHeaders,
  unsubscribeLink,
} from "../../../infra/core/consent/unsubscribe";
import { InputError } from "../../../infra/core/errors";
import { bulkEntryRefusal } from "../../../infra/core/plan/bulk-request";
import { Step } from "../../../infra/core/timing/send-time";
import { Audience, templatesByVariant } from "../recipients/audience";
import { Columns, STEP_KEY } from "../recipients/recipient-columns";
import { RecipientRow, RejectReason } from "../recipients/recipient-rows";
import { TemplateDataJson } from "../recipients/row-size";
import { ZoneDecisions } from "./decisions";
import { InstantHistogram } from "./window";

/** The template variable that holds each recipient's unsubscribe link; a list column of this name is refused. */
export const UNSUBSCRIBE_KEY = UNSUBSCRIBE_TEMPLATE_KEY;

/** The endpoint a dry run without stack outputs links to. */
export const PLACEHOLDER_UNSUBSCRIBE_URL = "https://unsubscribe.invalid/";

/** The key and endpoint unsubscribe links are made with, and where they came from (for the summary). */
export interface BulkSigning {
  /**
   * The stack's signing key; none in a dry run, whose links are unsigned (a zero signature: well formed, the sizes of
   * signed ones, never valid), since a dry run makes no AWS call and so never has the key.
   */
  key: Buffer | undefined;
  baseUrl: string;
  /** True without a key: the plan's tokens are not valid. */
  placeholder: boolean;
  source: string;
}

/**
 * What the per-entry code reads from other modules, read once: the CLI's transpiler (esbuild, CommonJS) makes every
 * use of an import a getter call, 3% of a bulk dry run's CPU when read per entry (measured: docs/benchmarks.md).
 */
const MAX_ENTRIES = MAX_BULK_ENTRIES;
const MAX_INPUT_BYTES = MAX_BULK_ENTRIES_INPUT_BYTES;
const textBytes = jsonTextBytes;
const entrySizes = bulkEntrySizes;
const entryStart = bulkEntryStart;
const entryRefusal = bulkEntryRefusal;
const addressOf = unsubscribeAddress;

/** Text JSON.stringify writes as it is, in quotes: printable ASCII but `"` and `\`. */
export const PLAIN_JSON_TEXT = /^[ !#-[\]-~]*$/;

/** A plan line's text around its entries: at most this many bytes (name, instant, template ≤ 64, variant ≤ 32). */
const LINE_OVERHEAD_BYTES = 512;
const MAX_LINE_ENTRY_BYTES = MAX_PLAN_ROW_BYTES - LINE_OVERHEAD_BYTES;

/**
 * Characters of open chunks' entries kept before the oldest open chunk is written early. It counts the entries, not
 * their buffers' sizes, so the chunks a list makes do not depend on how buffers are sized (a hostile review found a
 * buffer-size bound splitting 40,000 small open chunks early).
 */
export const MAX_OPEN_CHARS = 64 * 1024 * 1024;

/**
 * Per-recipient unsubscribe links, each exactly unsubscribeUrl(baseUrl, key, email) (or unsigned: UnsubscribeSigner), and the texts made of them: the
 * text around the token is the same for every address (a base64url token is never percent-encoded nor JSON-escaped),
 * so it is found once and each text is that text around the recipient's token; its sizes are the fixed text's plus
 * the token's length (ASCII).
 */
export class UnsubscribeLinks {
  private readonly around: Record<"link" | "json" | "headers" | "data", [string, string]>;
  /** jsonTextBytes of the fixed part of `"unsubscribe_url":<link JSON>,`, and bytes of the headers' JSON's. */
  private readonly fixed: { data: { bytes: number; escapes: number }; headersBytes: number };
  private readonly signer: UnsubscribeSigner;
  /** Links with tokens signed with `key`, or unsigned without one (UnsubscribeSigner). */
  constructor(baseUrl: string, key: Buffer | undefined) {
    this.signer = new UnsubscribeSigner(key);
    const token = this.signer.token("probe@example.com");
    const url = unsubscribeLink(baseUrl, token);
    const split = (text: string): [string, string] => {
      const at = text.indexOf(token);
      if (at < 0 || text.lastIndexOf(token) !== at)
        throw new Error(`internal: the unsubscribe link of ${baseUrl} does not hold its token once`);
      return [text.slice(0, at), text.slice(at + token.length)];
    };
    this.around = {
      link: split(url),
      json: split(JSON.stringify(url)),
      headers: split(JSON.stringify(unsubscribeHeaders(url))),
      data: split(`${JSON.stringify(UNSUBSCRIBE_KEY)}:${JSON.stringify(url)},`),
    };
    const { data, headers } = this.around;
    this.fixed = {
      data: jsonTextBytes(data[0] + data[1]),
      headersBytes: Buffer.byteLength(headers[0] + headers[1]),
    };
  }

  /** The address's token, or why it cannot have one (the token or the header would be too long). */
  token(email: string): string | { problem: string } {
    const token = this.signer.token(email);
    if (token.indexOf(".") > MAX_TOKEN_ADDRESS_CHARS)
      return {
        problem: `address too long for an unsubscribe token (at most 300 bytes): --bulk cannot give it one-click unsubscribe`,
      };
    const [before, after] = this.around.link;
    const length = before.length + token.length + after.length;
    if (length + 2 > ses.header.maxValueChars)
      return {
        problem: `its List-Unsubscribe header would be ${length + 2} characters, over SES's ${ses.header.maxValueChars}`,
      };
    return token;
  }

  /** The text `kind` made of a token: the link, its JSON, the headers' JSON, or the template data's member. */
  text(kind: "link" | "json" | "headers" | "data", token: string): string {
    const [before, after] = this.around[kind];
    return before + token + after;
  }

  /** The sizes of text("data", token) (jsonTextBytes) and of text("headers", token) (bytes). */
  sizes(token: string): { dataBytes: number; dataEscapes: number; headersBytes: number } {
    const { data, headersBytes } = this.fixed;
    return {
      dataBytes: data.bytes + token.length,
      dataEscapes: data.escapes,
      headersBytes: headersBytes + token.length,
    };
  }
}

/** The counts of a bulk plan, for the summary and the window. */
export interface BulkStats {
  schedules: number;
  entries: number;
  /** Chunks written before they were full because open chunks passed MAX_OPEN_CHARS (0 in a list of few instants). */
  splitEarly: number;
  /** Entries in the fullest and emptiest schedule. */
  largest: number;
  smallest: number;
  /** Bytes of plan lines, for the fan-out's cost model. */
  lineBytes: number;
  /** Schedules per instant: the invocations the window sizes against the Scheduler quota. */
  invocations: InstantHistogram;
}

/** One (step, UTC instant, variant) group: its chunks so far and its open one. */
interface Group {
  step: number;
  utcMs: number;
  /** The instant as the line writes it: `send_at` (UTC wall time) and `utc`. */
  wall: string;
  utc: string;
  variant: string | null;
  templateJson: string;
  variantJson: string;
  chunks: number;
  /**
   * The open chunk's plan line so far, as bytes: its start (name, instant, template, variant), then its entries with
   * their commas; undefined when no chunk is open. Bytes, not strings: entries kept as strings until their chunk is
   * written outlived V8's young generation and cost the collector (docs/benchmarks.md, "Bulk sends").
   */
  line?: Buffer;
  filled: number;
  /** Characters of the open chunk's entries (what MAX_OPEN_CHARS bounds). */
  openChars: number;
  /** The open chunk's addresses (unsubscribeAddress): one schedule sends each once (bulkEntryRefusal). */
  addresses: Set<string>;
  entries: number;
  /** Bytes of the open chunk's entries in the plan line and in the Input, with their commas. */
  lineBytes: number;
  inputBytes: number;
}

/** A chunk's first buffer holds at least this: its start and a few entries; it doubles as entries come. */
const FIRST_LINE_BYTES = 512;
/**
 * Buffers of written chunks kept for the next chunks to open (a buffer dropped per chunk waits for the collector
 * outside the heap: a bulk dry run's peak memory rose 6 MB with none kept).
 */
const SPARE_LINES = 32;
const MAX_SPARE_LINE_BYTES = 64 * 1024;
const COMMA = 0x2c;
const LINE_END = Buffer.from(BULK_LINE_END, "latin1");

/** Entries grouped into chunks, written as bulk plan lines through `write` as they fill. */
export class BulkChunks {
  private readonly groups = new Map<string, Group>();
  /** Groups with an open chunk, oldest first. */
  private readonly opened = new Set<Group>();
  /** Characters of the open chunks' entries. */
  private openChars = 0;
  private readonly spare: Buffer[] = [];
  readonly stats: BulkStats = {
    schedules: 0,
    entries: 0,
    splitEarly: 0,
    largest: 0,
    smallest: 0,
    lineBytes: 0,
    invocations: new InstantHistogram(),
  };

  /**
   * `repeatedAddresses`: whether the rows may share an address (--allow-duplicate-emails), so that each entry's is
   * checked against its open chunk's; otherwise the reader has refused every repeat by the same rule (trimmed and
   * case-folded: recipient-rows.ts duplicate-email), and the look-up per entry would be paid for nothing.
   */
  constructor(
    private readonly write: (bytes: Uint8Array) => Promise<void> | undefined,
    private readonly repeatedAddresses = true,
  ) {}

  /** The group of a step's instant and variant; `templateJson`/`variantJson` as JSON text. */
  group(step: number, utcMs: number, variant: string | null, templateJson: string, variantJson: string): Group {
    const key = `${step} ${utcMs} ${variantJson}`;
    let g = this.groups.get(key);
    if (!g) {
      const utc = new Date(utcMs).toISOString();
      g = {
        step,
        utcMs,
        wall: utc.slice(0, 19),
        utc,
        variant,
        templateJson,
        variantJson,
        chunks: 0,
        filled: 0,
        openChars: 0,
        addresses: new Set(),
        entries: 0,
        lineBytes: 0,
        inputBytes: 0,
      };
      this.groups.set(key, g);
    }
    return g;
  }

  /**
   * Adds one entry to `address` (unsubscribeAddress) — `head` (of `headBytes` bytes of UTF-8) then the bytes of `tail`,
   * whose sizes fitsAlone has passed — to its group; a promise only when a write waits for the disk. The open chunk is
   * written first when the entry would not fit it: its bytes, or an address it already holds (a list planned with
   * --allow-duplicate-emails: the repeat starts the group's next schedule).
   */
  add(
    g: Group,
    head: string,
    headBytes: number,
    tail: Uint8Array,
    inputBytes: number,
    address: string,
  ): Promise<void> | undefined {
    const lineBytes = headBytes + tail.length;
    if (
      g.entries &&
      (g.lineBytes + 1 + lineBytes > MAX_LINE_ENTRY_BYTES ||
        g.inputBytes + 1 + inputBytes > MAX_INPUT_BYTES ||
        (this.repeatedAddresses && entryRefusal(g.entries, g.addresses, address) !== undefined))
    ) {
      const written = this.emit(g);
      if (written) return written.then(() => this.add(g, head, headBytes, tail, inputBytes, address));
    }
    if (!g.line) this.open(g, lineBytes);
    const comma = g.entries ? 1 : 0;
    this.reserve(g, comma + lineBytes);
    const line = g.line!;
    if (comma) line[g.filled++] = COMMA;
    if (line.write(head, g.filled, "utf8") !== headBytes)
      throw new Error(`internal: a bulk entry measured ${headBytes} bytes before its step was written otherwise`);
    // A tail is a dozen bytes: copied here, cheaper than TypedArray.set's call.
    for (let i = 0, at = g.filled + headBytes; i < tail.length; i++) line[at + i] = tail[i];
    g.filled += lineBytes;
    g.entries++;
    if (this.repeatedAddresses) g.addresses.add(address);
    const chars = head.length + tail.length;
    g.openChars += chars;
    this.openChars += chars;
    g.lineBytes += comma + lineBytes;
    g.inputBytes += comma + inputBytes;
    const written = g.entries === MAX_ENTRIES ? this.emit(g) : undefined;
    return written ? written.then(() => this.bound()) : this.bound();
  }

  /** Opens the group's next chunk: a buffer holding the line's start (its name is the chunk's position). */
  private open(g: Group, firstEntryBytes: number): void {
    const start = bulkLineStart({
      schedule_name: `"${bulkScheduleName(g.step, g.utcMs, g.variant, g.chunks)}"`,
      send_at: `"${g.wall}"`,
      timezone: `"UTC"`,
      utc: `"${g.utc}"`,
      schedule_expression: `"${atExpression(g.wall)}"`,
      step: String(g.step),
      template: g.templateJson,
      variant: g.variantJson,
    });
    const needed = 3 * start.length + firstEntryBytes + LINE_END.length;
    const spares = this.spare;
    g.line =
      spares.length && spares[spares.length - 1].length >= needed
        ? spares.pop()!
        : Buffer.allocUnsafe(Math.max(FIRST_LINE_BYTES, needed + firstEntryBytes));
    g.filled = g.line.write(start, 0, "utf8");
    this.opened.add(g);
  }

  /** Room for `more` bytes and the line's end in the group's buffer. */
  private reserve(g: Group, more: number): void {
    const line = g.line!;
    const needed = g.filled + more + LINE_END.length;
    if (needed <= line.length) return;
    let size = line.length;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    line.copy(grown, 0, 0, g.filled);
    g.line = grown;
  }

  /** Writes the oldest open chunks early while their entries hold more than MAX_OPEN_CHARS characters. */
  private bound(): Promise<void> | undefined {
    while (this.openChars > MAX_OPEN_CHARS) {
      const oldest = this.opened.values().next().value as Group;
      this.stats.splitEarly++;
      const written = this.emit(oldest);
      if (written) return written.then(() => this.bound());
    }
    return undefined;
  }

  /** Writes every open chunk, oldest first. */
  async close(): Promise<void> {
    for (const g of [...this.opened]) await this.emit(g);
  }

  /** Writes a group's open chunk as one plan line (`write` copies it before it returns). */
  private emit(g: Group): Promise<void> | undefined {
    const line = g.line!;
    const entries = g.entries;
    line.set(LINE_END, g.filled);
    const bytes = line.subarray(0, g.filled + LINE_END.length);
    const s = this.stats;
    s.schedules++;
    s.entries += entries;
    s.largest = Math.max(s.largest, entries);
    s.smallest = s.smallest === 0 ? entries : Math.min(s.smallest, entries);
    s.lineBytes += bytes.length;
    s.invocations.add(g.utcMs, "UTC");
    this.openChars -= g.openChars;
    g.openChars = 0;
    g.chunks++;
    const written = this.write(bytes);
    // `write` has copied the bytes: the buffer can take another chunk.
    if (this.spare.length < SPARE_LINES && line.length <= MAX_SPARE_LINE_BYTES) this.spare.push(line);
    g.line = undefined;
    g.filled = 0;
    g.entries = 0;
    g.addresses.clear();
    g.lineBytes = 0;
    g.inputBytes = 0;
    this.opened.delete(g);
    return written;
  }
}

/** Whether one entry fits a schedule on its own (both the plan line's and the Input's bytes). */
function fitsAlone(lineBytes: number, inputBytes: number): boolean {
  return lineBytes <= MAX_LINE_ENTRY_BYTES && inputBytes <= MAX_INPUT_BYTES;
}

/**
 * A planned row's bulk entries, one per step it is sent, into BulkChunks. Everything that does not change per row is
 * serialized once (each step's template per variant, the variant, the step's closing of the template data); a row's
 * groups are found once per answer of the decider and kept with it.
 */
export class BulkLines {
  readonly chunks: BulkChunks;
  private readonly templateData: TemplateDataJson;
  /** Each step's end of an entry: the template data's closing (`"step":"2"}`), then the entry's `}`, as bytes. */
  private readonly tails: Buffer[];
  /** jsonTextBytes of each step's closing of the template data. */
  private readonly stepSizes: { bytes: number; escapes: number }[];
  private readonly templateJson: string[][];
  private readonly variantJson: string[];
  private readonly variantNames: (string | null)[];
  private readonly links: UnsubscribeLinks;
  private readonly groupsOf = new WeakMap<ZoneDecisions, (Group | undefined)[][]>();
  /** The row's entry up to its step's closing (the same for each of its steps), and its bytes of UTF-8. */
  private head = "";
  private headBytes = 0;
  /** The row's address as one schedule holds it once (unsubscribeAddress), when rows may repeat one. */
  private address = "";
  private readonly repeatedAddresses: boolean;
  private readonly entries: { group: Group; tail: Buffer; inputBytes: number }[] = [];

  constructor(
    file: string,
    columns: Columns,
    private readonly steps: (Step & { template: string })[],
    audience: Audience,
    signing: BulkSigning,
    write: (bytes: Uint8Array) => Promise<void> | undefined,
    repeatedAddresses: boolean,
  ) {
    if (columns.data.some((i) => columns.header[i] === UNSUBSCRIBE_KEY))
      throw new InputError(
        `${file}:1: column "${UNSUBSCRIBE_KEY}" is reserved with --bulk: sendtime adds each recipient's one-click unsubscribe link under that name; rename it`,
      );
    this.repeatedAddresses = repeatedAddresses;
    this.chunks = new BulkChunks(write, repeatedAddresses);
    this.templateData = new TemplateDataJson(columns);
    const stepJson = steps.map((s) => `"${STEP_KEY}":"${s.number}"}`);
    this.stepSizes = stepJson.map(jsonTextBytes);
    this.tails = stepJson.map((closing) => Buffer.from(closing + BULK_ENTRY_END, "utf8"));
    this.templateJson = templatesByVariant(
      audience,
      steps.map((s) => s.template),
    ).map((byGroup) => byGroup.map((t) => JSON.stringify(t)));
    this.variantNames = [...audience.variants.map((v) => v.name), null];
    this.variantJson = this.variantNames.map((v) => JSON.stringify(v));
    this.links = new UnsubscribeLinks(signing.baseUrl, signing.key);
  }

  /**
   * Adds the row's entries (in the group with `slot`: the variant index, or the last slot for none); or, when one of
   * them cannot be sent in bulk, adds none and says why. A promise only when a write waits for the disk.
   */
  add(
    row: RecipientRow,
    decided: ZoneDecisions,
    slot: number,
  ): { reason: RejectReason; text: string } | Promise<void> | undefined {
    const token = this.links.token(row.email);
    if (typeof token !== "string") return { reason: "invalid-email", text: token.problem };
    if (this.repeatedAddresses) this.address = addressOf(row.email);
    const data = this.templateData.prefix(row.fields);
    // The address rule (infra/core/send/email.ts: 7-bit atoms) admits no character JSON escapes: its JSON is in quotes.
    const emailJson = `"${row.email}"`;
    // Most ids are printable ASCII with no quote or backslash: their JSON is in quotes, a byte a character.
    const plainId = PLAIN_JSON_TEXT.test(row.id);
    const idJson = plainId ? `"${row.id}"` : JSON.stringify(row.id);
    // The line holds the link once (in its data); the headers the fan-out makes from it count in the Input's size.
    // The data's size is measured once for every step (a step adds its ASCII closing); the link's is known.
    const measured = textBytes(data);
    const link = this.links.sizes(token);
    const prefix = { bytes: measured.bytes + link.dataBytes, escapes: measured.escapes + link.dataEscapes };
    // The entry up to its step's closing: with a tail, the bytes bulkEntryJson makes.
    this.head = entryStart(idJson, emailJson) + data + this.links.text("data", token);
    const idBytes = plainId ? idJson.length : Buffer.byteLength(idJson);
    const groups = this.groupsFor(decided, slot);
    const entries = this.entries;
    entries.length = 0;
    for (let k = 0; k < groups.length; k++) {
      const group = groups[k];
      if (!group) continue;
      const closing = this.stepSizes[k];
      const sizes = { bytes: prefix.bytes + closing.bytes, escapes: prefix.escapes + closing.escapes };
      const { lineBytes, inputBytes } = entrySizes(idBytes, emailJson.length, sizes, link.headersBytes);
      // The same for every step (lineBytes counts the step's closing); BulkChunks.add checks it as it writes.
      this.headBytes = lineBytes - this.tails[k].length;
      if (!fitsAlone(lineBytes, inputBytes))
        return {
          reason: "too-large",
          text: `personalization too large for a bulk schedule: an entry must fit ${MAX_LINE_ENTRY_BYTES} bytes of plan line and ${MAX_BULK_ENTRIES_INPUT_BYTES} bytes of the schedule's Input`,
        };
      entries.push({ group, tail: this.tails[k], inputBytes });
    }
    return this.addFrom(0);
  }

  /** Adds the row's entries from `from` on, waiting where a write waits. */
  private addFrom(from: number): Promise<void> | undefined {
    const entries = this.entries;
    for (let i = from; i < entries.length; i++) {
      const e = entries[i];
      const waiting = this.chunks.add(e.group, this.head, this.headBytes, e.tail, e.inputBytes, this.address);
      if (waiting) return waiting.then(() => this.addFrom(i + 1));
    }
    return undefined;
  }

  /** The group of each step the answer sends, for the variant in `slot`; undefined for a step not sent. */
  private groupsFor(decided: ZoneDecisions, slot: number): (Group | undefined)[] {
    let bySlot = this.groupsOf.get(decided);
    if (!bySlot) this.groupsOf.set(decided, (bySlot = []));
    let groups = bySlot[slot];
    if (!groups) {
      groups = decided.steps.map((d, k) =>
        d.time
          ? this.chunks.group(
              this.steps[k].number,
              d.time.utcMs,
              this.variantNames[slot],
              this.templateJson[k][slot],
              this.variantJson[slot],
            )
          : undefined,
      );
      bySlot[slot] = groups;
    }
    return groups;
  }
}

/**
 * Schedules a bulk plan takes, counted without building it (size-window --bulk): per (step, instant, variant) group,
 * ⌈recipients ÷ 50⌉ — the plan's count when entries are far below the Input's bytes (the launcher's own count is exact).
 */
export class BulkGroupCounts {
  private readonly counts = new Map<string, { utcMs: number; n: number }>();
  private readonly keysOf = new WeakMap<ZoneDecisions, string[][]>();

  add(decided: ZoneDecisions, slot: number): void {
    let bySlot = this.keysOf.get(decided);
    if (!bySlot) this.keysOf.set(decided, (bySlot = []));
    let keys = bySlot[slot];
    if (!keys) {
      keys = [];
      decided.steps.forEach((d, k) => d.time && keys!.push(`${k} ${d.time.utcMs} ${slot}`));
      bySlot[slot] = keys;
    }
    for (const key of keys) {
      const c = this.counts.get(key);
      if (c) c.n++;
      else this.counts.set(key, { utcMs: Number(key.split(" ")[1]), n: 1 });
    }
  }

  /** Schedules per instant, and in all. */
  schedules(): { invocations: InstantHistogram; schedules: number; groups: number } {
    const invocations = new InstantHistogram();
    let schedules = 0;
    for (const { utcMs, n } of this.counts.values()) {
      const chunks = Math.ceil(n / MAX_BULK_ENTRIES);
      invocations.add(utcMs, "UTC", chunks);
      schedules += chunks;
    }
    return { invocations, schedules, groups: this.counts.size };
  }
}
