/**
 * Bulk planning (launch-campaign --bulk): the recipients of one step who share its UTC instant and variant (and so its
 * template) share one schedule of at most MAX_BULK_ENTRIES entries whose Input stays within Scheduler's payload, sent
 * by the sender state machine with SendBulkEmail. Every entry carries its recipient's one-click unsubscribe link once,
 * in `{{unsubscribe_url}}`; the fan-out makes the List-Unsubscribe pair from it (infra/rules/unsubscribe.ts).
 *
 * Chunks fill in the list's order: a group's entries go into its open chunk until the next would not fit (50 entries,
 * the Input's bytes, the plan line's bytes), which is then written as one line named by the group and the chunk's
 * position (naming.ts bulkScheduleName). So a group of n recipients whose entries fit takes ⌈n ÷ 50⌉ schedules, the
 * fewest 50 allows, and the same list and flags give the same names on every run. Memory: one open chunk per group;
 * when open chunks pass MAX_OPEN_CHARS, the oldest is written early (counted: splitEarly).
 */
import { bulkScheduleName } from "../../../infra/rules/naming";
import {
  atExpression,
  BULK_LINE_END,
  bulkEntryJson,
  bulkEntrySizes,
  jsonTextBytes,
  bulkLineStart,
  MAX_BULK_ENTRIES,
  MAX_BULK_ENTRIES_INPUT_BYTES,
  MAX_PLAN_ROW_BYTES,
} from "../../../infra/rules/plan-row";
import { ses } from "../../../infra/rules/quotas";
import {
  UNSUBSCRIBE_TEMPLATE_KEY,
  unsubscribeHeaders,
  unsubscribeToken,
  unsubscribeUrl,
} from "../../../infra/rules/unsubscribe";
import { InputError } from "../../../infra/rules/errors";
import { Step } from "../../../infra/rules/send-time";
import { Audience, templatesByVariant } from "../recipients/audience";
import { Columns, RecipientRow, RejectReason, STEP_KEY, TemplateDataJson } from "../recipients/recipient-rows";
import { ZoneDecisions } from "./decisions";
import { InstantHistogram } from "./window";

/** The template variable that holds each recipient's unsubscribe link; a list column of this name is refused. */
export const UNSUBSCRIBE_KEY = UNSUBSCRIBE_TEMPLATE_KEY;

/** What a dry run without stack outputs signs with: its links are well formed and never valid. */
export const PLACEHOLDER_SIGNING = {
  key: Buffer.from("sendtime dry run: placeholder unsubscribe key", "utf8"),
  baseUrl: "https://unsubscribe.invalid/",
} as const;

/** The key and endpoint unsubscribe links are made with, and where they came from (for the summary). */
export interface BulkSigning {
  key: Buffer;
  baseUrl: string;
  /** True with PLACEHOLDER_SIGNING's key: the plan's tokens are not valid. */
  placeholder: boolean;
  source: string;
}

/** A plan line's text around its entries: at most this many bytes (name, instant, template ≤ 64, variant ≤ 32). */
const LINE_OVERHEAD_BYTES = 512;
const MAX_LINE_ENTRY_BYTES = MAX_PLAN_ROW_BYTES - LINE_OVERHEAD_BYTES;

/** Characters of open chunks' entries kept before the oldest open chunk is written early. */
export const MAX_OPEN_CHARS = 64 * 1024 * 1024;

/** The token's address part is at most 400 characters (unsubscribe.ts verifies no longer): 300 bytes of address. */
const MAX_TOKEN_ADDRESS_CHARS = 400;

/**
 * Per-recipient unsubscribe links, each exactly unsubscribeUrl(baseUrl, key, email), with its JSON and its headers'
 * JSON (JSON.stringify(unsubscribeHeaders(link))): the text around the token is the same for every address (a
 * base64url token is never percent-encoded nor JSON-escaped), so it is found once and each is that text around the
 * recipient's token.
 */
