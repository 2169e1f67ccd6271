/**
 * import-pinpoint and consent: an address opted out anywhere in what is read is never imported, the latest line of
 * an endpoint counts, and text the importer cannot read exactly is skipped, never merged.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import fc from "fast-check";
import { parse } from "csv-parse/sync";
import { main } from "../../scripts/import-pinpoint";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-pinpoint-consent-"));
let runs = 0;

type Endpoint = Record<string, unknown>;
const email = (o: Endpoint): Endpoint => ({ ChannelType: "EMAIL", EndpointStatus: "ACTIVE", OptOut: "NONE", ...o });

/** Writes the files (name → endpoints, or raw bytes) into a fresh directory and imports it. */
async function importFiles(files: Record<string, Endpoint[] | Buffer>) {
  const dir = path.join(tmp, `export-${++runs}`);
  fs.mkdirSync(dir);
  for (const [name, content] of Object.entries(files))
    fs.writeFileSync(
      path.join(dir, name),
      Buffer.isBuffer(content) ? content : content.map((e) => JSON.stringify(e)).join("\n") + "\n",
    );
  const out = path.join(tmp, `out-${runs}`);
  let stdout = "";
  const code = await main(["--endpoints", dir, "--out", out, "--json"], {
    out: (t) => (stdout += t),
    err: () => undefined,
  });
  const csv = (f: string) =>
    parse(fs.readFileSync(path.join(out, f), "utf8"), { columns: true }) as Record<string, string>[];
  return { code, json: JSON.parse(stdout), recipients: csv("recipients.csv"), skipped: csv("skipped.csv") };
}

const reasons = (skipped: Record<string, string>[]) => skipped.map((s) => [s.endpoint_id, s.reason]);

describe("import-pinpoint: an opt-out anywhere keeps the address out", () => {
  it("an address opted out on one endpoint is not imported from another endpoint or user, across case and spaces", async () => {
    const r = await importFiles({
      "a.jsonl": [
        email({ Id: "e1", Address: "d@example.com", User: { UserId: "u1" }, OptOut: "ALL" }),
        email({ Id: "e2", Address: " D@Example.com", User: { UserId: "u2" } }), // another user, the same address
        email({ Id: "e3", Address: "x@example.com", User: { UserId: "u3" } }),
      ],
      // The opt-in read before the opt-out: file order must not matter.
      "0.jsonl": [email({ Id: "e4", Address: "D@EXAMPLE.COM ", User: { UserId: "u4" } })],
    });
    assert.strictEqual(r.code, 0);
    assert.deepStrictEqual(
      r.recipients.map((x) => [x.id, x.email]),
      [["u3", "x@example.com"]],
    );
    assert.deepStrictEqual(reasons(r.skipped), [
      ["e4", "opted-out-elsewhere"],
      ["e1", "opted-out"],
      ["e2", "opted-out-elsewhere"],
    ]);
    assert.match(r.skipped[0].detail, /a\.jsonl:1 opts this address out$/);
  });

  it("an opt-out on an inactive endpoint counts too; OptOut values other than NONE all opt out", async () => {
    const r = await importFiles({
      "a.jsonl": [
        email({ Id: "e1", Address: "a@example.com", EndpointStatus: "INACTIVE", OptOut: "ALL" }),
        email({ Id: "e2", Address: "b@example.com", OptOut: "SOME_NEW_VALUE" }),
        email({ Id: "e3", Address: "a@example.com", User: { UserId: "u3" } }),
        email({ Id: "e4", Address: "b@example.com", User: { UserId: "u4" } }),
      ],
    });
    assert.deepStrictEqual(r.recipients, []);
    assert.deepStrictEqual(reasons(r.skipped), [
      ["e1", "inactive"],
      ["e2", "opted-out"],
      ["e3", "opted-out-elsewhere"],
      ["e4", "opted-out-elsewhere"],
    ]);
  });
});

