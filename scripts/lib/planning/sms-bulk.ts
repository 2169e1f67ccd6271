/**
 * Texts in bulk (launch-campaign --bulk with a text step, docs/sms.md "Texts in bulk"): the texts of one step that share
 * its UTC instant and variant share one schedule of at most `perLine` entries, a bulk line of channel sms
 * (infra/core/plan/sms-bulk-plan-row.ts), beside the email bulk lines (bulk.ts) and filled the same way: in the list's
 * order, a group's open line written when it is full and every open line at the end, named by the group and the
 * line's position (naming.ts bulkScheduleName). So a group of n texts takes ⌈n ÷ perLine⌉ schedules.
 *
 * One schedule's texts are sent in one burst (the sender sends an execution's texts 10 at a time), so `perLine` is
 * bounded by the pool's pace: smsBulkEntriesPerLine.
 */
import { SMS_MAX_ENTRIES } from "../../../infra/core/send/sender-contract";
import { atExpression } from "../../../infra/core/plan/schedule-expression";
import { bulkScheduleName } from "../../../infra/core/plan/naming";
import { formatSmsBulkPlanRow, SmsBulkEntry } from "../../../infra/core/plan/sms-bulk-plan-row";
import { Step } from "../../../infra/core/timing/send-time";
import { RecipientRow } from "../recipients/recipient-rows";
import type { SmsPace } from "./size-window";
import { PlannedTexts, SmsRequest } from "./sms-steps";
import { BulkStats, countBulkLine } from "./bulk-chunks";

/**
 * Texts a bulk line of texts holds: SMS_MAX_ENTRIES (20, what one sender execution sends), and no more than the pool
 * sends in one second: ⌊mps ÷ partsPerText⌋ (each text counted at --max-segments parts, the most one may take), at
 * least 1. 1 MPS (one 10DLC number) at 3 parts: 1 a line; 3 MPS (toll-free) at 1 part: 3; 100 MPS (a short code): 20.
 */
export function smsBulkEntriesPerLine(pace: Pick<SmsPace, "mps" | "partsPerText">): number {
  return Math.max(1, Math.min(SMS_MAX_ENTRIES, Math.floor(pace.mps / pace.partsPerText)));
}

interface Group {
  step: number;
  utcMs: number;
  variant: string | null;
  template: string;
  lines: number;
  entries: SmsBulkEntry[];
}

/** Text entries grouped by (step, instant, variant), written as bulk lines of texts through `write` as they fill. */
export class SmsBulkLines {
  private readonly groups = new Map<string, Group>();

  constructor(
    private readonly request: SmsRequest,
    private readonly steps: readonly Step[],
    readonly perLine: number,
    /** The variant of each slot (the last: none), as plan-lines.ts slotOf numbers them. */
    private readonly variants: readonly (string | null)[],
    /** The bulk plan's counts (the email lines' BulkChunks): its texts' lines count there too, as schedules. */
    private readonly stats: BulkStats,
    private readonly write: (bytes: Uint8Array) => Promise<void> | undefined,
  ) {}

  /** Adds a planned row's texts, in the group with `slot`. */
  async add(row: RecipientRow, planned: PlannedTexts, slot: number): Promise<void> {
    const variant = this.variants[slot];
    const { decided, texts } = planned;
    for (let k = 0; k < decided.steps.length; k++) {
      const d = decided.steps[k];
      const body = texts.bodies[k];
      if (!d.time || body === undefined || this.steps[k].channel !== "sms") continue;
      const g = this.group(k, d.time.utcMs, variant);
      g.entries.push({
        recipient_id: row.id,
        phone: texts.phone,
        body,
        segments: texts.segments[k],
        until: d.text!.until,
        ...(d.text!.sameSubjectLimit === undefined ? {} : { same_subject_limit: d.text!.sameSubjectLimit }),
      });
      if (g.entries.length === this.perLine) await this.emit(g);
    }
  }

  /** Writes every open line, in the order their groups were opened. */
  async close(): Promise<void> {
    for (const g of this.groups.values()) if (g.entries.length) await this.emit(g);
  }

  private group(k: number, utcMs: number, variant: string | null): Group {
    const key = `${k} ${utcMs} ${variant === null ? "" : JSON.stringify(variant)}`;
    let g = this.groups.get(key);
    if (!g) {
      const template = this.request.templates.get(k)!.name;
      g = { step: this.steps[k].number, utcMs, variant, template, lines: 0, entries: [] };
      this.groups.set(key, g);
    }
    return g;
  }

  private emit(g: Group): Promise<void> | undefined {
    const utc = new Date(g.utcMs).toISOString();
    const wall = utc.slice(0, 19);
    const text = formatSmsBulkPlanRow({
      schedule_name: bulkScheduleName(g.step, g.utcMs, g.variant, g.lines),
      send_at: wall,
      timezone: "UTC",
      utc,
      schedule_expression: atExpression(wall),
      step: g.step,
      template: g.template,
      variant: g.variant,
      channel: "sms",
      entries: g.entries,
    });
    const bytes = Buffer.from(text, "utf8");
    countBulkLine(this.stats, g.entries.length, bytes.length, g.utcMs);
    g.lines++;
    g.entries = [];
    return this.write(bytes);
  }
}
