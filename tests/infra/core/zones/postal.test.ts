/**
 * Zones from postal codes (infra/core/zones/postal.ts). Every expected zone is written by hand from where the place is and
 * what tzdata says of it (zone.tab's comments, the county lines), never from the tables' own output.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { decodeDeltas, encodeDeltas } from "../../../../infra/core/zones/delta-codes";
import { POSTAL_CODE_COLUMN, readPostal } from "../../../../infra/core/zones/postal";
import { postalZonesSource } from "../../../../scripts/gen-postal-zones";

/** The zone of a code read with `country`, failing on anything but one zone. */
function zoneOf(code: string, country: string | undefined): string {
  const r = readPostal(code, country);
  assert.ok(r && "zones" in r && r.zones.length === 1, `${code} (${country}): ${JSON.stringify(r)}`);
  return r.zones[0];
}

function problemOf(code: string, country: string | undefined): string {
  const r = readPostal(code, country);
  assert.ok(r && "problem" in r, `${code} (${country}): expected a problem, got ${JSON.stringify(r)}`);
  return r.problem;
}

const US_ZIPS: [string, string, string][] = [
  ["10001", "America/New_York", "New York, Manhattan"],
  ["02108", "America/New_York", "Boston"],
  ["60601", "America/Chicago", "Chicago"],
  ["80202", "America/Denver", "Denver"],
  ["85004", "America/Phoenix", "Phoenix: Arizona keeps MST all year"],
  ["86515", "America/Denver", "Window Rock, Arizona: the Navajo Nation keeps daylight saving"],
  ["96813", "Pacific/Honolulu", "Honolulu"],
  ["99501", "America/Anchorage", "Anchorage"],
  ["99762", "America/Nome", "Nome, Alaska"],
  ["99546", "America/Adak", "Adak, Aleutians west of 169.5°W: Hawaii-Aleutian time"],
  ["46204", "America/Indiana/Indianapolis", "Indianapolis"],
  ["47591", "America/Indiana/Vincennes", "Vincennes, Knox County, Indiana"],
  ["46311", "America/Chicago", "Dyer, Lake County, Indiana: Chicago's suburbs keep Central time"],
  ["83702", "America/Boise", "Boise"],
  ["83814", "America/Los_Angeles", "Coeur d'Alene: the Idaho panhandle is Pacific"],
  ["97914", "America/Boise", "Ontario, Malheur County, Oregon: Mountain, like Boise"],
  ["32501", "America/Chicago", "Pensacola: the Florida panhandle west of the Apalachicola is Central"],
  ["32301", "America/New_York", "Tallahassee"],
  ["79901", "America/Denver", "El Paso: far west Texas is Mountain"],
  ["57701", "America/Denver", "Rapid City: western South Dakota is Mountain"],
  ["58601", "America/Denver", "Dickinson, Stark County, North Dakota: Mountain"],
  ["58554", "America/North_Dakota/New_Salem", "Mandan, Morton County, North Dakota: Central since 2003"],
  ["67735", "America/Denver", "Goodland, Sherman County, Kansas: Mountain"],
  ["48226", "America/Detroit", "Detroit"],
  ["49938", "America/Menominee", "Ironwood, Gogebic County: Michigan's Wisconsin border is Central"],
  ["40202", "America/Kentucky/Louisville", "Louisville"],
  ["42101", "America/Chicago", "Bowling Green: western Kentucky is Central"],
  ["37203", "America/Chicago", "Nashville"],
  ["37902", "America/New_York", "Knoxville: East Tennessee is Eastern"],
  ["89101", "America/Los_Angeles", "Las Vegas"],
  ["98101", "America/Los_Angeles", "Seattle"],
  ["00601", "America/Puerto_Rico", "Adjuntas, Puerto Rico"],
];