describe("import-pinpoint: an opt-out is the address's, until that address opts back in (issue 32)", () => {
  const older = "2026-10-01T12:00:00.000Z";
  const newer = "2026-11-01T12:00:00.000Z";

  it("G opts out g-old, then a later line of G changes its address: g-old is imported from no other endpoint", async () => {
    const r = await importFiles({
      "a.jsonl": [
        email({ Id: "G", Address: "g-old@example.com", User: { UserId: "ug" }, OptOut: "ALL", EffectiveDate: older }),
        email({ Id: "G", Address: "g-new@example.com", User: { UserId: "ug" }, EffectiveDate: newer }),
        email({ Id: "G2", Address: "g-old@example.com", User: { UserId: "u2" }, EffectiveDate: newer }),
      ],
    });
    assert.deepStrictEqual(
      r.recipients.map((x) => [x.id, x.email]),
      [["ug", "g-new@example.com"]],
    );
    assert.deepStrictEqual(reasons(r.skipped), [
      ["G", "superseded"],
      ["G2", "opted-out-elsewhere"],
    ]);
    assert.match(r.skipped[1].detail, /a\.jsonl:1 opts this address out$/);
  });

  it("a later line of the same endpoint opting that same address back in lifts it; another endpoint's NONE does not", async () => {
    const optOut = email({
      Id: "G",
      Address: "g@example.com",
      User: { UserId: "ug" },
      OptOut: "ALL",
      EffectiveDate: older,
    });
    const back = await importFiles({
      "a.jsonl": [
        optOut,
        email({ Id: "G", Address: " G@Example.com", User: { UserId: "ug" }, EffectiveDate: newer }),
        email({ Id: "G2", Address: "g@example.com", User: { UserId: "u2" } }),
      ],
    });
    assert.deepStrictEqual(
      back.recipients.map((x) => x.id),
      ["ug", "u2"],
    );
    // Another endpoint with that address and NONE, even dated later, is no opt-in of the person's: it stays out.
    const other = await importFiles({
      "a.jsonl": [optOut, email({ Id: "G2", Address: "g@example.com", User: { UserId: "u2" }, EffectiveDate: newer })],
    });
    assert.deepStrictEqual(other.recipients, []);
    assert.deepStrictEqual(reasons(other.skipped), [
      ["G", "opted-out"],
      ["G2", "opted-out-elsewhere"],
    ]);
  });
});

