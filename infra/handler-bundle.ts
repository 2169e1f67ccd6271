/**
 * Bundles a deployed handler (infra/handlers/journeys.ts, infra/handlers/unsubscribe.ts) and everything it imports,
 * the AWS SDK's clients included, into one CommonJS file with esbuild, at program time: what `pulumi up` deploys is built
 * from the same source as the tests and scripts/enrol.ts run. esbuild ships its binary in its npm package.
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";

export const HANDLER_ENTRY = handlerSource("journeys");
export const UNSUBSCRIBE_HANDLER_ENTRY = handlerSource("unsubscribe");
/** The file name inside the deployment package, and the Lambda handler setting that points at it. */
export const HANDLER_FILE = "index.js";
export const HANDLER_NAME = "index.handler";
/**
 * The Node the bundle's syntax is for: Lambda's (HANDLER_RUNTIME, infra/function-parts.ts). The tests require the bundle
 * into the Node that runs them, so syntax newer than that Node's would fail there first.
 */
export const BUNDLE_TARGET = "node24";
export { SES_OPT_OUT_HANDLER_NAME } from "./core/consent/ses-subscription";

export interface HandlerBundle {
  code: string;
  sha256: string;
}

// The offline preview and the tests load the program many times in one process; each bundle is built once.
const CACHE = Symbol.for("sendtime.journeyHandlerBundle");
const UNSUBSCRIBE_CACHE = Symbol.for("sendtime.unsubscribeHandlerBundle");

export function bundleJourneyHandler(): HandlerBundle {
  return bundle(HANDLER_ENTRY, CACHE);
}

export function bundleUnsubscribeHandler(): HandlerBundle {
  return bundle(UNSUBSCRIBE_HANDLER_ENTRY, UNSUBSCRIBE_CACHE);
}

/** The handler's TypeScript in the repository; in the published library (sendtime/infra), its compiled JavaScript. */
function handlerSource(name: string): string {
  const source = path.join(__dirname, "handlers", `${name}.ts`);
  return fs.existsSync(source) ? source : path.join(__dirname, "handlers", `${name}.js`);
}

function bundle(entry: string, key: symbol): HandlerBundle {
  const cache = globalThis as unknown as Record<symbol, HandlerBundle | undefined>;
  if (cache[key]) return cache[key]!;
  // Required here, not at the top: stacks without journeys never load esbuild.
  const esbuild: typeof import("esbuild") = require("esbuild");
  const result = esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    target: BUNDLE_TARGET,
    format: "cjs",
    write: false,
    legalComments: "none",
    // Whitespace and syntax only, names kept (stack traces and error names stay readable): the journeys handler went
    // from 2.02 MB to 1.41 MB with the phone and postal code readers in it (docs/benchmarks.md).
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0].text;
  return (cache[key] = { code, sha256: createHash("sha256").update(code).digest("hex") });
}
