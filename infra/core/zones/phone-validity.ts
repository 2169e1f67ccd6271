/**
 * Whether a phone number is valid, as libphonenumber-js 1.12.31 says with its `min` metadata:
 * parsePhoneNumberFromString(text[, country]) and then isValid(). The verdict and the number's E.164 form are
 * libphonenumber-js's own, found for most numbers without calling it, as follows.
 *
 * Why: parse and isValid take 14 µs (E.164) to 24 µs (national) a number (measured on Node 20 here), and a list may
 * hold 500,000 distinct numbers; readPhone (phone.ts) takes about 1 µs a number this way (0.9 to 1.6 µs measured over
 * 500,000 distinct numbers of each kind: E.164, 60% North American; (907) 555-1234 in US; 020 … in GB; 030 … in DE).
 *
 * How, and why it is the same answer: for "+" and digits, libphonenumber-js (parse.js, isValid.js and their helpers)
 *  1. finds the calling code: the first of the number's first 1, 2 or 3 digits that is one (not when it starts with 0);
 *  2. tests the national prefix for parsing of that code's main country (`^(?:npfp)` on the digits after the code,
 *     the "rest") and, when it matches, strips it;
 *  3. for a code shared by several countries, tries each in order: its leading digits (rest.search(p) === 0), else
 *     its patterns (the whole rest against the national number pattern and each type's pattern, with the type's
 *     possible lengths);
 *  4. checks the rest's length (2 to 17 digits), then isValid: the chosen country's (or the code's) patterns again.
 * For national digits and a country, it first tests the country's international prefix (search(p) === 0) and
 * whether the digits start with its calling code (either makes it read them as international), then the country's
 * own national prefix for parsing; then 3 and 4 as above, the digits being the rest.
 * Everything else it does depends on the calling code (or country) and the number of digits only, for text that is
 * digits ("+" first for E.164: no extension, no RFC 3966 parts, nothing to trim). So for a "block", the numbers of one
 * calling code (or country), one length of rest and one first few digits of it: if every pattern above gives one
 * answer for the whole block (digit-patterns.ts decides this exactly), and the national prefix for parsing either
 * matches none of them or matches the same digits in each (an alternative of plain digits, `0`: the patterns are
 * then asked of the rest both with and without it, as extractNationalNumber.js does), libphonenumber-js takes the
 * same path for each number of the block and gives each the same verdict, with "+", the calling code and the rest
 * (less that prefix, or not: the same for all) as its E.164 form. The verdict of one number of the block (asked of
 * libphonenumber-js) is then the block's. Blocks are split a digit at a time until that holds (a block of one number
 * always holds). A block where a prefix makes libphonenumber-js read the digits otherwise (an international prefix,
 * the calling code, a national prefix for parsing that is more than digits: Argentina's, which matches every
 * number, Brazil's 0 and 90, Korea's 0) is left to it, number by number; so are codes whose patterns
 * digit-patterns.ts does not read.
 * tests/infra/core/zones/phone-validity.test.ts compares the two ways over numbers of every calling code and country.
 * Pure: no I/O; the blocks are a cache in memory, bounded (MAX_BLOCKS).
 */
import { Metadata, parsePhoneNumberFromString, type CountryCode, type MetadataJson } from "libphonenumber-js/core";
import minMetadata from "libphonenumber-js/min/metadata";
import { DigitPattern, UnsupportedPattern } from "./digit-patterns";

const METADATA = minMetadata as MetadataJson;
// Read once: the CLI's transpiler (esbuild, CommonJS) makes each use of an import a getter call.
const parse = parsePhoneNumberFromString;

/** A valid number's E.164 form and calling code. */
export interface ValidNumber {
  e164: string;
  callingCode: string;
}

/** libphonenumber-js's parse and isValid of `text` (a country for national numbers): the number when it is valid. */
export function libphonenumberValid(text: string, country?: CountryCode): ValidNumber | undefined {
  const parsed = country ? parse(text, country, METADATA) : parse(text, METADATA);
  return parsed?.isValid() ? { e164: parsed.number, callingCode: parsed.countryCallingCode } : undefined;
}

/** libphonenumber-js's parse.js: a national (significant) number has 2 to 17 digits. */
const MIN_REST = 2;
const MAX_REST = 17;
/**
 * At most this many blocks are made (a split one keeps 10 slots, about 100 bytes); numbers of blocks not made are
 * asked of libphonenumber-js one by one. 500,000 distinct numbers of all countries made about 10,000.
 */
export const MAX_BLOCKS = 100_000;

/** The parts of libphonenumber-js's Metadata read here (its typings name only selectNumberingPlan). */
interface Plan {
  IDDPrefix(): string;
  nationalNumberPattern(): string;
  nationalPrefixForParsing(): string | undefined;
  leadingDigits(): string | undefined;
  type(name: string): { pattern(): string } | undefined;
  callingCode(): string;
}
interface MetadataReader {
  selectNumberingPlan(countryOrCallingCode: string): void;
  numberingPlan: Plan;
  getCountryCodesForCallingCode(callingCode: string): string[] | undefined;
  hasCallingCode(callingCode: string): boolean;
}
/** getNumberType.js's types, all of which it may test. */
const TYPES = ["FIXED_LINE", "MOBILE", "TOLL_FREE", "PREMIUM_RATE", "SHARED_COST", "VOIP", "PERSONAL_NUMBER"];
TYPES.push("PAGER", "UAN", "VOICEMAIL");

