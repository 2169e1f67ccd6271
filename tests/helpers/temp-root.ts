/**
 * Every test's temporary files under one folder of the run's own, removed when the run ends: loaded by mocha
 * (.mocharc.json `require`) before any test file, it points TMPDIR — which os.tmpdir() reads at each call, and which
 * the CLIs and servers the tests spawn inherit — at a fresh folder, and removes it after the last test.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-tests-"));
process.env.TMPDIR = root;

export const mochaHooks = {
  afterAll(): void {
    fs.rmSync(root, { recursive: true, force: true });
  },
};
