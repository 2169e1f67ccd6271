/**
 * GitHub's workflow parser (@actions/workflow-parser, MIT), loaded for the tests. The package is ESM and imports its
 * JSON schemas without `with { type: "json" }` (its build expects a bundler), which Node refuses; a one-function
 * loader hook adds that attribute to its .json imports. Everything else is the package as published.
 */
import { register } from "module";
import type * as WorkflowParser from "@actions/workflow-parser";

const JSON_IMPORTS = `export async function load(url, context, next) {
  if (url.endsWith(".json")) return next(url, { ...context, importAttributes: { ...context.importAttributes, type: "json" } });
  return next(url, context);
}`;

let loading: Promise<typeof WorkflowParser> | undefined;

export function loadWorkflowParser(): Promise<typeof WorkflowParser> {
  if (!loading) {
    register(`data:text/javascript,${encodeURIComponent(JSON_IMPORTS)}`);
    // A real dynamic import: TypeScript's CommonJS output would turn `import()` into require(), which ESM refuses.
    const importModule = new Function("specifier", "return import(specifier)") as (
      s: string,
    ) => Promise<typeof WorkflowParser>;
    loading = importModule("@actions/workflow-parser");
  }
  return loading;
}