/**
 * What libphonenumber-js tests the digits with, for E.164 numbers of one calling code or national numbers of one
 * country: the prefixes that make it read them otherwise, and the patterns of steps 3 and 4, prefix-matched (leading
 * digits) and whole-matched (national number, types).
 */
interface Scope {
  callingCode: string;
  /** National numbers: the country they are read in. */
  country?: CountryCode;
  /**
   * The national prefix for parsing (step 2), as its top-level alternatives: `^(?:a|b)`.exec matches the first that
   * matches (`(183[12])|0` in AU: `0` for 02 9374 4000); one that is digits only is what it then strips.
   */
  prefixForParsing: { pattern: DigitPattern; literal?: string }[];
  /** National numbers: the international prefix (stripIddPrefix.js: search(p) === 0). */
  internationalPrefix?: DigitPattern;
  leading: DigitPattern[];
  whole: DigitPattern[];
}

/** `pattern`'s alternatives at its top level (none for ""). */
function alternatives(pattern: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i <= pattern.length; i++) {
    const c = pattern[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if ((c === "|" && depth === 0) || i === pattern.length) (out.push(pattern.slice(from, i)), (from = i + 1));
  }
  return pattern === "" ? [] : out;
}

/**
 * E.164: the main country's national prefix for parsing. National (parse.js with a default country): the country's
 * international prefix, its national prefix for parsing (extractNationalNumber.js), and its calling code, which
 * blockVerdict looks for (extractCountryCallingCodeFromInternationalNumberWithoutPlusSign.js).
 */
function scopeOf(reader: MetadataReader, of: { callingCode: string } | { country: CountryCode }): Scope | undefined {
  try {
    reader.selectNumberingPlan("country" in of ? of.country : of.callingCode);
    const plan = reader.numberingPlan;
    const npfp = plan.nationalPrefixForParsing();
    const scope: Scope = {
      callingCode: plan.callingCode(),
      country: "country" in of ? of.country : undefined,
      prefixForParsing: alternatives(npfp ?? "").map((a) => ({
        pattern: new DigitPattern(a),
        literal: /^[0-9]+$/.test(a) ? a : undefined,
      })),
      internationalPrefix: "country" in of ? new DigitPattern(plan.IDDPrefix()) : undefined,
      leading: [],
      whole: [],
    };
    for (const country of reader.getCountryCodesForCallingCode(scope.callingCode) ?? [scope.callingCode]) {
      reader.selectNumberingPlan(country);
      const { numberingPlan } = reader;
      const leading = numberingPlan.leadingDigits();
      if (leading) scope.leading.push(new DigitPattern(leading));
      scope.whole.push(new DigitPattern(numberingPlan.nationalNumberPattern()));
      for (const name of TYPES) {
        const pattern = numberingPlan.type(name)?.pattern();
        if (pattern) scope.whole.push(new DigitPattern(pattern));
      }
    }
    return scope;
  } catch (error) {
    if (error instanceof UnsupportedPattern) return undefined;
    throw error;
  }
}

/**
 * A block's verdict, or its split by its next digit. Verdicts are numbers: INVALID, ASK (libphonenumber-js, number by
 * number), or valid: odd, 1 + 2 × the digits of national prefix it drops (`020 7946 0000` in GB: 3, it drops the 0).
 */
const INVALID = 0;
const ASK = 2;
type Block = number | (Block | undefined)[];

/**
 * What a scope's tests say of the numbers whose digits (the rest, for E.164) start with `prefix` and are `length`
 * long: split the block, ask libphonenumber-js, or one answer for all, with how many digits a literal national prefix
 * strips from each (0 when none matches; the patterns are then asked of the digits both before and after it).
 */
function blockVerdict(scope: Scope, prefix: string, length: number): "split" | "ask" | { strip: number } {
  const left = length - prefix.length;
  const code = scope.callingCode;
  if (scope.country && (code.startsWith(prefix) || prefix.startsWith(code))) {
    return prefix.length >= code.length ? "ask" : "split";
  }
  const idd = scope.internationalPrefix?.prefixAfter(prefix, left) ?? "none";
  if (idd !== "none") return idd === "all" ? "ask" : "split";
  let strip = 0;
  for (const { pattern, literal } of scope.prefixForParsing) {
    const verdict = pattern.prefixAfter(prefix, left);
    if (verdict === "none") continue;
    if (verdict === "mixed") return "split";
    if (!literal) return "ask";
    strip = literal.length;
    break;
  }
  for (const at of strip ? [0, strip] : [0]) {
    const [digits, open] = [prefix.slice(at), left];
    for (const p of scope.leading) if (p.prefixAfter(digits, open) === "mixed") return "split";
    for (const p of scope.whole) if (p.whole(p.walk(digits), open) === "mixed") return "split";
  }
  return { strip };
}

