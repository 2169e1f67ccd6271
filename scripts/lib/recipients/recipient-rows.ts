/**
 * Step 1 of planning, shared by the launcher and size-window: is this CSV record a recipient we may send to?
 * Each record becomes a RecipientRow or a Reject (reason + one line of text for rejects.csv). Same code, same counts
 * in both tools.
 *
 * The header's columns are recipient-columns.ts's; a row's size check is row-size.ts's.
 */
import { MAX_PLAN_ROW_BYTES } from "../../../infra/core/plan/plan-row";
import { ses } from "../../../infra/core/plan/quotas";
import { CsvRecord } from "./recipients";
import { CompactSeenKeys } from "./seen-keys";
import { Columns, rowTiming } from "./recipient-columns";
import { PlanLineBound } from "./row-size";
import { RowTiming } from "../../../infra/core/timing/send-rules";
import { isEmailAddress } from "../../../infra/core/send/email";

/** SES takes at most 254 characters in an address. */
const MAX_EMAIL_LENGTH = 254;

export type RejectReason =
  | "wrong-field-count"
  | "missing-id"
  | "duplicate-id"
  | "invalid-email"
  | "duplicate-email"
  | "unknown-zone"
  /** The timezone value names several zones (`CST`) and no --zone-alias chooses (zone-abbreviations.ts). */
  | "ambiguous-zone"
  /** No usable timezone, and latitude/longitude that are not decimal degrees in range, or one without the other. */
  | "invalid-coordinates"
  /** No usable timezone, and a postal code not in its country's form (infra/core/zones/postal.ts). */
  | "invalid-postal-code"
  /** No usable timezone, and a phone number libphonenumber does not take as valid (infra/core/zones/phone.ts). */
  | "invalid-phone"
  | "too-large"
  | "send-time-passed"
  | "invalid-send-time"
  | "invalid-date"
  | "quiet-hours"
  | "missing-template-data"
  /** --bulk launches: the address is opted out in the stack's SES contact list (plan.ts, ContactListCheck). */
  | "opted-out"
  /** A row with a text step (SMS) and no phone (planning/sms-steps.ts). */
  | "missing-phone"
  /** A text's body above --max-segments message parts. */
  | "too-many-segments"
  /** Legal hours (--legal-hours, --legal-hours-miss skip) leave the row no send. */
  | "legal-hours"
  /** A text step's number is an earlier row's (a number is texted once a campaign; the same-subject limit counts it). */
  | "duplicate-phone";

export interface Reject {
  line: number;
  id: string;
  reason: RejectReason;
  /** One line for rejects.csv: what is wrong with the row. */
  text: string;
}

/** A row that passed the checks: the fields the planner uses. */
export interface RecipientRow {
  line: number;
  id: string;
  email: string;
  /** The timezone column as written (undefined when the file has none). */
  rawZone: string | undefined;
  /** The country column as written (undefined when the file has none). */
  country: string | undefined;
  /** The latitude and longitude columns as written (undefined when the file has none). */
  latitude: string | undefined;
  longitude: string | undefined;
  /** The postal_code and phone columns as written (undefined when the file has none). */
  postalCode: string | undefined;
  phone: string | undefined;
  /** The send-time control columns' values (send_at, send_hour, send_minute) and the --after column's. */
  timing: RowTiming;
  fields: string[];
  /** What was changed or deserves a look (a trimmed address, an id like another but for case), for the notes file. */
  notes?: string[];
  /** The earlier line whose id differs from this one only in case or surrounding spaces. */
  sameIdButCase?: number;
}

/**
 * The form of an address two rows must not share: trimmed, all lower case. The domain is case-insensitive by
 * definition; the local part may be case-sensitive by RFC 5321, but mail servers treat it case-insensitively in
 * practice, and a second email cannot be taken back. Dots and `+tags` are kept: their meaning is the provider's.
 */
export function normalizedEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The form of an id two rows may share only with a note: trimmed, lower-cased (schedule names treat case as distinct). */
export function foldedId(id: string): string {
  return id.trim().toLowerCase();
}

export interface CheckOptions {
  /** Plan rows that share an address (a list that means it); by default the later ones are rejected. */
  allowDuplicateEmails?: boolean;
  /** Note rows whose id differs from an earlier planned row's only in case or surrounding spaces. */
  noticeIdsDifferingInCase?: boolean;
  /** Rows to expect (a line count): the sets of ids and addresses are sized for it. */
  expectedRows?: number;
  /** How many steps each row gets (the step number is in each line's template data). */
  steps: number;
}

