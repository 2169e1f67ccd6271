// ESLint: the promise rules of typescript-eslint's type-checked set, where a codebase of AWS calls and streams needs
// them most (a promise neither awaited nor returned hides its failure; a promise where a value is expected is always
// truthy). Everything else is tsc's and prettier's. Run by `npm test` (tools/test.js) beside them.
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "node_modules/**",
      ".cache/**",
      ".bench-cache/**",
      "out/**",
      "**/dist/**",
      "pulumi-template/**",
      "**/*.js",
      "**/*.mjs",
    ],
  },
  {
    files: ["**/*.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    // (Some files carry directives for rules this set does not run: not reported.)
    linterOptions: { reportUnusedDisableDirectives: "off" },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
);