/**
 * Validity by blocks (this file's comment), for E.164 numbers and national ones. One instance holds its blocks;
 * phone.ts keeps one for the process.
 */
export class PhoneValidity {
  private readonly reader: MetadataReader;
  private readonly scopes = new Map<string, Scope | undefined>();
  /** Per scope ("+" and calling code, or country) and length of digits read, the block of all its numbers. */
  private readonly roots = new Map<string, Block>();
  private readonly callingCodes = new Set<string>();
  blocks = 0;

  constructor(private readonly maxBlocks = MAX_BLOCKS) {
    this.reader = new Metadata(METADATA) as unknown as MetadataReader;
    for (let code = 1; code < 1000; code++)
      if (this.reader.hasCallingCode(String(code))) this.callingCodes.add(String(code));
  }

  /** `digits` ("+" and digits only) when libphonenumber-js finds it valid, with its calling code. */
  e164(digits: string): ValidNumber | undefined {
    const callingCode = this.callingCodeOf(digits);
    const key = `+${callingCode}`;
    const scope = callingCode ? this.scope(key, { callingCode }) : undefined;
    const restAt = 1 + (callingCode?.length ?? 0);
    const verdict = scope ? this.verdict(scope, key, digits, restAt) : ASK;
    if (verdict === ASK) return libphonenumberValid(digits);
    if (verdict === INVALID) return undefined;
    const strip = (verdict - 1) / 2;
    return { e164: strip === 0 ? digits : key + digits.slice(restAt + strip), callingCode: callingCode! };
  }

  /** National `digits` (digits only) read in `country` (one libphonenumber-js supports), when valid. */
  national(digits: string, country: CountryCode): ValidNumber | undefined {
    const scope = this.scope(country, { country });
    const verdict = scope ? this.verdict(scope, country, digits, 0) : ASK;
    if (verdict === ASK) return libphonenumberValid(digits, country);
    if (verdict === INVALID) return undefined;
    const { callingCode } = scope!;
    return { e164: `+${callingCode}${digits.slice((verdict - 1) / 2)}`, callingCode };
  }

  /** extractCountryCallingCode.js's search: the first of 1, 2, 3 digits after "+" that is a calling code. */
  private callingCodeOf(digits: string): string | undefined {
    if (digits.charCodeAt(1) === 48) return undefined;
    for (let length = 1; length <= 3 && length < digits.length; length++) {
      const code = digits.slice(1, 1 + length);
      if (this.callingCodes.has(code)) return code;
    }
    return undefined;
  }

  private scope(key: string, of: { callingCode: string } | { country: CountryCode }): Scope | undefined {
    if (!this.scopes.has(key)) this.scopes.set(key, scopeOf(this.reader, of));
    return this.scopes.get(key);
  }

  /** The verdict of the block `digits` (read from `restAt`) falls in, the blocks on the way made as needed. */
  private verdict(scope: Scope, key: string, digits: string, restAt: number): number {
    const length = digits.length - restAt;
    if (length < MIN_REST || length > MAX_REST) return ASK;
    const rootKey = `${key}/${length}`;
    let node = this.roots.get(rootKey);
    if (node === undefined) {
      if (this.blocks >= this.maxBlocks) return ASK;
      this.roots.set(rootKey, (node = this.newBlock(scope, digits, restAt, restAt)));
    }
    if (!Array.isArray(node)) return node;
    for (let at = restAt; ; at++) {
      const d = digits.charCodeAt(at) - 48;
      let child: Block | undefined = node[d];
      if (child === undefined) {
        if (this.blocks >= this.maxBlocks) return ASK;
        node[d] = child = this.newBlock(scope, digits, restAt, at + 1);
      }
      if (!Array.isArray(child)) return child;
      node = child;
    }
  }

  /** The block of the numbers like `digits` up to `end`: its verdict, or an empty split. */
  private newBlock(scope: Scope, digits: string, restAt: number, end: number): Block {
    this.blocks++;
    const verdict = blockVerdict(scope, digits.slice(restAt, end), digits.length - restAt);
    if (verdict === "ask") return ASK;
    if (verdict === "split") return new Array<Block | undefined>(10);
    // One number of the block stands for all of it; its E.164 form must be its calling code and digits, less the
    // national prefix the block strips or not (libphonenumber-js may keep it: the patterns say so for the block).
    const member = digits.slice(0, end) + "0".repeat(digits.length - end);
    const answer = scope.country ? libphonenumberValid(member, scope.country) : libphonenumberValid(member);
    if (!answer) return INVALID;
    const rest = member.slice(restAt);
    for (const strip of new Set([0, verdict.strip]))
      if (answer.e164 === `+${scope.callingCode}${rest.slice(strip)}`) return 1 + 2 * strip;
    return ASK;
  }
}