describe("import-pinpoint: an endpoint Id read more than once (two export jobs under one prefix)", () => {
  const older = "2026-10-01T12:00:00.000Z";
  const newer = "2026-11-01T12:00:00.000Z";

  it("the line with the latest EffectiveDate counts, in whichever file order; the others are listed as superseded", async () => {
    for (const [first, second] of [
      ["job-1", "job-2"],
      ["job-2", "job-1"],
    ]) {
      const r = await importFiles({
        [`${first}.jsonl`]: [
          email({ Id: "e1", Address: "a@example.com", User: { UserId: "u1" }, EffectiveDate: older }),
        ],
        [`${second}.jsonl`]: [
          email({
            Id: "e1",
            Address: "a.new@example.com",
            User: { UserId: "u1" },
            EffectiveDate: newer,
            OptOut: "ALL",
          }),
        ],
      });
      assert.deepStrictEqual(r.recipients, [], `${first} read first`);
      const byFile = Object.fromEntries(r.skipped.map((s) => [path.basename(s.file), s.reason]));
      assert.deepStrictEqual(byFile, { [`${first}.jsonl`]: "superseded", [`${second}.jsonl`]: "opted-out" });
      const superseded = r.skipped.find((s) => s.reason === "superseded")!;
      assert.match(
        superseded.detail,
        new RegExp(`^endpoint e1: \\S*${second}\\.jsonl:1 has a later EffectiveDate \\(${newer}\\)$`),
      );
      assert.strictEqual(r.json.endpoints.repeatedIds, 1);
      assert.deepStrictEqual(r.json.endpoints.skipped.byReason, { superseded: 1, "opted-out": 1 });
    }
    let text = "";
    await main(["--endpoints", path.join(tmp, `export-${runs}`), "--out", path.join(tmp, `out-${runs}-text`)], {
      out: (t) => (text += t),
      err: () => undefined,
    });
    assert.match(
      text,
      /2 read from 2 files → 0 recipients, 2 skipped \((superseded 1, opted-out 1|opted-out 1, superseded 1)\)/,
    );
    assert.match(
      text,
      /\n {2}endpoint Ids read more than once: 1 \(each counts its latest line; the others are skipped as superseded\)\n/,
    );
  });

  it("a later opt-in of the same endpoint counts over its older opt-out (Pinpoint's current state)", async () => {
    const r = await importFiles({
      "a.jsonl": [email({ Id: "e1", Address: "a@example.com", EffectiveDate: newer })],
      "b.jsonl": [email({ Id: "e1", Address: "a@example.com", EffectiveDate: older, OptOut: "ALL" })],
    });
    assert.deepStrictEqual(
      r.recipients.map((x) => [x.id, x.email]),
      [["e1", "a@example.com"]],
    );
    assert.deepStrictEqual(reasons(r.skipped), [["e1", "superseded"]]);
  });

  it("a tie (the same instant, written either way) or a missing or unreadable date never overrides an opt-out", async () => {
    const cases: [string | undefined, string | undefined][] = [
      [newer, "2026-11-01T12:00:00Z"], // the same instant
      [newer, undefined], // the opt-out has no date: it may be the latest
      [undefined, newer],
      [newer, "last tuesday"],
      [undefined, undefined],
    ];
    for (const [inDate, outDate] of cases) {
      for (const optOutFirst of [false, true]) {
        const optIn = email({ Id: "e1", Address: "a@example.com", EffectiveDate: inDate });
        const optOut = email({ Id: "e1", Address: "b@example.com", EffectiveDate: outDate, OptOut: "ALL" });
        const r = await importFiles({ "a.jsonl": optOutFirst ? [optOut, optIn] : [optIn, optOut] });
        assert.deepStrictEqual(r.recipients, [], `opt-in ${inDate}, opt-out ${outDate}, opt-out first ${optOutFirst}`);
        assert.deepStrictEqual(r.skipped.map((s) => s.reason).sort(), ["opted-out", "superseded"]);
      }
    }
  });

  it("of two opted-in lines that tie, the first read counts; an undated line ties with the latest", async () => {
    const r = await importFiles({
      "a.jsonl": [
        email({ Id: "e1", Address: "a@example.com", EffectiveDate: older }),
        email({ Id: "e1", Address: "b@example.com" }),
        email({ Id: "e1", Address: "c@example.com", EffectiveDate: newer }),
      ],
    });
    assert.deepStrictEqual(
      r.recipients.map((x) => x.email),
      ["b@example.com"],
    );
    assert.deepStrictEqual(
      r.skipped.map((s) => [s.line, s.reason]),
      [
        ["1", "superseded"],
        ["3", "superseded"],
      ],
    );
  });
});

