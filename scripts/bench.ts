/**
 * npm run bench: speed and memory of the tools on a recipient list with a realistic zone mix, 1,000,000 rows by
 * default; BENCH_ROWS=10000000 for ten million. The list is generated once into .bench-cache/ (not committed). Each
 * tool runs in its own process, side by side with a bare csv-parse pass over the same file; peak RSS and run time
 * are reported by a preloaded hook. Targets: size-window ≤ 1.5× the bare pass and ≤ 150 MB; the launcher's dry run
 * (plan + rejects, 2 steps) ≤ 300 MB at any row count and at least BENCH_MIN_ROWS_PER_S (86,000: the rate before
 * the compact duplicate set); the dry run with every timing option on (the list plus last_login, send_hour and send_at
 * columns) ≤ 1.3× the CPU of the dry run as it was when that target was set (commit BASELINE_COMMIT, run from the
 * repository's history with its own dependencies: bench/baseline.ts), and also reported against today's plain dry
 * run; the fastest of BENCH_REPEAT runs of each, taking turns. Last, the duplicate set alone past a Map's 2^24
 * entries (BENCH_SEEN_KEYS, 17,000,000). BENCH_SKIP=timing,pinpoint leaves out the every-timing-option run and the
 * Pinpoint import (at ten million rows they would generate and read two more lists of several GB). The --bulk dry
 * run is measured against the plain one, taking turns, with the fan-out model of both plans (bench/bulk.ts) and the
 * orchestration cost of both (bench/cost.ts); BENCH_ONLY=cost runs that cost alone. Zones from phones and ZIPs on
 * half the rows are measured against --infer-zone none (bench/zones.ts; BENCH_ONLY=zones runs that alone).
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { BASELINE_COMMIT, baselineCheckout, baselineDryRun, benchSendFlags } from "./bench/baseline";
import { bulkBench, costOnly } from "./bench/bulk";
import { pinpointBench } from "./bench/pinpoint";
import { writeTimingList } from "./bench/timing-columns";
import { zonesBench } from "./bench/zones";
import { writeChunked } from "./bench/chunked-file";
import { count } from "./lib/text/format";

const USAGE = `Usage: npm run bench   (no flags; settings from the environment)

Generates a recipient list once into .bench-cache/ and measures each tool in its own process, side by side with a bare
csv-parse pass: time, CPU and peak RSS, and whether the targets are met. Takes minutes.
  BENCH_ROWS=N          rows in the list (default 1000000; 10000000 for the ten-million-row run)
  BENCH_SKIP=a,b        leave out runs: timing (every timing option), pinpoint (the Pinpoint import), bulk (--bulk
                        against the plain dry run, the fan-out model and the orchestration cost of both), templates
                        (the template check), zones (zones from phones and ZIPs against --infer-zone none)
  BENCH_ONLY=zones      only the zones case (after the bare pass it is shown against)
  BENCH_ONLY=cost       only the orchestration cost: one plain and one --bulk dry run (for their plans), then the
                        cost per million recipient-steps grouped and per recipient, today's and the one door's
  BENCH_REPEAT=N        runs of the baseline, plain and every-timing-option dry runs, taking turns (default 3)
  BENCH_SEEN_KEYS=N     keys for the duplicate set run on its own (default 17000000)
  BENCH_MIN_ROWS_PER_S  the dry run's rate target (default 86000)
`;
if (process.argv.length > 2) {
  const help = process.argv.slice(2).every((a) => a === "--help" || a === "-h");
  (help ? process.stdout : process.stderr).write(
    help ? USAGE : `error: bench takes no arguments (${process.argv.slice(2).join(" ")})\n${USAGE}`,
  );
  process.exit(help ? 0 : 2);
}

const ROOT = path.resolve(__dirname, "..");
const CACHE = path.join(ROOT, ".bench-cache");
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const SKIP = new Set((process.env.BENCH_SKIP ?? "").split(",").filter(Boolean));
/** BENCH_ONLY=cost: the orchestration cost alone (its two dry runs, once each), without the timed runs. */
const ONLY = process.env.BENCH_ONLY ?? "";
if (ONLY !== "" && ONLY !== "cost" && ONLY !== "zones") {
  process.stderr.write(`error: BENCH_ONLY=${ONLY}: the cases that run alone are cost and zones\n${USAGE}`);
  process.exit(2);
}
const REPEAT = Math.max(1, Number(process.env.BENCH_REPEAT ?? 3));
const FILE = path.join(CACHE, `recipients-${ROWS}.csv`);

