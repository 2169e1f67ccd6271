/**
 * Legal hours for marketing texts, as data (docs/sms.md, "Legal hours"): for each jurisdiction the local hours a text
 * may be sent on each weekday, in the recipient's local time, with the source read and the date it was read. A
 * window is [start, end) in minutes after local midnight: "not before 8 a.m. or after 9 p.m." is 480–1260, so the last
 * minute a send may start is 20:59. The presets `us` and `ca` name the jurisdictions of a country; which of them
 * apply to one recipient is resolved from their number's area code (legal-window.ts). Pure: no I/O.
 */
import { WEEKDAY_NAMES } from "../timing/quiet-time";

/** Allowed local minutes of one day, [start, end), 0 ≤ start < end ≤ 1440. */
export interface LegalWindow {
  start: number;
  end: number;
}

/** One window (or null: no sending that day) per weekday, indexed like Date#getUTCDay (0 = Sunday). */
export type WeekHours = readonly (LegalWindow | null)[];

export interface Jurisdiction {
  /** ISO 3166-1 for a country's own rule ("US": federal, "CA"), ISO 3166-2 for a state's ("US-FL"). */
  id: string;
  name: string;
  hours: WeekHours;
  /** At most this many messages on the same subject to one number in a rolling 24 hours, when the law says so. */
  sameSubjectPer24h?: number;
  /** The law, and the page its hours were read from. */
  law: string;
  source: string;
  /** The day the source was read (YYYY-MM-DD). */
  read: string;
  /** The day the hours took effect, when recent. */
  since?: string;
}

const h = (hour: number, minute = 0) => hour * 60 + minute;
const every = (start: number, end: number): WeekHours => Array.from({ length: 7 }, () => ({ start, end }));
const READ = "2026-12-04";

/** The table; docs/sms.md shows it, and a test holds the two together. */
export const JURISDICTIONS: readonly Jurisdiction[] = [
  {
    id: "US",
    name: "United States (federal)",
    hours: every(h(8), h(21)),
    law: "TCPA, 47 CFR § 64.1200(c)(1): no telephone solicitation before 8 a.m. or after 9 p.m. at the called party's location",
    source: "https://saxton.org/tcpa/47CFR64.php",
    read: READ,
  },
  {
    id: "US-FL",
    name: "Florida",
    hours: every(h(8), h(20)),
    sameSubjectPer24h: 3,
    law: "Fla. Stat. § 501.616 (Florida Telemarketing Act, as amended by SB 1120, 2021)",
    source: "https://www.nolo.com/legal-encyclopedia/florida-restrictions-telemarketers.html",
    read: READ,
    since: "2021-07-01",
  },
  {
    id: "US-OK",
    name: "Oklahoma",
    hours: every(h(8), h(20)),
    sameSubjectPer24h: 3,
    law: "Oklahoma Telephone Solicitation Act of 2022 (HB 3168), 15 O.S. § 775C.1 et seq.",
    source:
      "https://24kyc.com/oklahoma-passes-new-telephone-solicitation-act-similar-to-the-federal-tcpa-lerman-senter-pllc/",
    read: READ,
    since: "2022-11-01",
  },
  {
    id: "US-MD",
    name: "Maryland",
    hours: every(h(8), h(20)),
    sameSubjectPer24h: 3,
    law: "Stop the Spam Calls Act of 2023 (SB 90), Md. Code, Commercial Law title 14, subtitle 45",
    source: "https://www.dnc.com/index.php/news/maryland-governor-signs-stop-spam-calls-act-2023-law",
    read: READ,
    since: "2024-01-01",
  },
  {
    id: "US-WA",
    name: "Washington",
    hours: every(h(8), h(20)),
    law: "RCW 19.158.040(2): no call received before 8:00 a.m. or after 8:00 p.m. at the recipient's local time",
    source: "https://app.leg.wa.gov/RCW/default.aspx?cite=19.158.040",
    read: READ,
  },
  {
    id: "US-CT",
    name: "Connecticut",
    hours: every(h(9), h(20)),
    law: "Conn. Gen. Stat. § 42-288a, as amended by Public Act 23-98 (SB 1058): 9 a.m. to 8 p.m.",
    source:
      "https://tcpaworld.com/2023/06/28/connecticut-rolls-out-new-telemarketing-requirements-here-is-what-you-need-to-know/",
    read: READ,
    since: "2023-10-01",
  },
  {
    id: "US-TX",
    name: "Texas",
    hours: [{ start: h(12), end: h(21) }, ...every(h(9), h(21)).slice(1)],
    law: "Tex. Bus. & Com. Code ch. 301, texts included by SB 140 (2025): 9 a.m.–9 p.m. Mon–Sat, noon–9 p.m. Sun",
    source: "https://www.cloudcommunications.com/news/texas-senate-bill-140?hs_amp=true",
    read: READ,
    since: "2025-09-01",
  },
  {
    id: "CA",
    name: "Canada",
    hours: [{ start: h(10), end: h(18) }, ...every(h(9), h(21, 30)).slice(1, 6), { start: h(10), end: h(18) }],
    law: "CRTC Unsolicited Telecommunications Rules (Telemarketing Rules): 9:00–21:30 weekdays, 10:00–18:00 weekends",
    source: "https://crtc.gc.ca/eng/phone/telemarketing/tobligations/rules-regles.htm",
    read: READ,
  },
];

export type LegalHoursPreset = "us" | "ca";
export const LEGAL_HOURS_PRESETS: Readonly<Record<LegalHoursPreset, string>> = { us: "US", ca: "CA" };

/** The jurisdictions of a preset: its country's own rule first, then its states' and provinces'. */
export function presetJurisdictions(preset: LegalHoursPreset): Jurisdiction[] {
  const country = LEGAL_HOURS_PRESETS[preset];
  return JURISDICTIONS.filter((j) => j.id === country || j.id.startsWith(`${country}-`));
}

/** The jurisdiction of an id, or undefined. */
export function jurisdiction(id: string): Jurisdiction | undefined {
  return JURISDICTIONS.find((j) => j.id === id);
}

/** The hours every one of `hours` allows, weekday by weekday: the intersection of their windows. */
export function intersectHours(hours: readonly WeekHours[]): WeekHours {
  return Array.from({ length: 7 }, (_, day) => {
    let start = 0;
    let end = 1440;
    for (const week of hours) {
      const w = week[day];
      if (!w) return null;
      start = Math.max(start, w.start);
      end = Math.min(end, w.end);
    }
    return start < end ? { start, end } : null;
  });
}

const clock = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`;

/** "MON-SAT 09:00-21:00, SUN 12:00-21:00": a week's hours in words, runs of equal days together. */
export function describeHours(hours: WeekHours): string {
  const order = [1, 2, 3, 4, 5, 6, 0];
  const text = (d: number) => (hours[d] ? `${clock(hours[d]!.start)}-${clock(hours[d]!.end)}` : "none");
  const runs: { from: number; to: number; text: string }[] = [];
  for (const d of order) {
    const last = runs[runs.length - 1];
    if (last && last.text === text(d)) last.to = d;
    else runs.push({ from: d, to: d, text: text(d) });
  }
  if (runs.length === 1) return `every day ${runs[0].text}`;
  return runs
    .map((r) => `${WEEKDAY_NAMES[r.from]}${r.from === r.to ? "" : `-${WEEKDAY_NAMES[r.to]}`} ${r.text}`)
    .join(", ");
}