export function isReject(r: RecipientRow | Reject): r is Reject {
  return "reason" in r;
}

/**
 * Checks each record in file order: field count, id present and not seen before, a valid address. The ids and
 * addresses seen so far are kept exact and compact (seen-keys.ts: a Map stops at 2^24 entries); one set serves the
 * ids and their case-folded forms. close() removes the sets' files.
 */
export class RecipientChecker {
  /** Every id seen (a later row with the same id is a duplicate); marked when its row passed the checks. */
  private readonly ids: CompactSeenKeys;
  /** Undefined when duplicate addresses are allowed. */
  private readonly emails?: CompactSeenKeys;
  private readonly noticeCase: boolean;
  private readonly lineBound: PlanLineBound;

  constructor(
    private readonly columns: Columns,
    o: CheckOptions,
  ) {
    this.noticeCase = o.noticeIdsDifferingInCase ?? false;
    this.ids = new CompactSeenKeys({ fold: this.noticeCase ? foldedId : undefined, initialCapacity: o.expectedRows });
    if (!o.allowDuplicateEmails) this.emails = new CompactSeenKeys({ initialCapacity: o.expectedRows });
    this.lineBound = new PlanLineBound(columns, o.steps);
  }

  /** The row, or why it is rejected (a Reject has a `reason`). */
  check(rec: CsvRecord): RecipientRow | Reject {
    const f = rec.fields;
    const c = this.columns;
    const id = f[c.id] ?? "";
    if (f.length !== c.header.length)
      return reject(rec, id, "wrong-field-count", `${f.length} fields where the header has ${c.header.length}`);
    if (id.trim() === "") return reject(rec, id, "missing-id", "missing id");
    const first = this.ids.firstLine(id);
    if (first !== undefined)
      return reject(rec, id, "duplicate-id", `duplicate id (first on line ${first}); a recipient is sent once`);
    const row = this.checkAddressAndSize(rec, id);
    if (isReject(row)) {
      // Seen, so that a later row with this id is a duplicate; not marked: no note refers to a rejected row.
      this.ids.add(id, rec.line, false);
      return row;
    }
    if (this.noticeCase) {
      const firstFolded = this.ids.firstMarkedLineOfFold(id);
      if (firstFolded !== undefined) {
        row.sameIdButCase = firstFolded;
        (row.notes ??= []).push(
          `id differs from line ${firstFolded}'s only in case or surrounding spaces: a separate recipient (schedule names assume case matters)`,
        );
      }
    }
    this.ids.add(id, rec.line, true);
    return row;
  }

  /** Removes the sets' files. */
  close(): void {
    this.ids.close();
    this.emails?.close();
  }

  private checkAddressAndSize(rec: CsvRecord, id: string): RecipientRow | Reject {
    const f = rec.fields;
    const c = this.columns;
    const email = f[c.email].trim();
    if (!isEmailAddress(email) || email.length > MAX_EMAIL_LENGTH)
      return reject(rec, id, "invalid-email", `invalid email address "${f[c.email]}"`);
    if (this.emails) {
      const key = normalizedEmail(email);
      const firstEmail = this.emails.firstLine(key);
      if (firstEmail !== undefined)
        return reject(
          rec,
          id,
          "duplicate-email",
          `duplicate email address (first on line ${firstEmail}); a person is sent once`,
        );
      this.emails.add(key, rec.line);
    }
    if (this.lineBound.tooLarge(id, email, f))
      return reject(
        rec,
        id,
        "too-large",
        `personalization too large: a plan row must fit a ${MAX_PLAN_ROW_BYTES}-byte batch and TemplateData ${ses.maxTemplateDataChars} characters`,
      );
    const rawZone = c.timezone === undefined ? undefined : f[c.timezone];
    const country = c.country === undefined ? undefined : f[c.country];
    const latitude = c.latitude === undefined ? undefined : f[c.latitude];
    const longitude = c.longitude === undefined ? undefined : f[c.longitude];
    const postalCode = c.postalCode === undefined ? undefined : f[c.postalCode];
    const phone = c.phone === undefined ? undefined : f[c.phone];
    const row: RecipientRow = {
      line: rec.line,
      id,
      email,
      rawZone,
      country,
      latitude,
      longitude,
      postalCode,
      phone,
      timing: rowTiming(f, c.timing),
      fields: f,
    };
    if (email !== f[c.email]) (row.notes ??= []).push(`email "${f[c.email]}" trimmed`);
    return row;
  }
}

function reject(rec: CsvRecord, id: string, reason: RejectReason, text: string): Reject {
  return { line: rec.line, id, reason, text };
}
