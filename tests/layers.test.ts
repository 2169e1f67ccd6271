/**
 * The house's one rule: arrows point down. Every relative import of every source file (type-only imports too) goes to
 * a layer at or below its own, never up, and no chain of imports comes back to where it started.
 *
 *   commands            scripts/*.ts
 *   CLI layer           scripts/lib/cli          flags, help, exit codes
 *   AWS layer           scripts/lib/aws, scripts/lib/offline   SDK calls (a deadline and outputs in, never flags)
 *   domain              scripts/lib/{recipients,planning,pinpoint,report,templates,text}
 *   stack and pack      infra/*.ts (Pulumi components), infra/handlers (deployed code), policy/
 *   state machines      infra/state-machines     the fan-out and the one sender: parameters in, ASL out
 *   core                infra/core/{timing,zones,plan,send,consent,journeys,crypto,sms,text,config}, infra/core/errors.ts
 *                       the rules and facts every layer above shares
 *
 * Core and the state machines are pure: they import no @pulumi/*, no AWS SDK (@aws-sdk/*, @smithy/*) and no Node
 * module that reaches outside the process (fs, net, tls, dgram, http, https, http2, child_process). A core file
 * lives in one of core's rooms, or is errors.ts: a new subject is a new room, named here.
 *
 * infra/ never imports scripts/; scripts/ import of infra/ only core, the state machines and the handlers; policy/
 * only policy/, core and the state machines.
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as path from "path";

const ROOT = path.resolve(__dirname, "..");
const SOURCE_DIRS = ["infra", "policy", "scripts"];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(rel));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(rel);
  }
  return out;
}

/** Every module specifier of `text`: `import … from`, `export … from`, `import()` and `require()`. */
function specifiersOf(text: string): string[] {
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm)];
  return specs.map((m) => m[1]);
}

/** Each file's relative imports as repository paths. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  return specifiersOf(text)
    .filter((spec) => /^\.{1,2}\//.test(spec))
    .map((spec) => {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      if (fs.existsSync(path.join(ROOT, `${target}.ts`))) return `${target}.ts`;
      if (fs.existsSync(path.join(ROOT, target, "index.ts"))) return `${target}/index.ts`;
      return target;
    });
}

/** Each file's imports of packages and Node modules (every specifier that is not relative). */
function packagesOf(file: string): string[] {
  return specifiersOf(fs.readFileSync(path.join(ROOT, file), "utf8")).filter((spec) => !spec.startsWith("."));
}

type Layer = { name: string; rank: number };