describe("import-pinpoint: text it cannot read exactly is skipped, never merged", () => {
  const line = (o: Endpoint) => Buffer.from(JSON.stringify(email(o)) + "\n");
  /** `text` with the marker "@@" replaced by the raw bytes given (not valid UTF-8). */
  const withBytes = (o: Endpoint, bytes: number[]) => {
    const b = line(o);
    const at = b.indexOf("@@");
    return Buffer.concat([b.subarray(0, at), Buffer.from(bytes), b.subarray(at + 2)]);
  };

  it("user ids that differ only in invalid UTF-8 bytes are both skipped as invalid-text", async () => {
    const r = await importFiles({
      "a.jsonl": Buffer.concat([
        withBytes({ Id: "e1", Address: "a@example.com", User: { UserId: "u@@" } }, [0xff]),
        withBytes({ Id: "e2", Address: "b@example.com", User: { UserId: "u@@" } }, [0xfe]),
        withBytes({ Id: "e3", Address: "c@example.com", Attributes: { city: ["Z@@"] } }, [0xc3]), // a cut 2-byte ë
        line({ Id: "e4", Address: "d@example.com", User: { UserId: "Zoë" } }),
      ]),
    });
    assert.deepStrictEqual(
      r.recipients.map((x) => x.id),
      ["Zoë"],
    );
    assert.deepStrictEqual(reasons(r.skipped), [
      ["e1", "invalid-text"],
      ["e2", "invalid-text"],
      ["e3", "invalid-text"],
    ]);
    assert.match(r.skipped[0].detail, /not valid UTF-8 \(byte offset 1\d\d\)/);
  });

  it("an opt-out on a line with invalid bytes elsewhere still keeps its address out", async () => {
    const r = await importFiles({
      "a.jsonl": Buffer.concat([
        withBytes({ Id: "e1", Address: "a@example.com", OptOut: "ALL", Attributes: { n: ["@@"] } }, [0xff]),
        line({ Id: "e2", Address: "A@example.com" }),
      ]),
    });
    assert.deepStrictEqual(r.recipients, []);
    assert.deepStrictEqual(reasons(r.skipped), [
      ["e1", "invalid-text"],
      ["e2", "opted-out-elsewhere"],
    ]);
  });

  it("a numeric UserId past 2^53 is skipped (its digits are lost when read); a smaller one is kept", async () => {
    const raw = (userId: string, id: string, address: string) =>
      Buffer.from(
        `{"ChannelType":"EMAIL","EndpointStatus":"ACTIVE","OptOut":"NONE","Id":"${id}","Address":"${address}","User":{"UserId":${userId}}}\n`,
      );
    const r = await importFiles({
      "a.jsonl": Buffer.concat([
        raw("12345678901234567890", "e1", "a@example.com"),
        raw("12345678901234567891", "e2", "b@example.com"), // parses to the same double as the one above
        raw("9007199254740993", "e3", "c@example.com"), // 2^53 + 1
        raw("9007199254740991", "e4", "d@example.com"), // 2^53 - 1: exact
      ]),
    });
    assert.deepStrictEqual(
      r.recipients.map((x) => x.id),
      ["9007199254740991"],
    );
    assert.deepStrictEqual(reasons(r.skipped), [
      ["e1", "imprecise-number"],
      ["e2", "imprecise-number"],
      ["e3", "imprecise-number"],
    ]);
    assert.match(r.skipped[0].detail, /User\.UserId is a number past 2\^53/);
  });
});

