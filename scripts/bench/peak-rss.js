// Preloaded into benchmarked processes: reports peak RSS (bytes), run time and CPU time on exit. CPU time is the
// steadier figure on a shared machine, where run time also counts waiting for a core.
const fs = require("fs");
const start = process.hrtime.bigint();
process.on("exit", () => {
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const usage = process.resourceUsage();
  const cpuMs = (usage.userCPUTime + usage.systemCPUTime) / 1000;
  fs.writeSync(2, `\nBENCH ${JSON.stringify({ maxRssBytes: usage.maxRSS * 1024, ms, cpuMs })}\n`);
});
