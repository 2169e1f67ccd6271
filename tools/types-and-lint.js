/**
 * `npm test`'s type check and lint in one process, on one TypeScript program: `tsc --noEmit --incremental` (the
 * same tsconfig.json and .cache/tsc.tsbuildinfo as `npm run typecheck`) and then ESLint (eslint.config.mjs, as
 * `npm run lint` runs it, warnings failing) given that program (typescript-eslint's `parserOptions.programs`) instead
 * of building its own: the promise rules ask the type checker that has just checked every file. `npm run lint` alone
 * builds its program through the project service, which also builds policy/tsconfig.json's for the pack; here the
 * pack's files are checked in tsconfig.json's program (it includes policy/). Timings: docs/benchmarks.md, "npm test".
 * Prints what tsc and ESLint print (nothing when both pass); exit 0 only when both pass, 1 otherwise. With an argument
 * (`types` or `lint`) it runs that half only.
 */
"use strict";

const path = require("path");
const ts = require("typescript");

const ROOT = path.resolve(__dirname, "..");

/** tsconfig.json's program, incremental (.cache/tsc.tsbuildinfo), and what tsc would print for it. */
function typecheck() {
  const file = path.join(ROOT, "tsconfig.json");
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) };
  const config = ts.getParsedCommandLineOfConfigFile(
    file,
    { noEmit: true, incremental: true, tsBuildInfoFile: path.join(ROOT, ".cache", "tsc.tsbuildinfo") },
    host,
  );
  const builder = ts.createIncrementalProgram({
    rootNames: config.fileNames,
    options: config.options,
    projectReferences: config.projectReferences,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(config),
  });
  const diagnostics = [
    ...builder.getConfigFileParsingDiagnostics(),
    ...builder.getOptionsDiagnostics(),
    ...builder.getGlobalDiagnostics(),
    ...builder.getSyntacticDiagnostics(),
    ...builder.getSemanticDiagnostics(),
  ];
  // With noEmit, emit() writes only the build info (as tsc --incremental does), and only when there are no errors.
  if (!diagnostics.some((d) => d.category === ts.DiagnosticCategory.Error)) builder.emit();
  return { program: builder.getProgram(), diagnostics };
}

/** Prints diagnostics as tsc does when its output is not a terminal (`file(line,col): error TS…: …`). */
function print(diagnostics) {
  const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => "\n" };
  process.stdout.write(ts.formatDiagnostics(diagnostics, host));
}

function fail(diagnostics) {
  print(diagnostics);
  process.exit(1);
}

/** ESLint over the tree with eslint.config.mjs, its type-aware rules reading `program`; true when clean. */
async function lint(program) {
  const { ESLint } = require("eslint");
  const parserOptions = program ? { programs: [program], projectService: false } : {};
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfig: [{ files: ["**/*.ts"], languageOptions: { parserOptions } }],
  });
  const results = await eslint.lintFiles(["."]);
  const problems = results.reduce((n, r) => n + r.errorCount + r.warningCount, 0);
  if (problems > 0) {
    const formatter = await eslint.loadFormatter("stylish");
    process.stdout.write(await formatter.format(results));
  }
  return problems === 0;
}

async function main(which) {
  let ok = true;
  let program;
  if (which !== "lint") {
    const types = typecheck();
    program = types.program;
    if (types.diagnostics.length > 0) {
      ok = false;
      print(types.diagnostics);
    }
  }
  if (which !== "types") ok = (await lint(program)) && ok;
  process.exit(ok ? 0 : 1);
}

if (require.main === module) main(process.argv[2]);
