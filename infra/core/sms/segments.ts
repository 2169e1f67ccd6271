/**
 * How many message parts a text takes (docs/sms.md, "Segments"), as 3GPP TS 23.038 and the carriers count them: a text
 * whose every character is in the GSM 7-bit default alphabet or its extension table is GSM-7, where a character of
 * the extension table (form feed, ^ { } \ [ ~ ] | €) is an escape and the character, two septets; 160 septets fit in
 * one message, 153 in each part of a longer one (the user data header takes the rest), and an escape is never parted
 * from its character. Any other text is UCS-2: UTF-16 code units, 70 in one message, 67 in each part of a longer one,
 * and a surrogate pair (an emoji) is never split between parts. Pure: no I/O.
 */

/** The GSM 7-bit default alphabet (TS 23.038 § 6.2.1) but its escape, 0x1B. */
export const GSM7_BASIC =
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
/** The default alphabet's extension table (§ 6.2.1.1): each is sent as the escape and itself. */
export const GSM7_EXTENSION = "\f^{}\\[~]|€";

const BASIC = new Set(GSM7_BASIC);
const EXTENSION = new Set(GSM7_EXTENSION);

export type SmsEncoding = "GSM-7" | "UCS-2";

export interface SegmentCount {
  encoding: SmsEncoding;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) of the whole text. */
  units: number;
  /** Message parts: 0 for an empty text, 1 when it fits one message. */
  segments: number;
  /** The text of each part, in order (joined, the text). */
  parts: string[];
}

export const LIMITS: Readonly<Record<SmsEncoding, { single: number; part: number }>> = {
  "GSM-7": { single: 160, part: 153 },
  "UCS-2": { single: 70, part: 67 },
};

/** Whether every character of `text` is in the GSM-7 default alphabet or its extension table. */
export function isGsm7(text: string): boolean {
  for (const ch of text) if (!BASIC.has(ch) && !EXTENSION.has(ch)) return false;
  return true;
}

/** The text's characters (code points) with their size in the encoding's units. */
function units(text: string, encoding: SmsEncoding): { ch: string; size: number }[] {
  return [...text].map((ch) => ({ ch, size: encoding === "UCS-2" ? ch.length : EXTENSION.has(ch) ? 2 : 1 }));
}

/** The encoding, size and parts of a text. */
export function countSegments(text: string): SegmentCount {
  const encoding: SmsEncoding = isGsm7(text) ? "GSM-7" : "UCS-2";
  const chars = units(text, encoding);
  const total = chars.reduce((n, c) => n + c.size, 0);
  const { single, part } = LIMITS[encoding];
  if (total === 0) return { encoding, units: 0, segments: 0, parts: [] };
  if (total <= single) return { encoding, units: total, segments: 1, parts: [text] };
  const parts: string[] = [];
  let current = "";
  let used = 0;
  for (const { ch, size } of chars) {
    if (used + size > part) {
      parts.push(current);
      current = "";
      used = 0;
    }
    current += ch;
    used += size;
  }
  parts.push(current);
  return { encoding, units: total, segments: parts.length, parts };
}
