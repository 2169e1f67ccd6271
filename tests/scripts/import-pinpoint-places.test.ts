/**
 * import-pinpoint and the place columns (issue "Zones from the data"): Demographic.Timezone, Location and the user's
 * SMS number go to the recipient CSV's timezone, latitude, longitude, postal_code, country and phone columns, and the
 * imported CSV is planned in the zone of its coordinates.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "csv-parse/sync";
import { main } from "../../scripts/import-pinpoint";
import { main as launch } from "../../scripts/launch-campaign";
import { endpointLocation } from "../../scripts/lib/pinpoint/endpoints";
import { SmsContacts } from "../../scripts/lib/pinpoint/sms-contacts";
import { fnv1a32 } from "../../scripts/lib/recipients/seen-keys";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-pinpoint-places-"));
let runs = 0;

type Endpoint = Record<string, unknown>;
const email = (o: Endpoint): Endpoint => ({ ChannelType: "EMAIL", EndpointStatus: "ACTIVE", OptOut: "NONE", ...o });
const sms = (o: Endpoint): Endpoint => ({ ChannelType: "SMS", EndpointStatus: "ACTIVE", OptOut: "NONE", ...o });

/** Writes the files (name → endpoints) into a fresh directory and imports it. */
async function importFiles(files: Record<string, Endpoint[]>) {
  const dir = path.join(tmp, `export-${++runs}`);
  fs.mkdirSync(dir);
  for (const [name, endpoints] of Object.entries(files))
    fs.writeFileSync(path.join(dir, name), endpoints.map((e) => JSON.stringify(e)).join("\n") + "\n");
  const out = path.join(tmp, `out-${runs}`);
  let stdout = "";
  let stderr = "";
  const code = await main(["--endpoints", dir, "--out", out, "--json"], {
    out: (t) => (stdout += t),
    err: (t) => (stderr += t),
  });
  const text = fs.readFileSync(path.join(out, "recipients.csv"), "utf8");
  const recipients = parse(text, { columns: true }) as Record<string, string>[];
  const skipped = parse(fs.readFileSync(path.join(out, "skipped.csv"), "utf8"), { columns: true }) as Record<
    string,
    string
  >[];
  return { code, stderr, json: JSON.parse(stdout), header: text.split("\n")[0], recipients, skipped, out };
}

const PLACE = ["timezone", "latitude", "longitude", "postal_code", "country", "phone"];
const placeOf = (r: Record<string, string>) => [r.id, ...PLACE.map((c) => r[c])];

