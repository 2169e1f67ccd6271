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
 *
 * Its parts: the unsubscribe links (unsubscribe-links.ts); chunks, and the count of schedules without them
 * (bulk-chunks.ts).
 */

import {
  BULK_ENTRY_END,
  bulkEntryStart,
  bulkEntrySizes,
  jsonTextBytes,
  MAX_BULK_ENTRIES_INPUT_BYTES,
} from "../../../infra/core/plan/bulk-plan-row";
import { Columns, STEP_KEY } from "../recipients/recipient-columns";
import { TemplateDataJson } from "../recipients/row-size";
import { unsubscribeAddress } from "../../../infra/core/consent/unsubscribe";
import { InputError } from "../../../infra/core/errors";
import { Step } from "../../../infra/core/timing/send-time";
import { Audience, templatesByVariant } from "../recipients/audience";
import { RecipientRow, RejectReason } from "../recipients/recipient-rows";
import { ZoneDecisions } from "./decision-types";
import { BulkChunks, Group, MAX_LINE_ENTRY_BYTES as LINE_ENTRY_BYTES } from "./bulk-chunks";
import { BulkSigning, UNSUBSCRIBE_KEY, UnsubscribeLinks } from "./unsubscribe-links";

/**
 * What the per-entry code reads from other modules, read once: the CLI's transpiler (esbuild, CommonJS) makes every
 * use of an import a getter call, 3% of a bulk dry run's CPU when read per entry (measured: docs/benchmarks.md).
 */
const MAX_INPUT_BYTES = MAX_BULK_ENTRIES_INPUT_BYTES;
const textBytes = jsonTextBytes;
const entrySizes = bulkEntrySizes;
const entryStart = bulkEntryStart;
const addressOf = unsubscribeAddress;
const MAX_LINE_ENTRY_BYTES = LINE_ENTRY_BYTES;

/** Text JSON.stringify writes as it is, in quotes: printable ASCII but `"` and `\`. */
export const PLAIN_JSON_TEXT = /^[ !#-[\]-~]*$/;

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
  /** Whether a step is a text: its sends are sms-bulk.ts's lines, not entries here. */
  private readonly textSteps: boolean;
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
    this.textSteps = steps.some((s) => s.channel === "sms");
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
    const groups = this.groupsFor(decided, slot);
    // A row whose sends are all texts (sms-bulk.ts) has no email entry, and may have no address.
    if (this.textSteps && groups.every((g) => g === undefined)) return undefined;
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
        d.time && this.steps[k].channel !== "sms"
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
