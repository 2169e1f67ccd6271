/**
 * Templates you can trust before launch (issue 27): the templates folder read and checked, every template a run uses
 * present before anything is planned, each row's data holding the variables its templates use outside a block, SES
 * asked before any upload, and send-test's rendering and send. Expected rows and values are written out by hand.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse as parseCsv } from "csv-parse/sync";
import { main as launchMain } from "../../../../scripts/launch-campaign";
import { main as sizeMain } from "../../../../scripts/size-window";
import { main as enrolMain } from "../../../../scripts/enrol";
import { main as sendTestMain } from "../../../../scripts/send-test";
import { readTemplateFolder, templateVariables } from "../../../../infra/core/plan/templates";
import { TemplateError } from "../../../../infra/core/plan/templates";
import { fileSystem } from "../../../../scripts/lib/templates/campaign-templates";
import { Answer, SeenRequest, startEndpoint, withEnv } from "../../../helpers/aws-endpoint";
import { runMain, withFlags } from "../../../helpers/cli";
import { fakeDmarc, healthySes, PREFLIGHT_OUTPUTS } from "../../../helpers/ses";
import { dnsLookup } from "../../../../scripts/lib/aws/dmarc";

const FIXTURES = "tests/fixtures/templates";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-templates-"));
let n = 0;
const write = (name: string, text: string) => {
  const file = path.join(tmp, `${++n}-${name}`);
  fs.writeFileSync(file, text);
  return file;
};

/** A templates folder in tmp: `{name: {subject, html, text}}`, a part left out is a file left out. */
function folder(templates: Record<string, { subject?: string; html?: string; text?: string }>): string {
  const dir = path.join(tmp, `templates-${++n}`);
  for (const [name, t] of Object.entries(templates)) {
    fs.mkdirSync(path.join(dir, name), { recursive: true });
    if (t.subject !== undefined) fs.writeFileSync(path.join(dir, name, "subject.txt"), t.subject);
    if (t.html !== undefined) fs.writeFileSync(path.join(dir, name, "body.html"), t.html);
    if (t.text !== undefined) fs.writeFileSync(path.join(dir, name, "body.txt"), t.text);
  }
  return dir;
}

// r2's first_name is empty and r5 has none of the columns' values: greeting uses first_name outside any block.
// city (only in {{#if}}), note (only in {{#unless}}) and items (only in {{#each}}) are optional.
const LIST = [
  "id,email,first_name,city,note,coupon",
  "r1,r1@example.com,Ann,Oslo,,SPRING",
  "r2,r2@example.com,,Oslo,x,SPRING",
  "r3,r3@example.com,Bo,,,",
  "r4,r4@example.com,Cy,Rome,n,",
  "r5,r5@example.com,,,,",
].join("\n");

async function dryRun(...flags: string[]) {
  const out = path.join(tmp, `out-${++n}`);
  const list = write("list.csv", LIST + "\n");
  const base = [
    "--campaign",
    "tpl",
    "--recipients",
    list,
    "--template",
    "greeting",
    "--date",
    "2026-12-01",
    "--hour",
    "9",
  ];
  const r = await runMain(
    launchMain,
    withFlags([...base, "--now", "2026-11-29T12:00:00Z", "--dry-run", "--out", out], flags),
  );
  const read = (f: string) =>
    fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : undefined;
  const plan = (read("plan.jsonl") ?? "")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const rejects = read("rejects.csv")
    ? (parseCsv(read("rejects.csv")!, { columns: true }) as Record<string, string>[])
    : [];
  return { ...r, out, plan, rejects };
}