export class UnsubscribeLinks {
  private readonly around: { link: [string, string]; json: [string, string]; headers: [string, string] };
  constructor(
    baseUrl: string,
    private readonly key: Buffer,
  ) {
    const probe = "probe@example.com";
    const url = unsubscribeUrl(baseUrl, key, probe);
    const token = unsubscribeToken(key, probe);
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
    };
  }

  /** The link and its two JSON forms, or why an address cannot have one (the token or the header would be too long). */
  link(email: string): { link: string; linkJson: string; headersJson: string } | { problem: string } {
    const token = unsubscribeToken(this.key, email);
    if (token.indexOf(".") > MAX_TOKEN_ADDRESS_CHARS)
      return {
        problem: `address too long for an unsubscribe token (at most 300 bytes): --bulk cannot give it one-click unsubscribe`,
      };
    const { link, json, headers } = this.around;
    const length = link[0].length + token.length + link[1].length;
    if (length + 2 > ses.header.maxValueChars)
      return {
        problem: `its List-Unsubscribe header would be ${length + 2} characters, over SES's ${ses.header.maxValueChars}`,
      };
    return {
      link: link[0] + token + link[1],
      linkJson: json[0] + token + json[1],
      headersJson: headers[0] + token + headers[1],
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
  variant: string | null;
  templateJson: string;
  variantJson: string;
  chunks: number;
  open: string[];
  openChars: number;
  /** Bytes of the open chunk's entries in the plan line and in the Input, with their commas. */
  lineBytes: number;
  inputBytes: number;
  /** Whether it is in BulkChunks.opened. */
  listed: boolean;
}

/** Entries grouped into chunks, written as bulk plan lines through `write` as they fill. */
export class BulkChunks {
  private readonly groups = new Map<string, Group>();
  /** Groups with an open chunk, oldest first. */
  private readonly opened = new Set<Group>();
  private openChars = 0;
  readonly stats: BulkStats = {
    schedules: 0,
    entries: 0,
    splitEarly: 0,
    largest: 0,
    smallest: 0,
    lineBytes: 0,
    invocations: new InstantHistogram(),
  };

  constructor(private readonly write: (text: string) => Promise<void> | undefined) {}

  /** The group of a step's instant and variant; `templateJson`/`variantJson` as JSON text. */
  group(step: number, utcMs: number, variant: string | null, templateJson: string, variantJson: string): Group {
    const key = `${step} ${utcMs} ${variantJson}`;
    let g = this.groups.get(key);
    if (!g) {
      g = {
        step,
        utcMs,
        variant,
        templateJson,
        variantJson,
        chunks: 0,
        open: [],
        openChars: 0,
        lineBytes: 0,
        inputBytes: 0,
        listed: false,
      };
      this.groups.set(key, g);
    }
    return g;
  }

  /**
   * Adds one entry (its JSON and sizes, which fitsAlone has passed) to its group; a promise only when a write waits
   * for the disk.
   */
  add(g: Group, entryJson: string, lineBytes: number, inputBytes: number): Promise<void> | undefined {
    if (
      g.open.length &&
      (g.lineBytes + 1 + lineBytes > MAX_LINE_ENTRY_BYTES ||
        g.inputBytes + 1 + inputBytes > MAX_BULK_ENTRIES_INPUT_BYTES)
    ) {
      const written = this.emit(g);
      if (written) return written.then(() => this.add(g, entryJson, lineBytes, inputBytes));
    }
    const comma = g.open.length ? 1 : 0;
    g.open.push(entryJson);
    g.lineBytes += comma + lineBytes;
    g.inputBytes += comma + inputBytes;
    g.openChars += entryJson.length;
    this.openChars += entryJson.length;
    if (!g.listed) {
      g.listed = true;
      this.opened.add(g);
    }
    const written = g.open.length === MAX_BULK_ENTRIES ? this.emit(g) : undefined;
    return written ? written.then(() => this.bound()) : this.bound();
  }

  /** Writes the oldest open chunks early while open chunks hold more than MAX_OPEN_CHARS. */
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

  /** Writes a group's open chunk as one plan line. */
  private emit(g: Group): Promise<void> | undefined {
    const entries = g.open.length;
    const wall = new Date(g.utcMs).toISOString().slice(0, 19);
    const name = bulkScheduleName(g.step, g.utcMs, g.variant, g.chunks++);
    const start = bulkLineStart({
      schedule_name: `"${name}"`,
      send_at: `"${wall}"`,
      timezone: `"UTC"`,
      utc: `"${new Date(g.utcMs).toISOString()}"`,
      schedule_expression: `"${atExpression(wall)}"`,
      step: String(g.step),
      template: g.templateJson,
      variant: g.variantJson,
    });
    const line = [start, g.open.join(","), BULK_LINE_END].join("");
    const s = this.stats;
    s.schedules++;
    s.entries += entries;
    s.largest = Math.max(s.largest, entries);
    s.smallest = s.smallest === 0 ? entries : Math.min(s.smallest, entries);
    // What surrounds the entries is ASCII (names, instants, SES template and variant names).
    s.lineBytes += start.length + g.lineBytes + BULK_LINE_END.length;
    s.invocations.add(g.utcMs, "UTC");
    this.openChars -= g.openChars;
    g.open = [];
    g.openChars = 0;
    g.lineBytes = 0;
    g.inputBytes = 0;
    g.listed = false;
    this.opened.delete(g);
    return this.write(line);
  }
}

/** Whether one entry fits a schedule on its own (both the plan line's and the Input's bytes). */
function fitsAlone(lineBytes: number, inputBytes: number): boolean {
  return lineBytes <= MAX_LINE_ENTRY_BYTES && inputBytes <= MAX_BULK_ENTRIES_INPUT_BYTES;
}

/**
 * A planned row's bulk entries, one per step it is sent, into BulkChunks. Everything that does not change per row is
 * serialized once (each step's template per variant, the variant, the step's closing of the template data); a row's
 * groups are found once per answer of the decider and kept with it.
 */
export class BulkLines {
  readonly chunks: BulkChunks;
  private readonly templateData: TemplateDataJson;
  /** Each step's closing of the template data (`"step":"2"}`), and its jsonTextBytes. */
  private readonly stepJson: string[];
  private readonly stepSizes: { bytes: number; escapes: number }[];
  private readonly templateJson: string[][];
  private readonly variantJson: string[];
  private readonly variantNames: (string | null)[];
  private readonly links: UnsubscribeLinks;
  private readonly groupsOf = new WeakMap<ZoneDecisions, (Group | undefined)[][]>();
  private readonly entries: { group: Group; json: string; lineBytes: number; inputBytes: number }[] = [];

  constructor(
    file: string,
    columns: Columns,
    private readonly steps: (Step & { template: string })[],
    audience: Audience,
    signing: BulkSigning,
    write: (text: string) => Promise<void> | undefined,
  ) {
    if (columns.data.some((i) => columns.header[i] === UNSUBSCRIBE_KEY))
      throw new InputError(
        `${file}:1: column "${UNSUBSCRIBE_KEY}" is reserved with --bulk: sendtime adds each recipient's one-click unsubscribe link under that name; rename it`,
      );
    this.chunks = new BulkChunks(write);
    this.templateData = new TemplateDataJson(columns);
    this.stepJson = steps.map((s) => `"${STEP_KEY}":"${s.number}"}`);
    this.stepSizes = this.stepJson.map(jsonTextBytes);
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
    const made = this.links.link(row.email);
    if ("problem" in made) return { reason: "invalid-email", text: made.problem };
    // The line holds the link once (in its data); the headers the fan-out makes from it count in the Input's size.
    const headersJson = made.headersJson;
    const dataPrefix = [this.templateData.prefix(row.fields), `"${UNSUBSCRIBE_KEY}":`, made.linkJson, ","].join("");
    const emailJson = JSON.stringify(row.email);
    const idJson = JSON.stringify(row.id);
    // Addresses and links are ASCII; the data's size is measured once for every step (a step adds its ASCII closing).
    const prefix = jsonTextBytes(dataPrefix);
    const idBytes = Buffer.byteLength(idJson);
    const groups = this.groupsFor(decided, slot);
    const entries = this.entries;
    entries.length = 0;
    for (let k = 0; k < groups.length; k++) {
      const group = groups[k];
      if (!group) continue;
      const closing = this.stepSizes[k];
      const data = { bytes: prefix.bytes + closing.bytes, escapes: prefix.escapes + closing.escapes };
      const { lineBytes, inputBytes } = bulkEntrySizes(idBytes, emailJson.length, data, headersJson.length);
      if (!fitsAlone(lineBytes, inputBytes))
        return {
          reason: "too-large",
          text: `personalization too large for a bulk schedule: an entry must fit ${MAX_LINE_ENTRY_BYTES} bytes of plan line and ${MAX_BULK_ENTRIES_INPUT_BYTES} bytes of the schedule's Input`,
        };
      entries.push({
        group,
        json: bulkEntryJson(idJson, emailJson, dataPrefix + this.stepJson[k]),
        lineBytes,
        inputBytes,
      });
    }
    return this.addFrom(0);
  }

  /** Adds the row's entries from `from` on, waiting where a write waits. */
  private addFrom(from: number): Promise<void> | undefined {
    const entries = this.entries;
    for (let i = from; i < entries.length; i++) {
      const e = entries[i];
      const waiting = this.chunks.add(e.group, e.json, e.lineBytes, e.inputBytes);
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
