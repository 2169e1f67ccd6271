import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { anchors, brokenLinks, firstMismatch, parseExamples, slug } from "./check-examples";

describe("docs check", () => {
  it("reads each $ command of a console block with the output under it, joining lines that end in \\", () => {
    const page = [
      "text",
      "```console",
      "$ echo one \\",
      "    two",
      "one two",
      "$ true",
      "```",
      "```sh",
      "$ not an example",
      "```",
    ].join("\n");
    assert.deepStrictEqual(parseExamples(page), [
      { line: 3, command: "echo one  two", expected: ["one two"] },
      { line: 6, command: "true", expected: [] },
    ]);
  });

  it("refuses output before any command and a block never closed", () => {
    assert.throws(() => parseExamples("```console\nstray\n```"), /line 2: .*after a "\$ command"/);
    assert.throws(() => parseExamples("```console\n$ true\n"), /never closed/);
  });

  it("matches output exactly, with a line of … standing for any number of lines", () => {
    assert.strictEqual(firstMismatch(["a", "b"], ["a", "b", ""]), undefined);
    assert.strictEqual(firstMismatch(["a", "b"], ["a", "c"]), 1);
    assert.strictEqual(firstMismatch(["a"], ["a", "b"]), 1, "an extra line at the end is a mismatch");
    assert.strictEqual(firstMismatch(["a", "…", "d"], ["a", "b", "c", "d"]), undefined);
    assert.strictEqual(firstMismatch(["a", "…", "d"], ["a", "d"]), undefined, "… may stand for no line");
    assert.strictEqual(firstMismatch(["…", "x"], ["a", "b"]), 1);
    assert.strictEqual(firstMismatch(["sha256 e271…"], ["sha256 e27171d5"]), 0, "… inside a line is literal text");
    assert.strictEqual(
      firstMismatch(["  a", "    b"], ["a", "  b"]),
      undefined,
      "the block's own indentation is ignored",
    );
  });

  it("finds GitHub's anchors, repeated headings numbered, headings in code ignored", () => {
    assert.strictEqual(
      slug("When each recipient is sent: send-time rules, quiet time"),
      "when-each-recipient-is-sent-send-time-rules-quiet-time",
    );
    assert.strictEqual(slug("Enrolling from a shell: `enrol`"), "enrolling-from-a-shell-enrol");
    assert.deepStrictEqual([...anchors("# A\n## A\n```\n# B\n```\n")], ["a", "a-1"]);
  });

  it("reports a link to a missing page or a missing heading, not one to the web or inside code", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-check-"));
    try {
      fs.writeFileSync(path.join(dir, "b.md"), "# Real heading\n");
      const page = path.join(dir, "a.md");
      fs.writeFileSync(
        page,
        "[ok](b.md#real-heading) [web](https://example.com/x#y) `[code](nowhere.md)`\n[gone](c.md)\n[anchor](b.md#nope)\n",
      );
      const problems = brokenLinks(page);
      assert.strictEqual(problems.length, 2, problems.join("\n"));
      assert.match(problems[0], /a\.md:2: link c\.md: no file/);
      assert.match(problems[1], /a\.md:3: link b\.md#nope: .*b\.md has no heading #nope/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