/** Share of recipients per zone: a US-heavy list with Europe, India, APAC, and some bad or odd zone values. */
const ZONE_MIX: [string, number][] = [
  ["America/New_York", 24],
  ["America/Chicago", 10],
  ["America/Denver", 4],
  ["America/Los_Angeles", 12],
  ["US/Eastern", 2],
  ["America/Sao_Paulo", 4],
  ["America/Mexico_City", 3],
  ["Europe/London", 8],
  ["Europe/Paris", 5],
  ["Europe/Berlin", 5],
  ["Europe/Madrid", 2],
  ["Asia/Kolkata", 7],
  ["Asia/Kathmandu", 1],
  ["Asia/Tokyo", 4],
  ["Asia/Singapore", 2],
  ["Australia/Sydney", 3],
  ["Australia/Lord_Howe", 0.1],
  ["Pacific/Kiritimati", 0.1],
  ["america/chicago", 1],
  ["", 1.5],
  ["Mars/Olympus_Mons", 0.3],
  ["America/New York", 0.5],
];

/**
 * The dry runs' templates, in the cache: each uses first_name and plan outside a block (every row has them, so the
 * check runs on every row and rejects none) and city inside one.
 */
function writeBenchTemplates(): string {
  const dir = path.join(CACHE, "templates");
  for (const name of ["welcome", "followup", "welcome-a", "welcome-B", "followup-A", "followup-B"]) {
    fs.mkdirSync(path.join(dir, name), { recursive: true });
    fs.writeFileSync(path.join(dir, name, "subject.txt"), `Hi {{first_name}}`);
    fs.writeFileSync(
      path.join(dir, name, "body.html"),
      `<p>Hi {{first_name}} ({{plan}})</p>{{#if city}}<p>{{city}}</p>{{/if}}`,
    );
    fs.writeFileSync(path.join(dir, name, "body.txt"), `Hi {{first_name}} ({{plan}}) {{#if city}}{{city}}{{/if}}`);
  }
  return dir;
}

function generate(): void {
  if (fs.existsSync(FILE)) return;
  fs.mkdirSync(CACHE, { recursive: true });
  process.stderr.write(`generating ${FILE} …\n`);
  const total = ZONE_MIX.reduce((s, [, w]) => s + w, 0);
  const cumulative: [string, number][] = [];
  let acc = 0;
  for (const [z, w] of ZONE_MIX) cumulative.push([z, (acc += w / total)]);
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const names = ["Ana", "Bo", "Chloé", "Dmitri", "Eun-ji", "Femi", 'Grace "G"', "Hiro", "Ines", "Jonas"];
  writeChunked(FILE, (write) => {
    write("id,email,timezone,first_name,plan,city\n");
    for (let i = 0; i < ROWS; i++) {
      const r = random();
      const zone = cumulative.find(([, c]) => r <= c)![0];
      const name = names[i % names.length];
      const quoted = name.includes('"') ? `"${name.replace(/"/g, '""')}"` : name;
      write(`u${i},user${i}@example.com,${zone},${quoted},${i % 7 ? "basic" : "pro"},"City, ${i % 100}"\n`);
    }
  });
}

interface Measured {
  ms: number;
  cpuMs: number;
  maxRssBytes: number;
}

