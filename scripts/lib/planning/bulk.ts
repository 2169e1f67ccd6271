/**
 * Bulk planning (launch-campaign --bulk): the recipients of one step who share its UTC instant and variant (and so its
 * template) share one schedule of at most MAX_BULK_ENTRIES entries whose Input stays within Scheduler's payload, sent
 * by the sender state machine with SendBulkEmail. Every entry carries its recipient's one-click unsubscribe link, in
 * `{{unsubscribe_url}}` and in the List-Unsubscribe pair (infra/rules/unsubscribe.ts).
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
  bulkEntryInputBytes,
  bulkEntryJson,
  bulkLineStart,
  MAX_BULK_ENTRIES,
  MAX_BULK_ENTRIES_INPUT_BYTES,
  MAX_PLAN_ROW_BYTES,
} from "../../../infra/rules/plan-row";
import { ses } from "../../../infra/rules/quotas";
import { unsubscribeHeaders, unsubscribeToken, unsubscribeUrl } from "../../../infra/rules/unsubscribe";
import { InputError } from "../../../infra/rules/errors";
import { Step } from "../../../infra/rules/send-time";
import { Audience, templatesByVariant } from "../recipients/audience";
import { Columns, RecipientRow, RejectReason, STEP_KEY, TemplateDataJson } from "../recipients/recipient-rows";
import { ZoneDecisions } from "./decisions";
import { InstantHistogram } from "./window";

/** The template variable that holds each recipient's unsubscribe link; a list column of this name is refused. */
export const UNSUBSCRIBE_KEY = "unsubscribe_url";

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
 * Per-recipient unsubscribe links, each exactly unsubscribeUrl(baseUrl, key, email): the text around the token is the
 * same for every address (a base64url token is never percent-encoded), so it is found once and each link is that text
 * around the recipient's token.
 */
export class UnsubscribeLinks {
  private readonly before: string;
  private readonly after: string;
  constructor(
    baseUrl: string,
    private readonly key: Buffer,
  ) {
    const probe = "probe@example.com";
    const url = unsubscribeUrl(baseUrl, key, probe);
    const token = unsubscribeToken(key, probe);
    const at = url.indexOf(token);
    if (at < 0 || url.lastIndexOf(token) !== at)
      throw new Error(`internal: the unsubscribe link of ${baseUrl} does not hold its token once`);
    this.before = url.slice(0, at);
    this.after = url.slice(at + token.length);
  }

  /** The link, or why an address cannot have one (the token or the List-Unsubscribe header would be too long). */
  link(email: string): { link: string } | { problem: string } {
    const token = unsubscribeToken(this.key, email);
    if (token.indexOf(".") > MAX_TOKEN_ADDRESS_CHARS)
      return { problem: `address too long for an unsubscribe token (at most 300 bytes): --bulk cannot give it one-click unsubscribe` };
    const link = this.before + token + this.after;
    if (link.length + 2 > ses.maxHeaderValueChars)
      return { problem: `its List-Unsubscribe header would be ${link.length + 2} characters, over SES's ${ses.maxHeaderValueChars}` };
    return { link };
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

  /** Adds one entry (its JSON and sizes, which fitsAlone has passed) to its group; resolves once written. */
  async add(g: Group, entryJson: string, lineBytes: number, inputBytes: number): Promise<void> {
    const comma = g.open.length ? 1 : 0;
    if (
      g.open.length &&
      (g.lineBytes + comma + lineBytes > MAX_LINE_ENTRY_BYTES || g.inputBytes + comma + inputBytes > MAX_BULK_ENTRIES_INPUT_BYTES)
    )
      await this.emit(g);
    const sep = g.open.length ? 1 : 0;
    g.open.push(entryJson);
    g.lineBytes += sep + lineBytes;
    g.inputBytes += sep + inputBytes;
    g.openChars += entryJson.length;
    this.openChars += entryJson.length;
    if (!g.listed) {
      g.listed = true;
      this.opened.add(g);
    }
    if (g.open.length === MAX_BULK_ENTRIES) await this.emit(g);
    while (this.openChars > MAX_OPEN_CHARS) {
      const oldest = this.opened.values().next().value as Group;
      this.stats.splitEarly++;
      await this.emit(oldest);
    }
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
    const line =
      bulkLineStart({
        schedule_name: `"${name}"`,
        send_at: `"${wall}"`,
        timezone: `"UTC"`,
        utc: `"${new Date(g.utcMs).toISOString()}"`,
        schedule_expression: `"${atExpression(wall)}"`,
        step: String(g.step),
        template: g.templateJson,
        variant: g.variantJson,
      }) +
      g.open.join(",") +
      BULK_LINE_END;
    const s = this.stats;
    s.schedules++;
    s.entries += entries;
    s.largest = Math.max(s.largest, entries);
    s.smallest = s.smallest === 0 ? entries : Math.min(s.smallest, entries);
    s.lineBytes += Buffer.byteLength(line);
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
  private readonly stepJson: string[];
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
   * them cannot be sent in bulk, adds none and says why.
   */
  async add(row: RecipientRow, decided: ZoneDecisions, slot: number): Promise<{ reason: RejectReason; text: string } | undefined> {
    const made = this.links.link(row.email);
    if ("problem" in made) return { reason: "invalid-email", text: made.problem };
    const linkJson = JSON.stringify(made.link);
    const headersJson = JSON.stringify(unsubscribeHeaders(made.link));
    const dataPrefix = this.templateData.prefix(row.fields) + `"${UNSUBSCRIBE_KEY}":` + linkJson + ",";
    const emailJson = JSON.stringify(row.email);
    const idJson = JSON.stringify(row.id);
    const groups = this.groupsFor(decided, slot);
    const entries = this.entries;
    entries.length = 0;
    for (let k = 0; k < groups.length; k++) {
      const group = groups[k];
      if (!group) continue;
      const dataJson = dataPrefix + this.stepJson[k];
      const json = bulkEntryJson(idJson, emailJson, dataJson, headersJson);
      const lineBytes = Buffer.byteLength(json);
      const inputBytes = bulkEntryInputBytes(emailJson, dataJson, headersJson);
      if (!fitsAlone(lineBytes, inputBytes))
        return {
          reason: "too-large",
          text: `personalization too large for a bulk schedule: an entry must fit ${MAX_LINE_ENTRY_BYTES} bytes of plan line and ${MAX_BULK_ENTRIES_INPUT_BYTES} bytes of the schedule's Input`,
        };
      entries.push({ group, json, lineBytes, inputBytes });
    }
    for (const e of entries) await this.chunks.add(e.group, e.json, e.lineBytes, e.inputBytes);
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