describe("import-pinpoint: the place columns", () => {
  it("writes Location as latitude, longitude, postal_code and country when the endpoint has no Demographic.Timezone", async () => {
    const r = await importFiles({
      "a.jsonl": [
        email({
          Id: "e1",
          Address: "tokyo@example.com",
          User: { UserId: "u1" },
          Location: { City: "Tokyo", Country: "JP", PostalCode: "100-0001", Latitude: 35.6812, Longitude: 139.7671 },
          Demographic: { Platform: "web" },
        }),
        // Numbers as JSON gives them: -0.1 stays -0.1, 51.5 stays 51.5 (no rounding, no trailing zeros).
        email({
          Id: "e2",
          Address: "london@example.com",
          User: { UserId: "u2" },
          Location: { Country: "gb", PostalCode: " EC1A 1BB ", Latitude: 51.5, Longitude: -0.1 },
        }),
        email({ Id: "e3", Address: "nowhere@example.com", User: { UserId: "u3" } }),
      ],
    });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.header, "id,email,timezone,latitude,longitude,postal_code,country");
    assert.deepStrictEqual(r.recipients.map(placeOf), [
      ["u1", "", "35.6812", "139.7671", "100-0001", "JP", undefined],
      ["u2", "", "51.5", "-0.1", "EC1A 1BB", "gb", undefined],
      ["u3", "", "", "", "", "", undefined],
    ]);
  });

  it("writes Demographic.Timezone as written: EST stays EST (the planner maps it)", async () => {
    const r = await importFiles({
      "a.jsonl": [
        email({ Id: "e1", Address: "a@example.com", User: { UserId: "u1" }, Demographic: { Timezone: "EST" } }),
      ],
    });
    assert.strictEqual(r.header, "id,email,timezone");
    assert.deepStrictEqual(
      r.recipients.map((x) => [x.id, x.timezone]),
      [["u1", "EST"]],
    );
  });

  it("gives an EMAIL row the phone of the same user's SMS endpoint, wherever that endpoint is in the export", async () => {
    const r = await importFiles({
      // The SMS endpoint in a later file than the user's EMAIL endpoint, another user's SMS endpoint between.
      "1.jsonl": [
        email({
          Id: "e1",
          Address: "ana@example.com",
          User: { UserId: "ana" },
          Demographic: { Timezone: "Europe/Paris" },
        }),
        email({ Id: "e2", Address: "bo@example.com", User: { UserId: "bo" } }),
      ],
      "2.jsonl": [
        sms({ Id: "s9", Address: "+15555550199", User: { UserId: "someone-else" } }),
        sms({ Id: "s1", Address: "+33612345678", User: { UserId: "ana" } }),
      ],
    });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.header, "id,email,timezone,phone");
    assert.deepStrictEqual(
      r.recipients.map((x) => [x.id, x.email, x.phone]),
      [
        ["ana", "ana@example.com", "+33612345678"],
        ["bo", "bo@example.com", ""],
      ],
    );
    // s1 gives ana's row its number; s9's number is no valid one (555-0199 is a fictional exchange).
    assert.deepStrictEqual(
      r.skipped.map((x) => [x.endpoint_id, x.reason]),
      [["s9", "invalid-number"]],
    );
  });

  it("of a user's SMS endpoints, takes the first in export order that is active, opted in and current", async () => {
    const r = await importFiles({
      "a.jsonl": [
        sms({ Id: "s1", Address: "+4915100000001", User: { UserId: "u" }, EndpointStatus: "INACTIVE" }),
        sms({ Id: "s2", Address: "+4915100000002", User: { UserId: "u" }, OptOut: "ALL" }),
        // Superseded: s3 is read again below with a later EffectiveDate and another number.
        sms({ Id: "s3", Address: "+4915100000003", User: { UserId: "u" }, EffectiveDate: "2026-01-01T00:00:00Z" }),
        email({ Id: "e1", Address: "u@example.com", User: { UserId: "u" } }),
        sms({ Id: "s4", Address: "+4915100000004", User: { UserId: "u" } }),
        sms({ Id: "s3", Address: "+4915100000033", User: { UserId: "u" }, EffectiveDate: "2026-02-01T00:00:00Z" }),
        // A number opted out on any endpoint is not used either (an opt-out is the person's).
        sms({ Id: "t1", Address: "+4915100000005", User: { UserId: "v" } }),
        sms({ Id: "t2", Address: "+4915100000005", User: { UserId: "w" }, OptOut: "ALL" }),
        email({ Id: "e2", Address: "v@example.com", User: { UserId: "v" } }),
      ],
    });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(
      r.recipients.map((x) => [x.id, x.phone]),
      [
        ["u", "+4915100000004"],
        ["v", ""],
      ],
    );
  });

  it("takes Location and Demographic.Timezone from the user's SMS endpoint when the EMAIL endpoint has none, never mixing two endpoints' Location", async () => {
    const smsPlace = {
      Demographic: { Timezone: "America/Toronto" },
      Location: { Country: "CA", PostalCode: "M5V", Latitude: 43.6, Longitude: -79.4 },
    };
    const r = await importFiles({
      "a.jsonl": [
        // No Location, no timezone: both the SMS endpoint's.
        email({ Id: "e1", Address: "a@example.com", User: { UserId: "a" } }),
        sms({ Id: "s1", Address: "+14165550101", User: { UserId: "a" }, ...smsPlace }),
        // A Location of its own (a country only): kept whole, the SMS endpoint's coordinates not added to it; no
        // timezone of its own: the SMS endpoint's.
        email({ Id: "e2", Address: "b@example.com", User: { UserId: "b" }, Location: { Country: "US" } }),
        sms({ Id: "s2", Address: "+14165550102", User: { UserId: "b" }, ...smsPlace }),
        // A timezone of its own: kept.
        email({ Id: "e3", Address: "c@example.com", User: { UserId: "c" }, Demographic: { Timezone: "Asia/Tokyo" } }),
        sms({ Id: "s3", Address: "+14165550103", User: { UserId: "c" }, ...smsPlace }),
      ],
    });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(r.recipients.map(placeOf), [
      ["a", "America/Toronto", "43.6", "-79.4", "M5V", "CA", "+14165550101"],
      ["b", "America/Toronto", "", "", "", "US", "+14165550102"],
      ["c", "Asia/Tokyo", "43.6", "-79.4", "M5V", "CA", "+14165550103"],
    ]);
    assert.deepStrictEqual(r.json.endpoints.places, {
      coordinates: 2,
      postalCode: 2,
      country: 3,
      phone: 3,
      fromSms: { location: 2, timezone: 2 },
      countryFromAlpha3: 0,
    });
  });

  it("maps an ISO 3166-1 alpha-3 country (USA) to alpha-2 (US); any other value is written as given", async () => {
    const r = await importFiles({
      "a.jsonl": [
        email({ Id: "e1", Address: "a@example.com", User: { UserId: "a" }, Location: { Country: "USA" } }),
        email({ Id: "e2", Address: "b@example.com", User: { UserId: "b" }, Location: { Country: " fra " } }),
        email({ Id: "e3", Address: "c@example.com", User: { UserId: "c" }, Location: { Country: "France" } }),
        // Not a current ISO country (the Soviet Union's SUN): as given.
        email({ Id: "e4", Address: "d@example.com", User: { UserId: "d" }, Location: { Country: "SUN" } }),
      ],
    });
    assert.deepStrictEqual(
      r.recipients.map((x) => [x.id, x.country]),
      [
        ["a", "US"],
        ["b", "FR"],
        ["c", "France"],
        ["d", "SUN"],
      ],
    );
    assert.strictEqual(r.json.endpoints.places.countryFromAlpha3, 2);
  });

  it("writes latitude and longitude only as a pair, and renames attributes named like a place column", async () => {
    const r = await importFiles({
      "a.jsonl": [
        email({
          Id: "e1",
          Address: "a@example.com",
          User: { UserId: "a", UserAttributes: { phone: ["+1 555"] } },
          Attributes: { Country: ["Atlantis"] },
          Location: { Latitude: 10.5 }, // no Longitude: neither is written (the launcher would refuse one alone)
        }),
      ],
    });
    assert.strictEqual(r.header, "id,email,timezone,attr_Country,user_phone");
    assert.deepStrictEqual(r.recipients, [
      { id: "a", email: "a@example.com", timezone: "", attr_Country: "Atlantis", user_phone: "+1 555" },
    ]);
  });

  it("the imported CSV is planned at 9 AM in the zone of a Location-only row's coordinates (launch-campaign --dry-run)", async () => {
    const r = await importFiles({
      "a.jsonl": [
        email({
          Id: "e1",
          Address: "tokyo@example.com",
          User: { UserId: "tokyo" },
          Location: { Country: "JP", Latitude: 35.7, Longitude: 139.7 },
        }),
        email({ Id: "e2", Address: "ny@example.com", User: { UserId: "ny" }, Demographic: { Timezone: "EST" } }),
      ],
    });
    const out = path.join(r.out, "launched");
    const code = await launch(
      [
        ...["--campaign", "places", "--recipients", path.join(r.out, "recipients.csv"), "--template", "t"],
        ...["--date", "2026-12-01", "--hour", "9", "--minute", "0", "--default-timezone", "Europe/London"],
        ...["--templates", "none", "--dry-run", "--now", "2026-11-30T12:00:00Z", "--out", out],
      ],
      { out: () => undefined, err: () => undefined },
    );
    assert.strictEqual(code, 0);
    const plan = fs
      .readFileSync(path.join(out, "plan.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { recipient_id: string; timezone: string; utc: string });
    // By hand: 35.7 N 139.7 E is Tokyo (JST, UTC+9, no DST): 09:00 on 2026-12-01 is 00:00Z, not London's 09:00Z.
    // EST is read as America/New_York (UTC-5 in December): 14:00Z.
    assert.deepStrictEqual(
      plan.map((p) => [p.recipient_id, p.timezone, p.utc]),
      [
        ["tokyo", "Asia/Tokyo", "2026-12-01T00:00:00.000Z"],
        ["ny", "America/New_York", "2026-12-01T14:00:00.000Z"],
      ],
    );
  });
});

