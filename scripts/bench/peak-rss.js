// Preloaded into benchmarked processes: reports peak RSS (bytes) and run time on exit.
const fs = require("fs");
const start = process.hrtime.bigint();
process.on("exit", () => {
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  fs.writeSync(2, `\nBENCH ${JSON.stringify({ maxRssBytes: process.resourceUsage().maxRSS * 1024, ms })}\n`);
});
