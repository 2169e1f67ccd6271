/**
 * Writing CSV fields, in one place. Two kinds of file:
 * - files a tool reads back (recipients.csv from import-pinpoint): every value exactly as it is, RFC 4180 quoting;
 * - reports a person opens in a spreadsheet (rejects.csv, notes.csv, holdout.csv, skipped.csv): a value that starts
 *   with `=`, `+`, `-`, `@`, tab or CR would run as a formula there (CSV injection), so it is written after a `'`,
 *   inside quotes, as OWASP advises (https://owasp.org/www-community/attacks/CSV_Injection). Strip a leading `'` to get
 *   such a value back; the plan (plan.jsonl) and recipients.csv keep every value exactly.
 */

/** One field, RFC 4180: quoted (quotes doubled) when it holds a comma, a quote, CR or LF, or starts or ends in a space. */
export function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One field of a report for people: csvField, but a value a spreadsheet would take for a formula gets a leading `'`. */
export function reportField(value: string): string {
  const c = value.charCodeAt(0);
  // = + - @ tab CR
  if (c === 0x3d || c === 0x2b || c === 0x2d || c === 0x40 || c === 0x09 || c === 0x0d)
    return `"'${value.replace(/"/g, '""')}"`;
  return csvField(value);
}