describe("import-pinpoint: each user's SMS contact (SmsContacts)", () => {
  it("finds every user's first counting contact exactly, through hash collisions and the table's growth", async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "contacts-"));
    // 256 hash values for 3,000 users: about a dozen users share each one.
    const contacts = new SmsContacts(dir, (key) => fnv1a32(key) & 0xff);
    const location = endpointLocation({});
    const users = Array.from({ length: 3000 }, (_, i) => `user-${i}`);
    let line = 0;
    const entry = () => ({ idIndex: line++, date: null });
    for (const u of users)
      contacts.candidate(
        entry(),
        { userId: u, idFrom: "UserId", phone: `+1-${u}-first`, timezone: "", location },
        line,
      );
    // Second lines of every third user (passed over), and a first line that does not count for every seventh.
    for (const u of users.filter((_, i) => i % 3 === 0))
      contacts.candidate(
        entry(),
        { userId: u, idFrom: "UserId", phone: `+1-${u}-second`, timezone: "", location },
        line,
      );
    const refused = new Set(users.filter((_, i) => i % 7 === 0).map((u) => `+1-${u}-first`));
    await contacts.choose((_, phone) => !refused.has(phone));
    try {
      for (const [i, u] of users.entries()) {
        // A user whose first line does not count takes its second, if it has one.
        const expected = i % 7 !== 0 ? `+1-${u}-first` : i % 3 === 0 ? `+1-${u}-second` : undefined;
        assert.strictEqual(contacts.contactOf(u)?.phone, expected, u);
      }
      assert.strictEqual(contacts.contactOf("user-3000"), undefined);
      assert.strictEqual(contacts.contactOf(""), undefined);
    } finally {
      contacts.close();
    }
    assert.deepStrictEqual(fs.readdirSync(dir), []);
  });
});
