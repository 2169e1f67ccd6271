/**
 * The benchmark's list with timing columns added, for the dry run with every timing option on: `last_login` (half
 * dates, half instants with milliseconds, a few without an offset or empty), `send_hour` on 30% of rows and
 * `send_at` on 1%. Derived line by line from the base list (whose fields hold no newlines); written once.
 */
import * as fs from "fs";
import { writeChunked } from "./chunked-file";

function timingValues(i: number): string {
  const day = String(1 + (i % 28)).padStart(2, "0");
  let lastLogin: string;
  if (i % 500 === 7)
    lastLogin = `2026-10-${day}T10:00:00`; // no offset: invalid-date
  else if (i % 500 === 9) lastLogin = "";
  else if (i % 2) lastLogin = `2026-10-${day}`;
  else {
    const seconds = (i * 7919) % 86_400;
    const clock = [seconds / 3600, (seconds / 60) % 60, seconds % 60]
      .map((n) => String(Math.floor(n)).padStart(2, "0"))
      .join(":");
    lastLogin = `2026-10-${day}T${clock}.${String(i % 1000).padStart(3, "0")}Z`;
  }
  const sendHour = i % 10 < 3 ? String(i % 24) : "";
  const sendAt = i % 100 === 42 ? `2026-11-${String(20 + (i % 9)).padStart(2, "0")}T12:30` : "";
  return `${lastLogin},${sendHour},${sendAt}`;
}

export function writeTimingList(from: string, to: string): void {
  if (fs.existsSync(to)) return;
  process.stderr.write(`generating ${to} …\n`);
  const lines = fs.readFileSync(from, "utf8").split("\n");
  writeChunked(to, (write) => {
    write(`${lines[0]},last_login,send_hour,send_at\n`);
    for (let i = 1; i < lines.length; i++) if (lines[i] !== "") write(`${lines[i]},${timingValues(i - 1)}\n`);
  });
}
