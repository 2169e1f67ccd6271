/**
 * Validity by blocks (infra/core/zones/phone-validity.ts) answers as libphonenumber-js itself (parse, then isValid, with
 * its min metadata), number for number: E.164 numbers of every calling code and length, numbers made from each
 * country's example mobile number and of every NANP area code of libphonenumber's time-zone map; national numbers of
 * every country, with and without the prefixes libphonenumber-js reads otherwise.
 */
import { strict as assert } from "assert";
import examples from "libphonenumber-js/examples.mobile.json";
import {
  getCountries,
  getCountryCallingCode,
  parsePhoneNumberFromString,
  type CountryCode,
} from "libphonenumber-js/min";
import metadata from "libphonenumber-js/min/metadata";
import { PhoneValidity } from "../../../../infra/core/zones/phone-validity";
import { PHONE_ZONES } from "../../../../infra/core/zones/phone-zones";

/** libphonenumber-js, called as its README says. */
function library(text: string, country?: CountryCode) {
  const parsed = country ? parsePhoneNumberFromString(text, country) : parsePhoneNumberFromString(text);
  return parsed?.isValid() ? { e164: parsed.number, callingCode: parsed.countryCallingCode } : undefined;
}

let seed = 20260715;
const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join("");

function numbers(): string[] {
  const out: string[] = [];
  const json = metadata as unknown as { country_calling_codes: object; nonGeographic: object };
  const codes = Object.keys({ ...json.country_calling_codes, ...json.nonGeographic });
  for (const code of codes) for (let length = 1; length <= 18; length++) out.push(`+${code}${digits(length)}`);
  for (const country of getCountries()) {
    const national = (examples as Record<string, string>)[country];
    if (!national) continue;
    const code = getCountryCallingCode(country);
    for (let kept = 1; kept < national.length; kept++) {
      const number = `${national.slice(0, kept)}${digits(national.length - kept)}`;
      // With the trunk prefix people write after the code (+44 (0)20…), which libphonenumber-js may drop.
      out.push(`+${code}${number}`, `+${code}0${number}`);
    }
  }
  const areaCodes = new Set<string>();
  for (const prefixes of Object.values(PHONE_ZONES))
    for (const p of prefixes.split(" ")) if (p[0] === "1" && p.length >= 4) areaCodes.add(p.slice(1, 4));
  for (const area of areaCodes) for (let i = 0; i < 4; i++) out.push(`+1${area}${digits(7)}`);
  return out;
}

/** National numbers per country: its example's first digits and random ones, after its trunk and international
 * prefixes or its calling code too (those libphonenumber-js reads otherwise), and random digits of every length. */
function nationalNumbers(): [string, CountryCode][] {
  const out: [string, CountryCode][] = [];
  for (const country of getCountries()) {
    const code = getCountryCallingCode(country);
    for (let length = 1; length <= 18; length++) out.push([digits(length), country]);
    const national = (examples as Record<string, string>)[country];
    if (!national) continue;
    for (let kept = 1; kept < national.length; kept++) {
      const number = `${national.slice(0, kept)}${digits(national.length - kept)}`;
      out.push([number, country], [`0${number}`, country], [`${code}${number}`, country]);
    }
    out.push([`00${code}${national}`, country], [`011${code}${national}`, country], [`8${national}`, country]);
  }
  return out;
}

describe("phone validity without libphonenumber-js's parse", function () {
  this.timeout(20_000);
  const all = numbers();

  it("answers as libphonenumber-js for every number tried", () => {
    const fast = new PhoneValidity();
    let valid = 0;
    for (const number of all) {
      const expected = library(number);
      assert.deepEqual(fast.e164(number), expected, number);
      if (expected) valid++;
    }
    // The numbers tried are both: enough valid ones that a wrong "invalid" would show, and invalid ones.
    assert.ok(valid > all.length / 5 && valid < all.length - 1000, `${valid} valid of ${all.length}`);
    assert.ok(fast.blocks > 0);
  });

  it("answers the same again from its blocks, and as libphonenumber-js when it may keep none", () => {
    const fast = new PhoneValidity();
    const none = new PhoneValidity(0);
    const some = all.filter((_, i) => i % 4 === 0);
    const first = some.map((n) => fast.e164(n));
    assert.deepEqual(
      some.map((n) => fast.e164(n)),
      first,
    );
    assert.deepEqual(
      some.map((n) => none.e164(n)),
      first,
    );
    assert.equal(none.blocks, 0);
  });

  it("answers as libphonenumber-js for national numbers with their country", () => {
    const fast = new PhoneValidity();
    const tried = nationalNumbers();
    let valid = 0;
    for (const [number, country] of tried) {
      const expected = library(number, country);
      assert.deepEqual(fast.national(number, country), expected, `${number} in ${country}`);
      if (expected) valid++;
    }
    assert.ok(valid > tried.length / 5 && valid < tried.length - 1000, `${valid} valid of ${tried.length}`);
  });

  it("keeps a block per area code and exchange digit, not per number", () => {
    const fast = new PhoneValidity();
    for (let line = 0; line < 2000; line++) {
      fast.e164(`+1212555${String(line).padStart(4, "0")}`);
      fast.national(`212555${String(line).padStart(4, "0")}`, "US");
    }
    assert.ok(fast.blocks < 40, `${fast.blocks} blocks`);
  });
});
