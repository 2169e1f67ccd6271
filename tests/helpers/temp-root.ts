/**
 * Every test's temporary files under one folder of the process's own, removed when it exits: loaded by mocha
 * (.mocharc.json `require`) before any test file, in each worker when mocha runs files in parallel, it points TMPDIR —
 * which os.tmpdir() reads at each call, and which the CLIs and servers the tests spawn inherit — at a fresh folder.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-tests-"));
process.env.TMPDIR = root;
process.on("exit", () => fs.rmSync(root, { recursive: true, force: true }));
