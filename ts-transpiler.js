/**
 * How ts-node turns this project's TypeScript into JavaScript (tsconfig.json, "ts-node": "transpiler"): esbuild, one
 * file at a time, types stripped and nothing checked (type-checking is `npm run typecheck`, part of `npm test`).
 *
 * Why not ts-node's default (TypeScript's own transpileModule): every CLI start then compiles TypeScript's emitter
 * and keeps its garbage; size-window's start took 1.1 s of CPU and 150 MB before reading a row, esbuild's 0.25 s and
 * under 100 MB. esbuild runs as a child process; its sync API is used without a worker thread (a worker is a second
 * JavaScript heap in this process, about 10 MB, for nothing: ts-node asks for one file at a time).
 */
"use strict";

const previous = process.env.ESBUILD_WORKER_THREADS;
process.env.ESBUILD_WORKER_THREADS = "0"; // read once, when esbuild loads
const esbuild = require("esbuild");
if (previous === undefined) delete process.env.ESBUILD_WORKER_THREADS;
else process.env.ESBUILD_WORKER_THREADS = previous;

/** ts-node's transpiler interface: create() → { transpile(text, { fileName }) → { outputText, sourceMapText } }. */
exports.create = function create() {
  return {
    transpile(input, { fileName }) {
      const result = esbuild.transformSync(input, {
        loader: fileName.endsWith(".tsx") ? "tsx" : "ts",
        format: "cjs",
        target: "es2022",
        sourcemap: "external",
        sourcefile: fileName,
        // As TypeScript does with tsconfig.json's ES2022 target and CommonJS modules: class fields with define
        // semantics, and import() as a require() (Node's ESM loader would not find extensionless .ts paths).
        tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
        supported: { "dynamic-import": false },
      });
      return { outputText: result.code, sourceMapText: result.map };
    },
  };
};