describe("import-pinpoint: no opted-out address reaches recipients.csv (property)", function () {
  this.timeout(20_000);
  // A few addresses, each with case and space variants; a few endpoint Ids and users; dates including ties, an
  // instant written two ways, none and an unreadable one.
  const ADDRESSES = ["d@example.com", "e@example.com", "f@example.com"];
  const variants = (a: string) => [
    a,
    ` ${a.toUpperCase()}`,
    `${a[0].toUpperCase()}${a.slice(1)} `,
    a.replace("example", "EXAMPLE"),
  ];
  const DATES = [
    undefined,
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:00:00.000Z",
    "2026-02-01T00:00:00Z",
    "2026-03-01T00:00:00.000Z",
    "soon",
  ];
  const endpointArb = fc.record({
    id: fc.constantFrom("ep-1", "ep-2", "ep-3", "ep-4", "ep-5", undefined),
    user: fc.constantFrom("u1", "u2", "u3", undefined),
    address: fc.constantFrom(...ADDRESSES.flatMap(variants)),
    optOut: fc.constantFrom("NONE", "NONE", "ALL", undefined),
    status: fc.constantFrom("ACTIVE", "ACTIVE", "ACTIVE", "INACTIVE"),
    channel: fc.constantFrom("EMAIL", "EMAIL", "EMAIL", "EMAIL", "SMS"),
    date: fc.constantFrom(...DATES),
  });
  type Gen = {
    id?: string;
    user?: string;
    address: string;
    optOut?: string;
    status: string;
    channel: string;
    date?: string;
  };
  const toEndpoint = (g: Gen): Endpoint => ({
    ChannelType: g.channel,
    EndpointStatus: g.status,
    Address: g.address,
    ...(g.id === undefined ? {} : { Id: g.id }),
    ...(g.optOut === undefined ? {} : { OptOut: g.optOut }),
    ...(g.date === undefined ? {} : { EffectiveDate: g.date }),
    ...(g.user === undefined ? {} : { User: { UserId: g.user } }),
  });

  /**
   * The contract, computed over the whole input at once. Per endpoint Id, the current lines are those at the latest
   * readable date plus those without one; an address is out when any line opts it out, unless a line of the same
   * endpoint with a later readable date opts that same address in (issue 32: the opt-out is the address's, not the
   * endpoint's); an endpoint is out when one of its current lines opts out; of its other current lines, the first read
   * counts. Then the importer's own rules: EMAIL, ACTIVE, opted in, first row per id.
   */
  function model(lines: Gen[]): [string, string][] {
    const ms = (d?: string) => (d !== undefined && /^\d{4}-\d\d-\d\dT/.test(d) ? Date.parse(d) : undefined);
    const latest = new Map<string, number>();
    for (const g of lines)
      if (g.id && ms(g.date) !== undefined) latest.set(g.id, Math.max(latest.get(g.id) ?? -Infinity, ms(g.date)!));
    const current = (g: Gen) => !g.id || ms(g.date) === undefined || ms(g.date) === latest.get(g.id);
    const optsOut = (g: Gen) => g.optOut !== undefined && g.optOut !== "NONE";
    const fold = (a: string) => a.trim().toLowerCase();
    const liftedBy = (g: Gen) =>
      g.id !== undefined &&
      ms(g.date) !== undefined &&
      lines.some(
        (h) =>
          h.id === g.id &&
          !optsOut(h) &&
          fold(h.address) === fold(g.address) &&
          ms(h.date) !== undefined &&
          ms(h.date)! > ms(g.date)! &&
          // A later opt-out of the same endpoint and address takes it back again.
          !lines.some(
            (o) => o.id === g.id && optsOut(o) && fold(o.address) === fold(g.address) && !(ms(o.date)! < ms(h.date)!),
          ),
      );
    const outAddresses = new Set(lines.filter((g) => optsOut(g) && !liftedBy(g)).map((g) => fold(g.address)));
    const outEndpoints = new Set(lines.filter((g) => g.id && current(g) && optsOut(g)).map((g) => g.id));
    const counted = new Set<string>();
    const ids = new Set<string>();
    const rows: [string, string][] = [];
    for (const g of lines) {
      if (!current(g)) continue;
      if (g.id) {
        if (counted.has(g.id)) continue;
        counted.add(g.id);
        if (outEndpoints.has(g.id)) continue;
      }
      if (g.channel !== "EMAIL" || g.status !== "ACTIVE" || optsOut(g) || outAddresses.has(fold(g.address))) continue;
      const id = g.user ?? g.id;
      if (id === undefined || ids.has(id)) continue;
      ids.add(id);
      rows.push([id, g.address.trim()]);
    }
    return rows;
  }

  it("random endpoints over a few addresses, opt-outs anywhere, repeated Ids, shuffled files: recipients.csv is the model's", async () => {
    const runsWanted = Number(process.env.SENDTIME_PROPERTY_RUNS ?? 60);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(endpointArb, { maxLength: 8 }), { minLength: 1, maxLength: 3 }),
        async (files) => {
          // File names in a shuffled order, so that read order (by name) is not the order generated.
          const names = files.map((_, i) => `part-${(i * 7 + 3) % 10}.jsonl`);
          const r = await importFiles(Object.fromEntries(files.map((f, i) => [names[i], f.map(toEndpoint)])));
          const readOrder = files.map((f, i) => ({ name: names[i], f })).sort((a, b) => (a.name < b.name ? -1 : 1));
          const all = readOrder.flatMap((x) => x.f);
          const got = r.recipients.map((x) => [x.id, x.email] as [string, string]);
          // The safety property on its own: no recipient's address is opted out by a line that no later line of the
          // same endpoint opts back in, with that same address.
          const fold = (a: string) => a.trim().toLowerCase();
          for (const [, address] of got)
            for (const g of all)
              if (g.optOut !== undefined && g.optOut !== "NONE" && fold(g.address) === fold(address)) {
                const later = all.some(
                  (h) =>
                    g.id &&
                    h.id === g.id &&
                    (h.optOut === undefined || h.optOut === "NONE") &&
                    fold(h.address) === fold(g.address) &&
                    /^2026/.test(h.date ?? "") &&
                    /^2026/.test(g.date ?? "") &&
                    Date.parse(h.date!) > Date.parse(g.date!),
                );
                assert.ok(later, `${address} reached recipients.csv though ${JSON.stringify(g)} opts it out`);
              }
          assert.deepStrictEqual(got, model(all));
          assert.strictEqual(r.recipients.length + r.skipped.length, all.length, "every endpoint is a row or listed");
        },
      ),
      { numRuns: runsWanted },
    );
  });
});