/** The layer of a source file; undefined for a file outside every layer (the test reports it). */
export function layerOf(file: string): Layer | undefined {
  const rules: [RegExp, string, number][] = [
    [
      /^infra\/core\/((timing|zones|plan|send|consent|journeys|crypto|sms|text|config)\/[^/]+\.ts|errors\.ts)$/,
      "core",
      0,
    ],
    [/^infra\/state-machines\/[^/]+\.ts$/, "state machines", 1],
    [/^infra\/handlers\//, "deployed handlers", 2],
    [/^infra\/[^/]+\.ts$/, "stack", 2],
    [/^policy\//, "policy pack", 2],
    [/^scripts\/lib\/(recipients|planning|pinpoint|report|templates|text)\//, "domain", 3],
    [/^scripts\/lib\/(aws|offline)\//, "AWS layer", 4],
    [/^scripts\/lib\/cli\//, "CLI layer", 5],
    [/^scripts\/(bench\/)?[^/]+\.ts$/, "commands", 6],
  ];
  const hit = rules.find(([pattern]) => pattern.test(file));
  return hit && { name: hit[1], rank: hit[2] };
}

/** Why an import from `from` to `to` breaks the layering, or undefined when it does not. */
export function violation(from: string, to: string): string | undefined {
  const a = layerOf(from);
  const b = layerOf(to);
  if (!a || !b) return `${!a ? from : to} is in no layer`;
  if (from.startsWith("infra/") && to.startsWith("scripts/")) return "infra/ never imports scripts/";
  if (from.startsWith("policy/") && !(to.startsWith("policy/") || /^infra\/(core|state-machines)\//.test(to)))
    return "policy/ imports only policy/ and infra/core/, infra/state-machines/";
  if (from.startsWith("scripts/") && to.startsWith("infra/") && !/^infra\/(core|state-machines|handlers)\//.test(to))
    return "scripts/ import only infra/core, infra/state-machines and infra/handlers (not the Pulumi components)";
  if (b.rank > a.rank) return `${a.name} imports ${b.name}, a layer above it`;
  return undefined;
}

/** Packages and Node modules that make a file impure: Pulumi, the AWS SDK, or I/O outside the process. */
const IMPURE = /^(@pulumi\/|@aws-sdk\/|@smithy\/|(node:)?(fs|net|tls|dgram|http|https|http2|child_process)(\/|$))/;

/** The layers that must stay pure. */
const PURE_LAYERS = ["core", "state machines"];

/** Why `file` importing the package or Node module `spec` breaks its layer's purity, or undefined when it does not. */
export function impurity(file: string, spec: string): string | undefined {
  const layer = layerOf(file);
  if (!layer || !PURE_LAYERS.includes(layer.name) || !IMPURE.test(spec)) return undefined;
  return `the ${layer.name} layer is pure: no Pulumi, no AWS SDK, no I/O`;
}

/** Every cycle of imports among `graph`'s files, each as the files on it (found by depth-first search). */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") found.push(stack.slice(stack.indexOf(next)).concat(next));
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe("layers: arrows point one way", () => {
  const files = SOURCE_DIRS.flatMap(sources);
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  it("every source file is in a layer", () => {
    assert.deepEqual(
      files.filter((f) => !layerOf(f)),
      [],
    );
  });

  it("no import points to a layer above its own", () => {
    const wrong = [...graph].flatMap(([from, tos]) =>
      tos.map((to) => [from, to, violation(from, to)]).filter((v) => v[2]),
    );
    assert.deepEqual(
      wrong.map(([from, to, why]) => `${from} → ${to}: ${why}`),
      [],
    );
  });

  it("core and the state machines import no Pulumi, no AWS SDK and no I/O module", () => {
    const wrong = files.flatMap((f) =>
      packagesOf(f)
        .map((spec) => [f, spec, impurity(f, spec)])
        .filter((v) => v[2]),
    );
    assert.deepEqual(
      wrong.map(([file, spec, why]) => `${file} imports ${spec}: ${why}`),
      [],
    );
  });

  it("no file imports itself through a chain of imports (type-only imports included)", () => {
    assert.deepEqual(
      cycles(graph).map((c) => c.join(" → ")),
      [],
    );
  });

  it("the checks themselves catch an upward arrow, a stray file, an impure import and a cycle", () => {
    assert.match(violation("infra/core/plan/naming.ts", "infra/sender.ts")!, /a layer above/);
    assert.match(
      violation("infra/core/plan/schedule-request.ts", "infra/state-machines/sender-definition.ts")!,
      /core imports state machines, a layer above/,
    );
    assert.match(violation("infra/state-machines/fanout-definition.ts", "infra/fanout.ts")!, /a layer above/);
    assert.equal(violation("infra/state-machines/fanout-definition.ts", "infra/core/plan/naming.ts"), undefined);
    assert.equal(violation("infra/fanout.ts", "infra/state-machines/fanout-definition.ts"), undefined);
    assert.equal(violation("policy/fanout.ts", "infra/state-machines/fanout-definition.ts"), undefined);
    assert.match(violation("policy/iam.ts", "infra/iam.ts")!, /policy\/ imports only/);
    assert.equal(layerOf("infra/core/helpers.ts"), undefined);
    assert.equal(layerOf("infra/core/misc/helpers.ts"), undefined);
    assert.equal(layerOf("infra/core/zones/nested/helpers.ts"), undefined);
    assert.equal(layerOf("infra/rules/naming.ts"), undefined);
    assert.equal(layerOf("infra/core/errors.ts")?.name, "core");
    for (const spec of [
      "@pulumi/pulumi",
      "@aws-sdk/client-sfn",
      "@smithy/signature-v4",
      "fs",
      "node:fs",
      "fs/promises",
    ])
      assert.match(impurity("infra/core/send/ledger.ts", spec) ?? "", /the core layer is pure/, spec);
    for (const spec of ["net", "http", "https", "node:child_process", "child_process"])
      assert.match(
        impurity("infra/state-machines/sender-definition.ts", spec) ?? "",
        /the state machines layer is pure/,
        spec,
      );
    for (const spec of ["crypto", "luxon", "handlebars", "libphonenumber-js/core", "fsevents", "httpx"])
      assert.equal(impurity("infra/core/timing/send-time.ts", spec), undefined, spec);
    assert.equal(impurity("infra/sender.ts", "@pulumi/aws"), undefined);
    assert.equal(impurity("scripts/lib/aws/call.ts", "@aws-sdk/client-sfn"), undefined);
    assert.match(violation("scripts/lib/aws/launch.ts", "scripts/lib/cli/run.ts")!, /AWS layer imports CLI layer/);
    assert.match(violation("infra/index.ts", "scripts/lib/planning/plan.ts")!, /infra\/ never imports scripts/);
    assert.match(violation("scripts/lib/planning/plan.ts", "infra/fanout.ts")!, /not the Pulumi components/);
    assert.match(violation("policy/iam.ts", "scripts/lib/cli/run.ts")!, /policy\/ imports only/);
    assert.equal(violation("scripts/lib/cli/run.ts", "scripts/lib/aws/call.ts"), undefined);
    assert.equal(layerOf("scripts/lib/core/plan.ts"), undefined);
    const ring = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    assert.deepEqual(cycles(ring), [["a.ts", "b.ts", "c.ts", "a.ts"]]);
  });
});
