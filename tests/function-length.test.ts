/**
 * No function in infra/, policy/ or scripts/ is over 80 lines: a longer one is split into named steps. Functions are
 * found with the TypeScript compiler's parser (declarations, methods, constructors, accessors, function expressions
 * and arrow functions, in .ts and .js files); tests/ is exempt.
 *
 * A function's length is its lines from its first token to its closing brace, less the lines of the function
 * declarations inside it: a component's constructor reads as a list of steps, each an inner `function`, and each step
 * is measured on its own. Closures a function keeps in `const`s (they share its variables) count as its lines.
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";

const ROOT = path.resolve(__dirname, "..");
const SOURCE_DIRS = ["infra", "policy", "scripts", "tools"];
export const MAX_FUNCTION_LINES = 80;

function sources(dir: string): string[] {
  if (!fs.existsSync(path.join(ROOT, dir))) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, entry.name);
    // Build output (policy/dist: the pack's bundle, npm run build) is esbuild's, not ours; node_modules, npm's.
    if (entry.isDirectory()) {
      if (entry.name !== "dist" && entry.name !== "node_modules") out.push(...sources(rel));
    } else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(rel);
  }
  return out;
}

export interface FunctionLength {
  /** `file:line` where the function starts. */
  where: string;
  name: string;
  lines: number;
}

/** Every function with a body in `text` and its length (as the header defines it). */
export function functionLengths(file: string, text: string): FunctionLength[] {
  const kind = file.endsWith(".js") ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, kind);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const span = (node: ts.Node) => lineOf(node.end) - lineOf(node.getStart(source)) + 1;
  const found: FunctionLength[] = [];

  /** Lines of the function declarations nested in `node`, not counting those nested in them again. */
  const innerSteps = (node: ts.Node): number => {
    let lines = 0;
    node.forEachChild((child) => {
      lines += ts.isFunctionDeclaration(child) && child.body ? span(child) : innerSteps(child);
    });
    return lines;
  };
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const where = `${file}:${lineOf(node.getStart(source)) + 1}`;
      found.push({ where, name: nameOf(node, source), lines: span(node) - innerSteps(node.body) });
    }
    node.forEachChild(visit);
  };
  visit(source);
  return found;
}

function nameOf(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return `${node.parent.name?.getText(source) ?? "class"} constructor`;
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText(source);
  return "(anonymous)";
}

describe(`no function over ${MAX_FUNCTION_LINES} lines in infra/, policy/, scripts/`, () => {
  it("every function in the tree is short enough (split a longer one into named steps)", () => {
    const long = SOURCE_DIRS.flatMap(sources)
      .flatMap((file) => functionLengths(file, fs.readFileSync(path.join(ROOT, file), "utf8")))
      .filter((f) => f.lines > MAX_FUNCTION_LINES)
      .map((f) => `${f.where} ${f.name}: ${f.lines} lines`);
    assert.deepEqual(long, []);
  });

  it("the measure itself: lines from the first token to the closing brace, inner function declarations apart", () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  step${i}();`).join("\n");
    // 1 + 79 + 1 = 81 lines, and 80.
    const long = `export function tooLong() {\n${body(79)}\n}\n`;
    const fits = `const fits = async () => {\n${body(78)}\n};\n`;
    assert.deepEqual(
      functionLengths("a.ts", long + fits).map((f) => [f.where, f.name, f.lines]),
      [
        ["a.ts:1", "tooLong", 81],
        ["a.ts:82", "fits", 80],
      ],
    );
    // A constructor of 103 lines, 100 of them one step: the step is measured on its own, the constructor is 3 lines.
    const component = `class Thing {\n  constructor() {\n    createIt();\n    function createIt() {\n${body(98)}\n    }\n  }\n}\n`;
    assert.deepEqual(
      functionLengths("b.ts", component).map((f) => [f.name, f.lines]),
      [
        ["Thing constructor", 3],
        ["createIt", 100],
      ],
    );
    // A closure kept in a const is the function's own code; methods and .js files are measured too.
    const closure = `function outer() {\n  const inner = () => {\n${body(3)}\n  };\n  return inner;\n}\n`;
    assert.deepEqual(
      functionLengths("c.js", closure + "exports.o = { m() {\n  return 1;\n} };\n").map((f) => [f.name, f.lines]),
      [
        ["outer", 8],
        ["inner", 5],
        ["m", 3],
      ],
    );
  });
});

export const MAX_FILE_LINES = 500;

describe(`no file over ${MAX_FILE_LINES} lines in infra/, policy/, scripts/ (generated data aside)`, () => {
  it("every source file is short enough (split a longer one by subject); a generated one says so on its first line", () => {
    const long = SOURCE_DIRS.flatMap(sources)
      .map((file) => ({ file, text: fs.readFileSync(path.join(ROOT, file), "utf8") }))
      .filter(({ text }) => !/^\/\/ Generated by /.test(text))
      .map(({ file, text }) => `${file}: ${text.split("\n").length - (text.endsWith("\n") ? 1 : 0)} lines`)
      .filter((line) => Number(/(\d+) lines$/.exec(line)![1]) > MAX_FILE_LINES);
    assert.deepEqual(long, []);
  });
});