const CANADIAN_CODES: [string, string, string][] = [
  ["M5V 3L9", "America/Toronto", "Toronto, the CN Tower"],
  ["V6B 4Y8", "America/Vancouver", "Vancouver"],
  ["T2P 2M5", "America/Edmonton", "Calgary: Alberta is Mountain"],
  ["H2Y 1C6", "America/Toronto", "Montréal: Quebec west of 63°W keeps Eastern time"],
  ["S4P 3V7", "America/Regina", "Regina: Saskatchewan keeps CST all year"],
  ["S9V 0X7", "America/Edmonton", "Lloydminster, Saskatchewan side: the city keeps Alberta's time"],
  ["A1C 5M2", "America/St_Johns", "St. John's: Newfoundland time, UTC-3:30"],
  ["B3H 4R2", "America/Halifax", "Halifax"],
  ["C1A 7N8", "America/Halifax", "Charlottetown"],
  ["G4T 1A1", "America/Halifax", "Îles-de-la-Madeleine: Atlantic time, unlike the rest of Quebec"],
  ["R3C 4T3", "America/Winnipeg", "Winnipeg"],
  ["P9N 1A1", "America/Winnipeg", "Kenora: northwestern Ontario is Central"],
  ["E1C 4M3", "America/Moncton", "Moncton: New Brunswick is Atlantic"],
  // tz-lookup gives America/Edmonton, and that is right: Yellowknife has kept Edmonton's clock since 1980, and tzdata
  // 2023c made America/Yellowknife a link to America/Edmonton.
  ["X1A 2L9", "America/Edmonton", "Yellowknife"],
  ["X0A 0H0", "America/Iqaluit", "Iqaluit, Nunavut: Eastern"],
  ["Y1A 1B1", "America/Whitehorse", "Whitehorse: Yukon keeps UTC-7 all year"],
];

describe("readPostal: zones from postal codes", () => {
  it(`names its column ${POSTAL_CODE_COLUMN}`, () => assert.strictEqual(POSTAL_CODE_COLUMN, "postal_code"));

  for (const [zip, zone, place] of US_ZIPS)
    it(`US ${zip} (${place}) → ${zone}`, () => assert.strictEqual(zoneOf(zip, "US"), zone));

  for (const [code, zone, place] of CANADIAN_CODES)
    it(`CA ${code} (${place}) → ${zone}`, () => assert.strictEqual(zoneOf(code, "CA"), zone));

  it("the USPS ranges of single-zone territories give their zone, ZIPs the dataset lacks included", () => {
    assert.strictEqual(zoneOf("00901", "US"), "America/Puerto_Rico"); // Old San Juan
    assert.strictEqual(zoneOf("00802", "US"), "America/St_Thomas"); // St. Thomas, US Virgin Islands
    assert.strictEqual(zoneOf("96910", "US"), "Pacific/Guam"); // Hagåtña
    assert.strictEqual(zoneOf("96950", "US"), "Pacific/Saipan"); // Saipan, Northern Mariana Islands
    assert.strictEqual(zoneOf("96799", "US"), "Pacific/Pago_Pago"); // American Samoa
  });

  describe("US ZIP codes", () => {
    it("ZIP+4, spaces around, and the country in any case, alpha-2 or alpha-3", () => {
      for (const country of ["US", "us", " Us ", "USA", "usa"]) {
        assert.strictEqual(zoneOf("80202-1234", country), "America/Denver", country);
        assert.strictEqual(zoneOf("  80202 ", country), "America/Denver", country);
      }
    });

    it("4 digits are a ZIP whose leading 0 a spreadsheet dropped", () => {
      assert.strictEqual(zoneOf("2108", "US"), "America/New_York"); // 02108, Boston
      assert.strictEqual(zoneOf("0601", "US"), "America/Puerto_Rico"); // 00601 with one of its zeros
    });

    it("anything else is a problem naming the value and the forms allowed", () => {
      for (const code of ["601", "123456", "1234X", "02108 1234", "2108-1234", "02108-123", "021081234", "10001.0"]) {
        const problem = problemOf(code, "US");
        assert.ok(problem.includes(`postal_code "${code}"`), problem);
        assert.ok(problem.includes("02108-1234") && problem.includes("2108"), problem);
      }
      assert.match(problemOf("M5V 3L9", "US"), /not a US ZIP code/);
    });

    it("a well-formed ZIP the data does not have is unknown: no zones", () => {
      assert.deepStrictEqual(readPostal("00000", "US"), { zones: [] });
      assert.deepStrictEqual(readPostal("09001", "US"), { zones: [] }); // APO Europe: not a place
      // Calais, Maine: tz-lookup puts its centroid in New Brunswick's zone, so the table leaves it out, not guessed.
      assert.deepStrictEqual(readPostal("04619", "US"), { zones: [] });
    });

    it("without a country a ZIP is not read: 5 digits are many countries' form", () => {
      assert.strictEqual(readPostal("10001", undefined), undefined);
      assert.strictEqual(readPostal("10001", " "), undefined);
      assert.strictEqual(readPostal("75001", "FR"), undefined);
    });
  });

  describe("Canadian postal codes", () => {
    it("with or without the space, or the FSA alone, in any case, country CA or CAN in any case", () => {
      for (const country of ["CA", "ca", "CAN", " can "])
        for (const code of ["T2P 2M5", "T2P2M5", "t2p 2m5", "T2P", "t2p", " T2P 2M5 "])
          assert.strictEqual(zoneOf(code, country), "America/Edmonton", `${code} ${country}`);
    });

    it("a full code is read without a country (no other country's codes have its form); an FSA alone is not", () => {
      assert.strictEqual(zoneOf("M5V 3L9", undefined), "America/Toronto");
      assert.strictEqual(zoneOf("m5v3l9", ""), "America/Toronto");
      assert.strictEqual(readPostal("M5V", undefined), undefined);
      assert.strictEqual(readPostal("E1W 1AA", undefined), undefined); // London, Wapping: a UK postcode
      assert.strictEqual(readPostal("K1A 0B", undefined), undefined);
    });

    it("another country given is believed: not read", () => {
      assert.strictEqual(readPostal("E1W", "GB"), undefined);
      assert.strictEqual(readPostal("K1A 0B1", "gb"), undefined);
      assert.strictEqual(readPostal("K1A 0B1", "Canada"), undefined); // a name, not an ISO code
    });

    it("a malformed code is a problem naming the value and the forms allowed", () => {
      for (const code of ["K1A 0B", "K1A-0B1", "K1A  0B1", "KIA 0B1", "D1A 1A1", "W1A", "Z1A 1A1", "K1", "K1A 0B1 X"]) {
        const problem = problemOf(code, "CA");
        assert.ok(problem.includes(`postal_code "${code}"`), problem);
        assert.ok(problem.includes("A1A 1A1") && problem.includes("A1A1A1"), problem);
      }
      assert.match(problemOf("10001", "CA"), /not a Canadian postal code/);
    });

    it("a well-formed code the data does not have is unknown: no zones", () => {
      assert.deepStrictEqual(readPostal("H0H 0H0", "CA"), { zones: [] }); // Santa Claus's: no place
      assert.deepStrictEqual(readPostal("V0N 1A0", "CA"), { zones: [] }); // the dataset lost its coordinates
      assert.deepStrictEqual(readPostal("A0Z", "CA"), { zones: [] });
    });
  });

  it("a blank code is no code, whatever the country", () => {
    for (const country of ["US", "CA", undefined, "FR"]) {
      assert.strictEqual(readPostal(undefined, country), undefined);
      assert.strictEqual(readPostal("", country), undefined);
      assert.strictEqual(readPostal("  ", country), undefined);
    }
  });
});

