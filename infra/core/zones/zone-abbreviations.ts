/**
 * What people mean by a zone written as an abbreviation or a POSIX legacy name: the one table the planner reads such
 * values through (zone-names.ts readZone), so that none is ever taken as a fixed offset without a word. Several of
 * these are IANA names (EST, MST, HST, EST5EDT, CST6CDT, MST7MDT, PST8PDT, CET, EET, MET, WET), but IANA keeps them
 * for compatibility and EST, MST and HST are fixed offsets: someone writing "EST" in July means New York's 9 AM
 * (EDT), not UTC−5 all year. Each entry is a zone of a place, with its daylight saving.
 *
 * Chosen by hand from the abbreviations tzdata itself writes for these zones (`zdump -v`), and kept small: an
 * abbreviation that means several places is listed with every candidate and refused unless `--zone-alias` chooses.
 * Windows zone names come from CLDR instead (windows-zones.ts); `GMT+N`/`UTC+N` are read by zone-names.ts.
 * Keys are upper case; values are read case-insensitively.
 */
export const ZONE_ABBREVIATIONS: Readonly<Record<string, string | readonly string[]>> = {
  // North America
  EST: "America/New_York",
  EDT: "America/New_York",
  ET: "America/New_York",
  EST5EDT: "America/New_York",
  CST: ["America/Chicago", "Asia/Shanghai", "America/Havana"],
  CDT: ["America/Chicago", "America/Havana"],
  CT: "America/Chicago",
  CST6CDT: "America/Chicago",
  // Arizona keeps MST all year; Denver does not.
  MST: ["America/Denver", "America/Phoenix"],
  MDT: "America/Denver",
  MST7MDT: "America/Denver",
  PST: "America/Los_Angeles",
  PDT: "America/Los_Angeles",
  PT: "America/Los_Angeles",
  PST8PDT: "America/Los_Angeles",
  AKST: "America/Anchorage",
  AKDT: "America/Anchorage",
  HST: "Pacific/Honolulu",
  HDT: "America/Adak",
  AST: ["America/Halifax", "America/Puerto_Rico", "Asia/Riyadh"],
  ADT: "America/Halifax",
  NST: "America/St_Johns",
  NDT: "America/St_Johns",
  BRT: "America/Sao_Paulo",
  ART: "America/Argentina/Buenos_Aires",
  // Europe and Africa
  WET: "Europe/Lisbon",
  WEST: "Europe/Lisbon",
  BST: ["Europe/London", "Asia/Dhaka"],
  IST: ["Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem"],
  CET: "Europe/Brussels",
  CEST: "Europe/Brussels",
  MET: "Europe/Brussels",
  MEST: "Europe/Brussels",
  EET: "Europe/Athens",
  EEST: "Europe/Athens",
  MSK: "Europe/Moscow",
  WAT: "Africa/Lagos",
  CAT: "Africa/Maputo",
  EAT: "Africa/Nairobi",
  SAST: "Africa/Johannesburg",
  // Asia and the Pacific
  IDT: "Asia/Jerusalem",
  PKT: "Asia/Karachi",
  WIB: "Asia/Jakarta",
  SGT: "Asia/Singapore",
  HKT: "Asia/Hong_Kong",
  JST: "Asia/Tokyo",
  KST: "Asia/Seoul",
  AWST: "Australia/Perth",
  // Queensland keeps AEST all year, and the Northern Territory ACST; New South Wales and South Australia do not.
  AEST: ["Australia/Sydney", "Australia/Brisbane"],
  AEDT: "Australia/Sydney",
  ACST: ["Australia/Adelaide", "Australia/Darwin"],
  ACDT: "Australia/Adelaide",
  NZST: "Pacific/Auckland",
  NZDT: "Pacific/Auckland",
};
