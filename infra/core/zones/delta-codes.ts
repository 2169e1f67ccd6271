/**
 * A sorted list of whole numbers (postal codes as numbers: ZIP 02108 is 2108) as a short string, for tables generated
 * into code that lands in a Lambda bundle (postal-zones.ts): each number is its difference from the one before (the
 * first from -1), one character for a difference of 1 to 90, otherwise `~` and the difference in three base-91
 * characters. The 91 characters are `#` to `~` without the backslash, so the string needs no escape in a "…" literal.
 * Pure: no I/O.
 */
const ALPHABET = Array.from({ length: 0x7e - 0x23 + 1 }, (_, i) => String.fromCharCode(0x23 + i))
  .filter((c) => c !== "\\")
  .join("");
const BASE = ALPHABET.length;
const ESCAPE = ALPHABET[BASE - 1];
const MAX_SHORT = BASE - 1;
const MAX_DIFFERENCE = BASE ** 3 - 1;
/** Character code → digit (-1: not in the alphabet). */
const DIGITS = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE; i++) DIGITS[ALPHABET.charCodeAt(i)] = i;

/** `numbers` (strictly increasing, from 0) as the string the header describes. */
export function encodeDeltas(numbers: readonly number[]): string {
  let out = "";
  let previous = -1;
  for (const n of numbers) {
    const d = n - previous;
    if (!Number.isInteger(n) || d < 1 || d > MAX_DIFFERENCE)
      throw new Error(
        `encodeDeltas: ${n} after ${previous} (strictly increasing integers from 0, steps up to ${MAX_DIFFERENCE})`,
      );
    if (d <= MAX_SHORT) out += ALPHABET[d - 1];
    else
      out += ESCAPE + ALPHABET[Math.floor(d / BASE ** 2)] + ALPHABET[Math.floor(d / BASE) % BASE] + ALPHABET[d % BASE];
    previous = n;
  }
  return out;
}

/** Each number `text` (from encodeDeltas) holds, in order, to `visit`. */
export function decodeDeltas(text: string, visit: (n: number) => void): void {
  let n = -1;
  for (let i = 0; i < text.length; i++) {
    const digit = digitAt(text, i);
    if (digit < MAX_SHORT) n += digit + 1;
    else {
      n += (digitAt(text, i + 1) * BASE + digitAt(text, i + 2)) * BASE + digitAt(text, i + 3);
      i += 3;
    }
    visit(n);
  }
}

function digitAt(text: string, i: number): number {
  const code = text.charCodeAt(i);
  const digit = code < 128 ? DIGITS[code] : -1;
  if (digit < 0) throw new Error(`decodeDeltas: ${JSON.stringify(text.charAt(i))} at ${i} is not a delta character`);
  return digit;
}