describe("delta-codes: sorted numbers as a string", () => {
  it("gives back what it was given, steps of 1, 90, 91 and the largest included", () => {
    const numbers = [0, 1, 91, 92, 182, 183, 5000, 5001, 99_999, 99_999 + 91 ** 3 - 1];
    const text = encodeDeltas(numbers);
    const back: number[] = [];
    decodeDeltas(text, (n) => back.push(n));
    assert.deepStrictEqual(back, numbers);
    assert.ok(!/["\\]/.test(text), text);
    assert.strictEqual(encodeDeltas([0, 1, 2]).length, 3);
  });

  it("refuses numbers that do not increase, and characters it does not write", () => {
    assert.throws(() => encodeDeltas([5, 5]), /5 after 5/);
    assert.throws(() => encodeDeltas([3, 2]), /2 after 3/);
    assert.throws(() => decodeDeltas("##\\", () => undefined), /at 2/);
    assert.throws(() => decodeDeltas("#~#", () => undefined), /at 3/);
  });
});

describe("postal-zones.ts", () => {
  it("is what scripts/gen-postal-zones.ts generates from the data and zone.tab", function () {
    const zoneTab = "/usr/share/zoneinfo/zone.tab";
    const file = path.join(__dirname, "..", "..", "..", "..", "infra", "core", "zones", "postal-zones.ts");
    assert.strictEqual(postalZonesSource(fs.readFileSync(zoneTab, "utf8")), fs.readFileSync(file, "utf8"));
  });
});
