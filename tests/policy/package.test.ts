/**
 * policy/ as a package of its own (what `pulumi policy publish` packs): its dependencies and lockfile are the
 * repository's, so the pack that is published runs on the versions the tests ran it on. The pack packed and installed
 * outside the repository: tests/packages/policy-pack.packed.ts (`npm run test:packages`).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { ROOT } from "../helpers/cli";

const read = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), "utf8"));

describe("policy/ as a package", () => {
  const pkg = read("policy/package.json");
  const root = read("package.json");
  const shrinkwrap = read("policy/npm-shrinkwrap.json");
  const rootLock = read("package-lock.json");

  it("depends on @pulumi/policy and @pulumi/pulumi at the repository's versions, and runs its bundle", () => {
    assert.deepStrictEqual(pkg.dependencies, {
      "@pulumi/policy": root.dependencies["@pulumi/policy"],
      "@pulumi/pulumi": root.dependencies["@pulumi/pulumi"],
    });
    assert.strictEqual(pkg.main, "dist/index.js");
    assert.strictEqual(pkg.name, "sendtime-guard");
    assert.strictEqual(pkg.private, undefined, "a pack is published: not private");
    assert.deepStrictEqual(pkg.engines, root.engines);
  });

  it("its npm-shrinkwrap.json locks every package at the root lockfile's version and integrity (node tools/build.js policy-lock)", () => {
    assert.deepStrictEqual(shrinkwrap.packages[""].dependencies, pkg.dependencies);
    const entries = Object.entries<any>(shrinkwrap.packages).filter(([p]) => p !== "");
    assert.ok(entries.length > 50, `${entries.length} packages`);
    const differ = entries
      .filter(
        ([p, e]) => rootLock.packages[p]?.version !== e.version || rootLock.packages[p]?.integrity !== e.integrity,
      )
      .map(([p]) => p);
    assert.deepStrictEqual(differ, []);
    assert.ok(
      entries.every(([, e]) => !e.dev),
      "no dev packages",
    );
  });

  it("locks every dependency of every package it locks (nothing left for npm to resolve)", () => {
    const paths = new Set(Object.keys(shrinkwrap.packages));
    /** Node's lookup: node_modules/a/node_modules/b, then up to node_modules/b. */
    const resolves = (from: string, name: string) => {
      for (let dir = from; ; dir = dir.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, "")) {
        if (paths.has(`${dir ? `${dir}/` : ""}node_modules/${name}`)) return true;
        if (!dir) return false;
      }
    };
    const missing = Object.entries<any>(shrinkwrap.packages).flatMap(([p, e]) =>
      Object.keys({ ...e.dependencies })
        .filter((d) => !resolves(p, d))
        .map((d) => `${p || "(pack)"} → ${d}`),
    );
    assert.deepStrictEqual(missing, []);
  });
});
