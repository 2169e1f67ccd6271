#!/usr/bin/env node
// `sendtime <command> [flags]` (package.json bin): the TypeScript sources run as they are, through ts-node with the
// project's tsconfig, as the npm scripts run them; scripts/sendtime.ts dispatches.
"use strict";
const path = require("path");
require("ts-node").register({ project: path.join(__dirname, "..", "tsconfig.json"), transpileOnly: true });
const { main } = require("../scripts/sendtime");
const { runMain } = require("../scripts/lib/cli/run");
runMain(() => main(process.argv.slice(2)));
