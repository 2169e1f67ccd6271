// The duplicate set past a JavaScript Map's 2^24 entries: adds N distinct ids, then asks again for every 16th (each must
// answer its own first line) and for ids never added (each must answer none). Exits 1 on any wrong answer.
import { CompactSeenKeys } from "../lib/recipients/seen-keys";

const n = Number(process.argv[2]);
const seen = new CompactSeenKeys();
let wrong = 0;
for (let i = 0; i < n; i++) if (seen.firstLineOrAdd(`u${i}`, i + 2) !== undefined) wrong++;
for (let i = 0; i < n; i += 16) if (seen.firstLine(`u${i}`) !== i + 2) wrong++;
for (let i = n; i < n + 100_000; i++) if (seen.firstLine(`u${i}`) !== undefined) wrong++;
const mem = process.memoryUsage();
process.stdout.write(
  `${seen.size} keys, ${wrong} wrong answers; heap ${Math.round(mem.heapUsed / 1048576)} MB, typed arrays ${Math.round(mem.arrayBuffers / 1048576)} MB\n`,
);
seen.close();
process.exitCode = wrong === 0 && seen.size === n ? 0 : 1;
