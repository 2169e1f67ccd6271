/**
 * The demo's recipient list (scripts/demo.ts): clean, deterministic rows — the same list on every run — across many
 * zones, with a few rows whose zone comes from their data as real lists have them: an `EST` abbreviation, a phone
 * number, a postal code with its country, coordinates. No dates: when they are sent is the launch's flags.
 */

/** The list's columns: the launcher's id and email, personalization, then the zone columns it reads. */
export const SAMPLE_HEADER = [
  "id",
  "email",
  "first_name",
  "last_name",
  "timezone",
  "phone",
  "postal_code",
  "country",
  "latitude",
  "longitude",
] as const;

type Column = (typeof SAMPLE_HEADER)[number];
type ZoneColumns = Partial<Record<Exclude<Column, "id" | "email" | "first_name" | "last_name">, string>>;

const ZONES = [
  "America/New_York",
  "America/Chicago",
  "America/Denver",
  "America/Los_Angeles",
  "America/Anchorage",
  "Pacific/Honolulu",
  "America/Mexico_City",
  "America/Toronto",
  "America/Sao_Paulo",
  "Europe/London",
  "Europe/Paris",
  "Europe/Berlin",
  "Europe/Madrid",
  "Europe/Istanbul",
  "Africa/Lagos",
  "Africa/Johannesburg",
  "Asia/Dubai",
  "Asia/Kolkata",
  "Asia/Kathmandu",
  "Asia/Singapore",
  "Asia/Shanghai",
  "Asia/Tokyo",
  "Australia/Sydney",
  "Pacific/Auckland",
];

/**
 * Rows whose zone is read from their data (every FROM_DATA_EVERY-th row, in turn): the abbreviation people write for
 * New York, a New York phone number, a ZIP and a Canadian postal code with their country, Tokyo's and Sydney's
 * coordinates.
 */
const FROM_DATA: readonly ZoneColumns[] = [
  { timezone: "EST" },
  { phone: "+1 212 555 0100" },
  { postal_code: "10001", country: "US" },
  { postal_code: "M5V 2T6", country: "CA" },
  { latitude: "35.6762", longitude: "139.6503" },
  { latitude: "-33.8688", longitude: "151.2093" },
];
const FROM_DATA_EVERY = 50;

const FIRST = ["Ann", "Bob", "Chloé", "Dev", "Eun-ji", "Farid", "Grace", "Hiro", "Ines", "José", "Kofi", "Lena"];
const LAST = ["Smith", "Okafor", "Müller", "Tanaka", "García", "Singh", "Dubois", "Kim", "Silva", "Novak", "Haddad"];

export interface SampleRow {
  id: string;
  /** The first name, which the templates greet. */
  firstName: string;
  /** The zone columns given (one of them, or `timezone`). */
  zone: ZoneColumns;
}

/** Row `i` (0-based) of the list: its id, name and zone columns. */
export function sampleRow(i: number): SampleRow {
  const zone = (i + 1) % FROM_DATA_EVERY === 0 ? FROM_DATA[((i + 1) / FROM_DATA_EVERY - 1) % FROM_DATA.length] : null;
  return {
    id: `r${String(i + 1).padStart(4, "0")}`,
    firstName: FIRST[i % FIRST.length],
    zone: zone ?? { timezone: ZONES[i % ZONES.length] },
  };
}

/** The whole list as CSV: `rows` rows (no field needs quoting). */
export function sampleListCsv(rows: number): string {
  const lines: string[] = [SAMPLE_HEADER.join(",")];
  for (let i = 0; i < rows; i++) {
    const r = sampleRow(i);
    const last = LAST[(i * 7) % LAST.length];
    const values: Record<Column, string> = {
      id: r.id,
      email: `${r.id}@example.com`,
      first_name: r.firstName,
      last_name: last,
      timezone: "",
      phone: "",
      postal_code: "",
      country: "",
      latitude: "",
      longitude: "",
      ...r.zone,
    };
    lines.push(SAMPLE_HEADER.map((c) => values[c]).join(","));
  }
  return lines.join("\n") + "\n";
}
