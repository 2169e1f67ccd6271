/**
 * How the CLIs write numbers, counted nouns and durations for people: one place, so every report reads alike.
 */

/** 1234567 → "1,234,567" (decimals kept: 177.34 → "177.34"). */
export function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** `plural(1, "step")` → "step", `plural(2, "step")` → "steps"; irregular plurals as the third argument. */
export function plural(n: number, singular: string, pluralForm = singular + "s"): string {
  return n === 1 ? singular : pluralForm;
}

/** `counted(2400, "call")` → "2,400 calls". */
export function counted(n: number, singular: string, pluralForm?: string): string {
  return `${count(n)} ${plural(n, singular, pluralForm)}`;
}

/** 45 → "45 s", 80 → "1 min 20 s", 3700 → "1 h 1 min" (seconds dropped beyond an hour). */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return [h ? `${h} h` : "", m ? `${m} min` : "", s && !h ? `${s} s` : ""].filter(Boolean).join(" ");
}
