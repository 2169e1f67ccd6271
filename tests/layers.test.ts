/**
 * The house's one rule: arrows point down. Every relative import of every source file (type-only imports too) goes to
 * a layer at or below its own, never up, and no chain of imports comes back to where it started.
 *
 *   commands            scripts/*.ts
 *   CLI layer           scripts/lib/cli          flags, help, exit codes
 *   AWS layer           scripts/lib/aws, scripts/lib/offline   SDK calls (a deadline and outputs in, never flags)
 *   domain              scripts/lib/{recipients,planning,pinpoint,report,templates,text}
 *   stack and pack      infra/*.ts (Pulumi components), infra/handlers (deployed code), policy/
 *   rules and facts     infra/core, infra/state-machines   pure: no Pulumi, no AWS SDK, no I/O
 *
 * infra/ never imports scripts/; scripts/ import of infra/ only its rules and handlers; policy/ only policy/ and
 * infra/core, infra/state-machines.
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

/** Each file's relative imports as repository paths: `import … from`, `export … from`, `import()` and `require()`. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  const specs = [
    ...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']*)["']/gm),
  ];
  return specs.map((m) => {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]));
    if (fs.existsSync(path.join(ROOT, `${target}.ts`))) return `${target}.ts`;
    if (fs.existsSync(path.join(ROOT, target, "index.ts"))) return `${target}/index.ts`;
    return target;
  });
}

type Layer = { name: string; rank: number };

/** The layer of a source file; undefined for a file outside every layer (the test reports it). */
export function layerOf(file: string): Layer | undefined {
  const rules: [RegExp, string, number][] = [
    [/^infra\/(core|state-machines)\//, "rules and facts", 0],
    [/^infra\/handlers\//, "deployed handlers", 1],
    [/^infra\/[^/]+\.ts$/, "stack", 1],
    [/^policy\//, "policy pack", 1],
    [/^scripts\/lib\/(recipients|planning|pinpoint|report|templates|text)\//, "domain", 2],
    [/^scripts\/lib\/(aws|offline)\//, "AWS layer", 3],
    [/^scripts\/lib\/cli\//, "CLI layer", 4],
    [/^scripts\/(bench\/)?[^/]+\.ts$/, "commands", 5],
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

  it("no file imports itself through a chain of imports (type-only imports included)", () => {
    assert.deepEqual(
      cycles(graph).map((c) => c.join(" → ")),
      [],
    );
  });

  it("the checks themselves catch an upward arrow, a stray file and a cycle", () => {
    assert.match(violation("infra/core/plan/naming.ts", "infra/sender.ts")!, /a layer above/);
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
