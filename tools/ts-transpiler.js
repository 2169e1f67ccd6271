/**
 * How ts-node turns this project's TypeScript into JavaScript (tsconfig.json's "ts-node" → "transpiler" names this
 * file): esbuild, one file at a time, types stripped and nothing checked (type-checking is `npm run typecheck`, part of
 * `npm test`).
 *
 * Why not ts-node's default (TypeScript's own transpileModule): every CLI start then loads TypeScript's emitter and
 * keeps its garbage: more CPU and memory than esbuild takes before the first row is read (see docs/benchmarks.md).
 *
 * esbuild's sync API runs in a worker thread that talks to one esbuild process (without the worker it starts a process
 * per file, which costs each start more). The worker is a second JavaScript heap, so it is stopped as soon as the
 * imports are done (the first turn of the event loop after a transpile); a later require starts it again.
 */
"use strict";

const esbuild = require("esbuild");
let stopping = false;

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
      if (!stopping) {
        stopping = true;
        setImmediate(() => {
          stopping = false;
          esbuild.stop();
        }).unref();
      }
      return { outputText: result.code, sourceMapText: result.map };
    },
  };
};