describe("templates: the folder and its Handlebars", () => {
  it("variables outside a block are required; inside #if, #unless, #each, #with (and their else) optional", () => {
    const v = templateVariables(
      "Hi {{first_name}} {{{raw}}} {{user.name}} {{#if city}}{{city}} {{zip}}{{else}}{{country}}{{/if}}" +
        "{{#unless vip}}{{upsell}}{{/unless}}{{#each items}}{{name}} {{@index}} {{this}}{{/each}}{{#with a}}{{b}}{{/with}}" +
        "{{lookup table key}}",
      "t.html",
    );
    assert.deepStrictEqual([...v.required].sort(), ["first_name", "key", "raw", "table", "user"]);
    assert.deepStrictEqual([...v.optional].sort(), ["a", "city", "country", "items", "upsell", "vip", "zip"]);
    // Inside #each and #with a name is a field of the block's value, not a variable of the row: not read (issue 32).
    assert.deepStrictEqual(
      v.unchecked.map((u) => u.split(": ")[1]),
      [
        "{{name}} inside {{#each items}} reads a field of each item, and a row's values are text",
        "{{b}} inside {{#with a}} reads a field of a, and a row's values are text",
      ],
    );
    // A variable used both ways is required.
    const both = templateVariables("{{#if x}}{{x}}{{/if}} {{x}}", "t.txt");
    assert.deepStrictEqual([[...both.required], [...both.optional]], [["x"], []]);
  });

  it("reads one template per folder: subject without its trailing line break, the parts, the variables", () => {
    const templates = readTemplateFolder(FIXTURES, fileSystem);
    assert.deepStrictEqual([...templates.keys()], ["greeting", "offer"]);
    const g = templates.get("greeting")!;
    assert.strictEqual(g.subject, "Hello {{first_name}}");
    assert.strictEqual(g.html, fs.readFileSync(`${FIXTURES}/greeting/body.html`, "utf8"));
    assert.deepStrictEqual(g.required, ["first_name", "step"]);
    // city in {{#if}} and {{#with}}, items in {{#each}}, note in {{#unless}}; `this` is no variable, and name inside
    // the {{#each}} a field of each item, which the check cannot read.
    assert.deepStrictEqual(g.optional, ["city", "items", "note"]);
    assert.deepStrictEqual(g.unchecked, [
      "body.html:3: {{name}} inside {{#each items}} reads a field of each item, and a row's values are text",
    ]);
    assert.deepStrictEqual(templates.get("offer")!.required, ["coupon"]);
  });

  it("bad input is one line naming the file and what is wrong, exit 2 (a missing file, a name SES refuses, malformed Handlebars)", async () => {
    const ok = { subject: "s", html: "<p>h</p>", text: "t" };
    const cases: [string, RegExp][] = [
      [
        folder({ greeting: { subject: "s", html: "<p>h</p>" } }),
        /greeting\/body\.txt: missing; a template folder holds subject\.txt, body\.html, body\.txt/,
      ],
      [
        folder({ greeting: ok, "has space": ok }),
        /has space: "has space" is not an SES template name \(1–64 characters of A-Z a-z 0-9 _ -\); rename the folder/,
      ],
      [folder({ greeting: ok, ["x".repeat(65)]: ok }), /"x{65}" is not an SES template name/],
      [
        folder({ greeting: { ...ok, html: "<p>{{#if a}}open</p>" } }),
        /greeting\/body\.html: malformed Handlebars: Parse error on line 1: Expecting .*got 'EOF'/,
      ],
      [
        folder({ greeting: { ...ok, text: "{{#if a}}x{{/unless}}" } }),
        /greeting\/body\.txt: malformed Handlebars: if doesn't match unless/,
      ],
      [folder({ greeting: { ...ok, subject: "" } }), /greeting\/subject\.txt: empty; SES needs a subject/],
      [folder({ greeting: { ...ok, html: "{{> footer}}" } }), /greeting\/body\.html:1: partials/],
      [path.join(tmp, "no-such-folder"), /--templates .*no-such-folder: no such folder/],
    ];
    for (const [dir, message] of cases) {
      const r = await dryRun("--templates", dir);
      assert.strictEqual(r.code, 2, `${dir}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.strictEqual(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.ok(!fs.existsSync(path.join(r.out, "plan.jsonl")), "nothing planned");
    }
    assert.throws(() => readTemplateFolder(path.join(tmp, "nothing"), fileSystem), TemplateError);
  });
});

describe("templates: checked before planning", () => {
  it("a missing step template stops a dry run: exit 2 naming it, the step that uses it and --templates none; nothing planned", async () => {
    const r = await dryRun("--templates", FIXTURES, "--step", "+3d:followup");
    assert.strictEqual(r.code, 2, r.stderr);
    assert.match(r.stderr, /template not in tests\/fixtures\/templates\/: "followup" \(step 2\)/);
    assert.match(r.stderr, /--templates none/);
    assert.ok(!fs.existsSync(path.join(r.out, "plan.jsonl")));
  });

  it("{variant} is replaced: each variant's template is checked, naming the one missing and its variant", async () => {
    const dir = folder({
      greeting: { subject: "s", html: "h", text: "t" },
      "f-A": { subject: "s", html: "h", text: "t" },
    });
    const r = await dryRun("--templates", dir, "--step", "+3d:f-{variant}", "--variant", "A:50", "--variant", "B:50");
    assert.strictEqual(r.code, 2, r.stderr);
    assert.match(r.stderr, /template not in .*: "f-B" \(step 2 \(variant B\)\)/);
    assert.doesNotMatch(r.stderr, /"f-A"/);
  });

  it("the default folder is templates/ when it exists: the shipped templates pass, another name stops the run", async () => {
    const shipped = await dryRun("--template", "spring-sale", "--step", "+3d:spring-followup");
    assert.strictEqual(shipped.code, 0, shipped.stderr);
    const typo = await dryRun("--template", "spring-sael");
    assert.strictEqual(typo.code, 2);
    assert.match(typo.stderr, /template not in templates\/: "spring-sael" \(step 1\) \(did you mean "spring-sale"\?\)/);
    // A --step template too; a name far from every template gets no suggestion.
    const step = await dryRun("--template", "spring-sale", "--step", "+3d:spring-folowup");
    assert.match(step.stderr, /"spring-folowup" \(step 2\) \(did you mean "spring-followup"\?\)/);
    const far = await dryRun("--template", "quarterly-report");
    assert.match(far.stderr, /"quarterly-report" \(step 1\); add templates\/quarterly-report\//);
    const none = await dryRun("--template", "spring-sael", "--templates", "none");
    assert.strictEqual(none.code, 0, none.stderr);
  });

  it("a missing variable rejects exactly the rows without it (missing-template-data, naming it); {{#if}} variables are optional", async () => {
    const r = await dryRun("--templates", FIXTURES);
    assert.strictEqual(r.code, 0, r.stderr);
    // r2 (first_name empty) and r5 (no value at all); r3 lacks city, note and items, all inside blocks: planned.
    assert.deepStrictEqual(
      r.rejects.map((x) => [x.line, x.id]),
      [
        ["3", "r2"],
        ["6", "r5"],
      ],
    );
    for (const x of r.rejects)
      assert.match(
        x.reason,
        /^no value for "first_name", which template greeting \(step 1\) uses outside an \{\{#if\}\} block/,
      );
    assert.deepStrictEqual(
      r.plan.map((p) => p.recipient_id),
      ["r1", "r3", "r4"],
    );
    assert.match(r.stdout, /5 rows → 3 recipients planned, 3 schedules; 2 rejected \(missing-template-data 2\)/);
  });

  it("a later step's template needs its own variables: the rows without a coupon are rejected whole", async () => {
    const r = await dryRun("--templates", FIXTURES, "--step", "+3d:offer");
    // r1 has first_name and coupon; r3 and r4 have no coupon (offer, step 2); r2 and r5 no first_name (step 1).
    assert.deepStrictEqual(
      r.rejects.map((x) => x.id),
      ["r2", "r3", "r4", "r5"],
    );
    assert.match(
      fs.readFileSync(path.join(r.out, "rejects.csv"), "utf8"),
      /r3,"no value for ""coupon"", which template offer \(step 2\)/,
    );
    assert.deepStrictEqual(
      r.plan.map((p) => [p.recipient_id, p.step, p.template]),
      [
        ["r1", 1, "greeting"],
        ["r1", 2, "offer"],
      ],
    );
  });

  it("size-window counts the same rows as rejected", async () => {
    const list = write("list.csv", LIST + "\n");
    const r = await runMain(sizeMain, [
      ...["--recipients", list, "--template", "greeting", "--templates", FIXTURES],
      ...["--date", "2026-12-01", "--hour", "9", "--now", "2026-11-29T12:00:00Z", "--json"],
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepStrictEqual([report.recipients, report.rejected], [3, { "missing-template-data": 2 }]);
    const missing = await runMain(sizeMain, [
      "--recipients",
      list,
      "--step",
      "+3d:nope",
      "--templates",
      FIXTURES,
      "--date",
      "2026-12-01",
      "--hour",
      "9",
    ]);
    assert.strictEqual(missing.code, 2);
    assert.match(missing.stderr, /"nope" \(step 2\)/);
  });

  it("enrol: a journey step whose template the folder lacks stops before any request (exit 2)", async () => {
    const journeys = write(
      "j.yaml",
      "- name: onboarding\n  trigger: {source: com.example.app, detailType: UserSignedUp}\n  steps: [{after: +0h, template: greeting}, {after: +1d, template: tips}]\n",
    );
    const outputs = write(
      "outputs.json",
      JSON.stringify({
        journeyEnrolment: {
          target: {
            partition: "aws",
            targetRoleArn: "arn:aws:iam::123456789012:role/t",
            deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:q",
            fromAddress: "news@mail.example.com",
            configurationSetName: "sendtime-dev",
            maxEventAgeSeconds: 7200,
            maxRetryAttempts: 5,
          },
          windowMinutes: 15,
        },
      }),
    );
    const args = [
      "--journey",
      "onboarding",
      "--event",
      "tests/fixtures/signup-event.json",
      "--journeys",
      journeys,
      "--outputs",
      outputs,
    ];
    const r = await runMain(enrolMain, [
      ...args,
      "--templates",
      FIXTURES,
      "--now",
      "2026-03-10T18:05:00Z",
      "--dry-run",
    ]);
    assert.strictEqual(r.code, 2, r.stderr);
    assert.match(r.stderr, /template not in tests\/fixtures\/templates\/: "tips" \(step 2\)/);
  });
});

describe("templates: what the check reads (issue 32)", () => {
  /** A dry run of `list` (CSV text) against one template `t` with the given body, in a folder of its own. */
  async function runWith(body: string, list: string, ...flags: string[]) {
    const dir = folder({ t: { subject: "Hello", html: body, text: "plain" } });
    const out = path.join(tmp, `out-${++n}`);
    const file = write("list.csv", list + "\n");
    const r = await runMain(launchMain, [
      ...["--campaign", "tpl", "--recipients", file, "--template", "t", "--templates", dir],
      ...["--date", "2026-12-01", "--hour", "9", "--now", "2026-11-29T12:00:00Z", "--dry-run", "--out", out],
      ...flags,
    ]);
    const rejectsFile = path.join(out, "rejects.csv");
    const rejects = fs.existsSync(rejectsFile)
      ? (parseCsv(fs.readFileSync(rejectsFile, "utf8"), { columns: true }) as Record<string, string>[])
      : [];
    const summaryFile = path.join(out, "summary.json");
    const summary = fs.existsSync(summaryFile) ? JSON.parse(fs.readFileSync(summaryFile, "utf8")) : undefined;
    return { ...r, rejects, summary };
  }
  const LIST3 = ["id,email,first_name", "r1,r1@example.com,Ann", "r2,r2@example.com, ", "r3,r3@example.com,"].join(
    "\n",
  );

  it("{{unsubscribe_url}} is the launcher's in a bulk send: no row is rejected for it", async () => {
    const r = await runWith('<p>Hi {{first_name}}</p><a href="{{unsubscribe_url}}">unsubscribe</a>', LIST3, "--bulk");
    assert.strictEqual(r.code, 0, r.stderr);
    // Only the rows without a first name (a space is none): r2 and r3.
    assert.deepStrictEqual(
      r.rejects.map((x) => x.id),
      ["r2", "r3"],
    );
    for (const x of r.rejects) assert.match(x.reason, /^no value for "first_name"/);
  });

  it("without --bulk the launcher has no unsubscribe_url: the reject says it is a bulk send's", async () => {
    const r = await runWith('<a href="{{unsubscribe_url}}">unsubscribe</a>', LIST3);
    assert.strictEqual(r.code, 1, r.stderr);
    assert.strictEqual(r.rejects.length, 3);
    assert.match(r.rejects[0].reason, /"unsubscribe_url".*only in a bulk send \(--bulk\)/);
  });

  it("a value of only white space is missing", async () => {
    const r = await runWith("Hi {{first_name}}", LIST3);
    assert.deepStrictEqual(
      r.rejects.map((x) => x.id),
      ["r2", "r3"],
    );
  });

  it("{{@root.x}} and {{lookup . 'x'}} read the row's variable: required outside a block, optional inside", () => {
    const v = templateVariables(
      "{{@root.first_name}} {{lookup . 'city'}} {{lookup @root \"zip\"}} {{#if vip}}{{@root.tier}}{{/if}}" +
        "{{#with city}}{{this}} {{../country}} {{@root.region}}{{/with}} {{log (lookup . 'coupon')}}",
      "t.html",
    );
    assert.deepStrictEqual([...v.required].sort(), ["city", "coupon", "first_name", "zip"]);
    assert.deepStrictEqual([...v.optional].sort(), ["country", "region", "tier", "vip"]);
    assert.deepStrictEqual(v.unchecked, []);
  });

  it("forms the check cannot read are named, one line each with file and line", () => {
    const v = templateVariables(
      "{{#each items}}{{name}}{{/each}}\n{{lookup . field}}\n{{#with city}}{{name}}{{/with}}\n{{#if a}}{{../b}}{{/if}}",
      "t.html",
    );
    assert.deepStrictEqual(v.unchecked, [
      "t.html:1: {{name}} inside {{#each items}} reads a field of each item, and a row's values are text",
      "t.html:2: {{lookup . field}} reads the variable the row's field names",
      "t.html:3: {{name}} inside {{#with city}} reads a field of city, and a row's values are text",
      "t.html:4: {{../b}} reaches above the row's data",
    ]);
  });

  it("the run says so before planning: a line on stderr and in the summary", async () => {
    const r = await runWith("Hi {{first_name}} {{#each items}}{{name}}{{/each}}", LIST3);
    assert.strictEqual(
      r.stderr,
      `warning: template t: not checked: body.html:1: {{name}} inside {{#each items}} reads a field of each item, and a row's values are text\n`,
    );
    assert.deepStrictEqual(r.summary.templatesNotChecked, [
      "template t: body.html:1: {{name}} inside {{#each items}} reads a field of each item, and a row's values are text",
    ]);
    assert.match(r.stdout, /^  templates: not checked: template t: body\.html:1: /m);
    // A template the check reads whole has no such line, and no such key.
    const clean = await runWith("Hi {{first_name}}", LIST3);
    assert.strictEqual(clean.stderr, "");
    assert.strictEqual(clean.summary.templatesNotChecked, undefined);
  });
});

describe("templates: a real launch asks SES first (local endpoint, real wire format)", function () {
  this.timeout(30_000);
  const realResolver = dnsLookup.resolver;
  before(() => (dnsLookup.resolver = fakeDmarc));
  after(() => (dnsLookup.resolver = realResolver));
  const outputs = () =>
    write(
      "outputs.json",
      JSON.stringify({
        bucketName: "recipients-ce6a540",
        stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:f",
        region: "us-east-1",
        ...PREFLIGHT_OUTPUTS,
      }),
    );

  async function launchAgainst(answer: (r: SeenRequest) => Answer, ...flags: string[]) {
    const endpoint = await startEndpoint(answer);
    try {
      const vars = {
        AWS_ENDPOINT_URL_SESV2: endpoint.url,
        AWS_ENDPOINT_URL_S3: endpoint.url,
        AWS_ENDPOINT_URL_SFN: endpoint.url,
        AWS_MAX_ATTEMPTS: "1",
      };
      const r = await withEnv(vars, () =>
        runMain(launchMain, [
          ...["--campaign", "spring", "--template", "spring-sale", "--step", "+3d:spring-followup"],
          ...[
            "--date",
            "2026-12-01",
            "--hour",
            "9",
            "--now",
            "2026-11-29T12:00:00Z",
            "--outputs",
            outputs(),
            "--out",
            path.join(tmp, `l-${++n}`),
          ],
          ...flags,
        ]),
      );
      return { ...r, requests: [...endpoint.requests] };
    } finally {
      await endpoint.close();
    }
  }
  const isSes = (q: SeenRequest) => q.url.startsWith("/v2/email/templates/");

  it("GetEmailTemplate NotFound: exit 2 naming the template; not one S3 or Step Functions request (the list in S3 is not even read)", async () => {
    for (const recipients of ["tests/fixtures/campaign.csv", "s3://lists/spring/campaign.csv"]) {
      const r = await launchAgainst(
        (q): Answer =>
          isSes(q) && q.url.endsWith("/spring-followup")
            ? {
                status: 404,
                headers: { "x-amzn-errortype": "NotFoundException", "content-type": "application/json" },
                json: { message: "Template does not exist" },
              }
            : isSes(q)
              ? {
                  headers: { "content-type": "application/json" },
                  json: { TemplateName: "spring-sale", TemplateContent: { Subject: "s" } },
                }
              : { status: 500, json: { message: "no request but SES's was expected" } },
        "--recipients",
        recipients,
      );
      assert.strictEqual(r.code, 2, r.stderr);
      assert.match(r.stderr, /SES has no template "spring-followup" in this Region: nothing uploaded or started/);
      assert.deepStrictEqual(
        r.requests.map((q) => `${q.method} ${q.url}`),
        ["GET /v2/email/templates/spring-sale", "GET /v2/email/templates/spring-followup"],
      );
    }
  });

  it("every template is asked for, then the preflight's GetAccount and GetEmailIdentity, before the first S3 request", async () => {
    const r = await launchAgainst(
      (q) =>
        healthySes(q) ??
        (isSes(q)
          ? {
              headers: { "content-type": "application/json" },
              json: { TemplateName: q.url.split("/").pop(), TemplateContent: { Subject: "s" } },
            }
          : {
              status: 403,
              headers: { "content-type": "application/xml" },
              text: "<Error><Code>AccessDenied</Code><Message>no</Message></Error>",
            }),
      "--recipients",
      "tests/fixtures/campaign.csv",
    );
    assert.strictEqual(r.code, 1, r.stderr);
    const firstOther = r.requests.findIndex((q) => !q.url.startsWith("/v2/email/"));
    assert.deepStrictEqual(
      r.requests.slice(0, firstOther).map((q) => q.url),
      [
        "/v2/email/templates/spring-sale",
        "/v2/email/templates/spring-followup",
        "/v2/email/account",
        "/v2/email/identities/mail.example.com",
      ],
    );
    assert.ok(firstOther === 4, "S3 came after SES");
    assert.match(r.stderr, /AccessDenied/);
  });

  it("a template outside the stack's templates (output templateNames) is refused before any request: its sends would be denied", async () => {
    const endpoint = await startEndpoint(() => ({ status: 500 }));
    try {
      const file = write(
        "outputs.json",
        JSON.stringify({
          bucketName: "b",
          stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:f",
          templateNames: ["spring-sale"],
        }),
      );
      const r = await withEnv(
        { AWS_ENDPOINT_URL_SESV2: endpoint.url, AWS_ENDPOINT_URL_S3: endpoint.url, AWS_ENDPOINT_URL_SFN: endpoint.url },
        () =>
          runMain(launchMain, [
            ...[
              "--campaign",
              "spring",
              "--recipients",
              "tests/fixtures/campaign.csv",
              "--template",
              "spring-sale",
              "--step",
              "+3d:spring-followup",
            ],
            ...[
              "--date",
              "2026-12-01",
              "--hour",
              "9",
              "--now",
              "2026-11-29T12:00:00Z",
              "--outputs",
              file,
              "--out",
              path.join(tmp, `l-${++n}`),
            ],
          ]),
      );
      assert.strictEqual(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /"spring-followup": not among the stack's templates \(stack output templateNames: spring-sale\)/,
      );
      assert.strictEqual(endpoint.requests.length, 0);
    } finally {
      await endpoint.close();
    }
  });
});

describe("templates: send-test", function () {
  this.timeout(30_000);

  it("--render: one page with the subject, the HTML and the text part, holding the row's data", async () => {
    const list = write("list.csv", LIST + "\n");
    const page = path.join(tmp, "r1.html");
    const r = await runMain(sendTestMain, [
      "--template",
      "greeting",
      "--templates",
      FIXTURES,
      "--recipients",
      list,
      "--row",
      "r1",
      "--render",
      page,
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    const html = fs.readFileSync(page, "utf8");
    assert.match(html, /<h1 id="subject">Hello Ann<\/h1>/);
    // The HTML part, in the frame's srcdoc (attribute-escaped): Ann and Oslo from row r1.
    assert.match(html, /srcdoc="&lt;p&gt;Hi Ann,&lt;\/p&gt;\n&lt;p&gt;News from Oslo.&lt;\/p&gt;/);
    assert.match(html, /<pre id="text"[^>]*>Hi Ann,\nNo note today.\nOslo \(step 1\)\n<\/pre>/);
  });

  it("--data works the same; data without a required variable stops (exit 2), as a launch rejects the row", async () => {
    const page = path.join(tmp, "data.html");
    const ok = await runMain(sendTestMain, [
      "--template",
      "offer",
      "--templates",
      FIXTURES,
      "--data",
      '{"coupon":"X1"}',
      "--render",
      page,
    ]);
    assert.strictEqual(ok.code, 0, ok.stderr);
    assert.match(fs.readFileSync(page, "utf8"), /<h1 id="subject">Your code X1<\/h1>/);
    const lacking = await runMain(sendTestMain, [
      "--template",
      "offer",
      "--templates",
      FIXTURES,
      "--data",
      '{"coupon":""}',
      "--render",
      page,
    ]);
    assert.strictEqual(lacking.code, 2);
    assert.match(
      lacking.stderr,
      /template offer uses "coupon" outside an \{\{#if\}\} block and the data has no value for it/,
    );
    const bad = await runMain(sendTestMain, [
      "--template",
      "offer",
      "--templates",
      FIXTURES,
      "--data",
      "[1]",
      "--render",
      page,
    ]);
    assert.strictEqual(bad.code, 2);
    const noRow = await runMain(sendTestMain, [
      "--template",
      "offer",
      "--templates",
      FIXTURES,
      "--recipients",
      write("l.csv", LIST),
      "--row",
      "zz",
      "--render",
      page,
    ]);
    assert.match(noRow.stderr, /no row with id "zz"/);
  });

  it("--to: GetEmailTemplate, then SendEmail with the template, the row's data, the stack's sender and configuration set, tag campaign=test", async () => {
    const endpoint = await startEndpoint((q) =>
      q.url.startsWith("/v2/email/templates/")
        ? {
            headers: { "content-type": "application/json" },
            json: { TemplateName: "greeting", TemplateContent: { Subject: "s" } },
          }
        : q.url === "/v2/email/outbound-emails"
          ? { headers: { "content-type": "application/json" }, json: { MessageId: "m-1" } }
          : { status: 500 },
    );
    try {
      const outputs = write(
        "outputs.json",
        JSON.stringify({
          fromAddress: "news@mail.example.com",
          configurationSetName: "sendtime-dev",
          region: "us-east-1",
        }),
      );
      const list = write("list.csv", LIST + "\n");
      const r = await withEnv({ AWS_ENDPOINT_URL_SESV2: endpoint.url }, () =>
        runMain(sendTestMain, [
          "--template",
          "greeting",
          "--templates",
          FIXTURES,
          "--recipients",
          list,
          "--row",
          "r4",
          "--address",
          "me@example.com",
          "--outputs",
          outputs,
        ]),
      );
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stdout, /Sent greeting to me@example.com \(SES message id m-1, tag campaign=test\)/);
      const send = endpoint.requests.find((q) => q.url === "/v2/email/outbound-emails")!;
      const body = JSON.parse(send.body);
      assert.deepStrictEqual(body, {
        FromEmailAddress: "news@mail.example.com",
        Destination: { ToAddresses: ["me@example.com"] },
        Content: { Template: { TemplateName: "greeting", TemplateData: body.Content.Template.TemplateData } },
        ConfigurationSetName: "sendtime-dev",
        EmailTags: [{ Name: "campaign", Value: "test" }],
      });
      assert.deepStrictEqual(JSON.parse(body.Content.Template.TemplateData), {
        first_name: "Cy",
        city: "Rome",
        note: "n",
        coupon: "",
        step: "1",
      });
      assert.deepStrictEqual(
        endpoint.requests.map((q) => `${q.method} ${q.url}`),
        ["GET /v2/email/templates/greeting", "POST /v2/email/outbound-emails"],
      );
    } finally {
      await endpoint.close();
    }
  });

  it("--address is bounded in time: an SES that never answers is one line (exit 1)", async () => {
    const endpoint = await startEndpoint(() => "hang");
    try {
      const outputs = write(
        "outputs.json",
        JSON.stringify({
          fromAddress: "news@mail.example.com",
          configurationSetName: "sendtime-dev",
          region: "us-east-1",
        }),
      );
      const r = await withEnv({ AWS_ENDPOINT_URL_SESV2: endpoint.url }, () =>
        runMain(sendTestMain, [
          "--template",
          "offer",
          "--templates",
          FIXTURES,
          "--data",
          '{"coupon":"X"}',
          "--address",
          "me@example.com",
          "--outputs",
          outputs,
          "--timeout-seconds",
          "0.5",
        ]),
      );
      assert.strictEqual(r.code, 1);
      assert.match(r.stderr, /SES GetEmailTemplate offer: no result within the command's time limit of 0.5 s/);
    } finally {
      await endpoint.close();
    }
  });
});