/** Runs `script` of the code in `root` (this repository, or the baseline) with that code's own ts-node. */
function measure(label: string, script: string, args: string[], root = ROOT): Measured {
  const tsNode = path.join(root, "node_modules", "ts-node", "dist", "bin");
  const r = spawnSync(
    process.execPath,
    ["-r", path.join(__dirname, "bench", "peak-rss.js"), tsNode, "--transpile-only", script, ...args],
    {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  const m = /BENCH (\{.*\})/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`${label} failed (exit ${r.status}): ${r.stderr.slice(-500)}`);
  return JSON.parse(m[1]);
}

function row(label: string, m: Measured, base?: Measured, rows = ROWS) {
  const rate = count(Math.round(rows / (m.ms / 1000)));
  const ratio = base ? `  ${(m.ms / base.ms).toFixed(2)}× bare parse (cpu ${(m.cpuMs / base.cpuMs).toFixed(2)}×)` : "";
  process.stdout.write(
    `${label.padEnd(28)} ${(m.ms / 1000).toFixed(2).padStart(6)} s  ${rate.padStart(10)} rows/s  ` +
      `cpu ${(m.cpuMs / 1000).toFixed(2).padStart(6)} s  peak RSS ${Math.round(m.maxRssBytes / 1048576)} MB${ratio}\n`,
  );
}

generate();
process.stdout.write(
  `${count(ROWS)} rows, ${(fs.statSync(FILE).size / 1048576).toFixed(0)} MB (${path.relative(ROOT, FILE)})\n`,
);
const PLAIN_DRY_RUN = [
  ...["--templates", writeBenchTemplates()],
  ...benchSendFlags(FILE),
  "--dry-run",
  // The plan is measured, not launched: 10M recipients × 2 steps is above the default schedule quota.
  "--max-schedules",
  "1000000000",
  "--out",
  path.join(CACHE, "launch-out"),
  "--json",
];
if (ONLY === "cost") {
  costOnly(PLAIN_DRY_RUN, measure, CACHE);
  process.exit(0);
}
/** The plain dry run's flags over another list, into its own folder. */
const dryRunOf = (file: string) =>
  PLAIN_DRY_RUN.map((a) => (a === FILE ? file : a === path.join(CACHE, "launch-out") ? `${file}.out` : a));
const zonesCase = () => zonesBench(ROWS, FILE, dryRunOf, measure, (label, m) => row(label, m, bare), REPEAT);
const bare = measure("bare csv-parse", "scripts/bench/bare-parse.ts", [FILE]);
row("bare csv-parse pass", bare);
if (ONLY === "zones") {
  zonesCase();
  process.exit(0);
}
const sized = measure("size-window", "scripts/size-window.ts", [
  "--recipients",
  FILE,
  "--date",
  "2026-12-01",
  "--hour",
  "9",
  "--step",
  "+3d",
  "--json",
]);
row("size-window (2 steps)", sized, bare);
const launched = measure("launch-campaign --dry-run", "scripts/launch-campaign.ts", PLAIN_DRY_RUN);
row("launch-campaign --dry-run", launched, bare);
if (!SKIP.has("bulk"))
  bulkBench(ROWS, PLAIN_DRY_RUN, launched, measure, (label, m) => row(label, m, bare), CACHE, REPEAT);
if (!SKIP.has("timing")) timingCase(launched, bare);
if (!SKIP.has("templates")) templatesCase(launched, bare);
if (!SKIP.has("zones")) zonesCase();
// Time or CPU time: on a shared machine the wall clock mostly measures the neighbours.
const ok = Math.min(sized.ms / bare.ms, sized.cpuMs / bare.cpuMs) <= 1.5 && sized.maxRssBytes <= 150 * 1048576;
process.stdout.write(`size-window targets (≤ 1.5× bare parse, ≤ 150 MB): ${ok ? "met" : "NOT met"}\n`);
const minRate = Number(process.env.BENCH_MIN_ROWS_PER_S ?? 86_000);
const launchOk = launched.maxRssBytes <= 300 * 1048576 && ROWS / (launched.ms / 1000) >= minRate;
process.stdout.write(
  `launch-campaign --dry-run targets (≤ 300 MB, ≥ ${count(minRate)} rows/s): ${launchOk ? "met" : "NOT met"}\n`,
);
const SEEN_KEYS = Number(process.env.BENCH_SEEN_KEYS ?? 17_000_000);
const seen = measure("CompactSeenKeys", "scripts/bench/seen-keys.ts", [String(SEEN_KEYS)]);
row(`duplicate set, ${(SEEN_KEYS / 1e6).toFixed(1)}M ids`, seen, undefined, SEEN_KEYS);
if (!SKIP.has("pinpoint")) pinpointBench(ROWS, CACHE, measure);

/** The every-timing-option dry run's flags over `file`. */
function timedDryRun(file: string): string[] {
  return [
    ...["--templates", writeBenchTemplates()],
    "--campaign",
    "bench",
    "--recipients",
    file,
    "--template",
    "welcome-{variant}",
    "--after",
    "last_login:+30d",
    "--hour",
    "10",
    "--step",
    "+36h:followup-{variant}",
    "--missed",
    "next-day",
    "--quiet-hours",
    "21:00-08:00",
    "--quiet-days",
    "SUN",
    "--variant",
    "A:45:welcome-a",
    "--variant",
    "B:45",
    "--holdout",
    "10",
    "--now",
    "2026-11-01T00:00:00Z",
    "--dry-run",
    "--out",
    path.join(CACHE, "launch-timing-out"),
    "--json",
  ];
}

/**
 * The dry run with every timing option on, side by side with the dry run as it was when its target was set (the
 * baseline, baseline.ts) and with today's plain one: BENCH_REPEAT times each (default 3), taking turns, compared by
 * each one's fastest run (on a shared machine a single pair moved the ratio by ±0.15).
 */
function timingCase(first: Measured, bare: Measured): void {
  // The same list with timing columns, every timing option on: --after, per-row send_hour/send_at, a 36-hour step,
  // missed time, quiet hours and days, two variants and a holdout.
  const TIMING_FILE = FILE.replace(/\.csv$/, "-timing.csv");
  writeTimingList(FILE, TIMING_FILE);
  const TIMED_DRY_RUN = timedDryRun(TIMING_FILE);
  let baseline = baselineCheckout(ROOT, CACHE);
  const out = path.join(CACHE, "launch-baseline-out");
  const plains = [first];
  const timeds: Measured[] = [];
  const baselines: Measured[] = [];
  for (let i = 0; i < REPEAT; i++) {
    if ("dir" in baseline) {
      try {
        baselines.push(
          measure("the baseline's dry run", "scripts/launch-campaign.ts", baselineDryRun(FILE, out), baseline.dir),
        );
      } catch (e) {
        baseline = { unavailable: (e as Error).message.split("\n")[0] };
        baselines.length = 0;
      }
    }
    timeds.push(measure("launch-campaign, every timing option", "scripts/launch-campaign.ts", TIMED_DRY_RUN));
    if (i < REPEAT - 1) plains.push(measure("launch-campaign --dry-run", "scripts/launch-campaign.ts", PLAIN_DRY_RUN));
  }
  const cpus = (ms: Measured[]) => ms.map((m) => (m.cpuMs / 1000).toFixed(2)).join(", ");
  const short = BASELINE_COMMIT.slice(0, 7);
  process.stdout.write(
    `  CPU s of each run, taking turns: ${baselines.length ? `as of ${short} ${cpus(baselines)}; ` : ""}` +
      `plain ${cpus(plains)}; every timing option ${cpus(timeds)}\n`,
  );
  const fastest = (ms: Measured[]) => ms.reduce((a, b) => (b.cpuMs < a.cpuMs ? b : a));
  const timed = fastest(timeds);
  if (baselines.length) row(`  as of ${short} (fastest)`, fastest(baselines), bare);
  row("  plain (fastest)", fastest(plains), bare);
  row("  every option (fastest)", timed, bare);
  const ratios = (base: Measured) =>
    `${(timed.cpuMs / base.cpuMs).toFixed(2)}× the CPU, ${(timed.ms / base.ms).toFixed(2)}× the time`;
  if ("dir" in baseline) {
    // Judged on CPU time: on a shared machine the wall clock mostly measures the neighbours.
    const ratio = timed.cpuMs / fastest(baselines).cpuMs;
    const verdict = ROWS !== 1_000_000 ? "the target is for 1,000,000 rows" : ratio <= 1.3 ? "met" : "NOT met";
    process.stdout.write(
      `every timing option vs the dry run as of ${short} (when the target was set): ${ratios(fastest(baselines))} ` +
        `(target ≤ 1.3× the CPU): ${verdict}\n`,
    );
  } else
    process.stdout.write(`every timing option vs the dry run as of ${short}: not checked (${baseline.unavailable})\n`);
  process.stdout.write(`every timing option vs today's plain dry run: ${ratios(fastest(plains))} (no target)\n`);
}

/**
 * The template check's cost: the plain dry run, whose templates use two columns outside a block (every row checked),
 * side by side with the same run without the check (--templates none), taking turns, BENCH_REPEAT times each, compared
 * by each one's fastest run on CPU. Target: within 5%.
 */
function templatesCase(first: Measured, bare: Measured): void {
  const unchecked = [...PLAIN_DRY_RUN.slice(2), "--templates", "none"];
  const checkeds = [first];
  const uncheckeds: Measured[] = [];
  for (let i = 0; i < REPEAT; i++) {
    uncheckeds.push(measure("launch-campaign --dry-run --templates none", "scripts/launch-campaign.ts", unchecked));
    if (i < REPEAT - 1)
      checkeds.push(measure("launch-campaign --dry-run", "scripts/launch-campaign.ts", PLAIN_DRY_RUN));
  }
  const fastest = (ms: Measured[]) => ms.reduce((a, b) => (b.cpuMs < a.cpuMs ? b : a));
  const checked = fastest(checkeds);
  const without = fastest(uncheckeds);
  row("  templates checked (fastest)", checked, bare);
  row("  --templates none (fastest)", without, bare);
  const ratio = checked.cpuMs / without.cpuMs;
  const verdict = ROWS !== 1_000_000 ? "the target is for 1,000,000 rows" : ratio <= 1.05 ? "met" : "NOT met";
  process.stdout.write(
    `template check: ${ratio.toFixed(3)}× the CPU of the same dry run without it (target ≤ 1.05×): ${verdict}\n`,
  );
}
