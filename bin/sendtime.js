#!/usr/bin/env node
// `sendtime <command> [flags]` (package.json bin): the TypeScript sources run as they are, through ts-node with the
// project's tsconfig, as the npm scripts run them; scripts/sendtime.ts dispatches.
"use strict";
const fs = require("fs");
const path = require("path");
// The published package ships the library (sendtime/infra) without the commands' sources or ts-node.
if (!fs.existsSync(path.join(__dirname, "..", "scripts", "sendtime.ts"))) {
  console.error(
    "error: the sendtime commands run from a checkout of the repository (npm ci, then npx sendtime); this package is its library, sendtime/infra",
  );
  process.exit(2);
}
require("ts-node").register({ project: path.join(__dirname, "..", "tsconfig.json"), transpileOnly: true });
const { main } = require("../scripts/sendtime");
const { runMain } = require("../scripts/lib/cli/run");
runMain(() => main(process.argv.slice(2)));
