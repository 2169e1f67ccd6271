/**
 * A Pinpoint campaign's Schedule → sendtime's send time (campaign.ts puts it together), with a note for each setting
 * that needs a step by hand: one instant, each recipient's own wall clock (IsLocalTime), or a daily, weekly or
 * monthly recurrence until EndTime; the campaign's Timezone offset as an IANA zone; its QuietTime as quiet hours.
 *
 * How Pinpoint's schedule is read (API reference, Schedule): StartTime is an ISO 8601 instant (or IMMEDIATE);
 * with IsLocalTime true, the wall-clock time of StartTime at the campaign's Timezone offset (`UTC-05`) is the time
 * every endpoint gets in its own zone, and endpoints without a zone get it at that offset; with IsLocalTime false,
 * everyone gets the one instant StartTime.
 */
import { recurringSends } from "../../../infra/core/plan/quotas";
import { CampaignShapeError } from "./campaign-types";
import { LaunchSettings, Note, PinpointSchedule, SendTime } from "./campaign-types";

/** IANA zones with the same offset all year for Pinpoint's fractional offsets (whole hours use Etc/GMT∓N). */
const FIXED_OFFSET_ZONES: Record<string, string> = {
  "+03:30": "Asia/Tehran",
  "+04:30": "Asia/Kabul",
  "+05:30": "Asia/Kolkata",
  "+05:45": "Asia/Kathmandu",
  "+06:30": "Asia/Yangon",
  "+08:45": "Australia/Eucla",
  "+09:30": "Australia/Darwin",
  "-09:30": "Pacific/Marquesas",
};
/** Offsets only zones with daylight saving time have: the zone, and the offset it changes to. */
const SEASONAL_OFFSET_ZONES: Record<string, [string, string]> = {
  "+10:30": ["Australia/Lord_Howe", "+11:00 in its summer"],
  "+12:45": ["Pacific/Chatham", "+13:45 in its summer"],
  "+13:45": ["Pacific/Chatham", "+12:45 in its winter"],
  "-02:30": ["America/St_Johns", "-03:30 in its winter"],
  "-03:30": ["America/St_Johns", "-02:30 in its summer"],
};

const DAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

const MINUTE = 60_000;
const pad = (n: number) => String(n).padStart(2, "0");

/** The send time, or undefined (with a note saying what to do) when sendtime has no campaign equivalent. */
export function sendTimeOf(s: PinpointSchedule, note: Note): SendTime | undefined {
  const frequency = s.Frequency ?? "ONCE";
  if (!supportedFrequency(frequency, s, note)) return undefined;
  if (s.StartTime === undefined) throw new CampaignShapeError("Schedule.StartTime is missing");
  const offset = offsetOf(s.Timezone);
  const zone = zoneForOffset(offset, s.Timezone, note);
  if (s.StartTime === "IMMEDIATE") {
    if (frequency !== "ONCE")
      throw new CampaignShapeError(
        `Schedule.StartTime IMMEDIATE with Frequency ${frequency}: a recurring campaign needs a start time`,
      );
    note(
      "Schedule.StartTime",
      "IMMEDIATE",
      `put the instant to send in ${note.flag.at} (ISO 8601 with Z); sends due before the fan-out ends follow ${note.flag.missed} (skip, or send-now)`,
    );
    return { kind: "instant", at: "<INSTANT>" };
  }
  const startMs = instantOf("Schedule.StartTime", s.StartTime);
  const clock = wallClockOf(new Date(startMs + offset.minutes * MINUTE));
  return frequency === "ONCE"
    ? oneTimeOf(s, startMs, clock, offset, zone, note)
    : recurringOf(s, frequency, clock, offset, zone, note);
}

/** False (with a note saying what to do instead) for frequencies sendtime campaigns do not have; throws on unknown ones. */
function supportedFrequency(frequency: string, s: PinpointSchedule, note: Note): boolean {
  if (frequency === "EVENT" || frequency === "IN_APP_EVENT") {
    const types = s.EventFilter?.Dimensions?.EventType?.Values ?? [];
    note(
      "Schedule.Frequency",
      `${frequency}${types.length ? ` (event types ${types.join(", ")})` : ""}`,
      `event-triggered sends are not campaigns in sendtime: use a journey (sendtime:journeys) triggered by an EventBridge event${types.length ? ` whose detail-type is ${types.map((t) => JSON.stringify(t)).join(" or ")}` : ""}, one step per message`,
    );
    return false;
  }
  if (frequency === "HOURLY") {
    note(
      "Schedule.Frequency",
      "HOURLY",
      `sendtime repeats at most daily (${note.flag.every} daily|weekdays|weekly|monthly): launch one daily campaign per hour you need, or use a journey`,
    );
    return false;
  }
  if (!["ONCE", "DAILY", "WEEKLY", "MONTHLY"].includes(frequency))
    throw new CampaignShapeError(
      `Schedule.Frequency "${frequency}": expected ONCE, HOURLY, DAILY, WEEKLY, MONTHLY, EVENT or IN_APP_EVENT`,
    );
  return true;
}

type Offset = { minutes: number; text: string };

/** The start time's wall clock at the campaign's offset: `local`, whose UTC fields it is, and those fields. */
interface WallClock {
  local: Date;
  date: string;
  hour: number;
  minute: number;
  /** "2026-12-01 09:00". */
  wall: string;
}

function wallClockOf(local: Date): WallClock {
  const date = local.toISOString().slice(0, 10);
  const [hour, minute] = [local.getUTCHours(), local.getUTCMinutes()];
  return { local, date, hour, minute, wall: `${date} ${pad(hour)}:${pad(minute)}` };
}

/** The westmost offset in use (UTC-12, Etc/GMT+12): a wall-clock time is reached there last, 12 hours after UTC. */
const LAST_OFFSET_MS = 12 * 3_600_000;

/**
 * A one-time campaign whose time has passed by `now` — everywhere, for a local time — gets a note: its command would
 * plan nothing (every send missed). A local time passed in some zones only is the launch's `--missed` business.
 */
export function passedNote(t: SendTime, now: number, note: Note): void {
  const at = new Date(now).toISOString().replace(".000Z", "Z");
  const instead = `the command plans nothing (every send's time has passed; launch-campaign says so and exits 1): give ${note.flag.date} a day to come to send it, or leave it`;
  if (t.kind === "local") {
    const wall = Date.UTC(+t.date.slice(0, 4), +t.date.slice(5, 7) - 1, +t.date.slice(8, 10), t.hour, t.minute);
    if (now > wall + LAST_OFFSET_MS)
      note(
        "Schedule.StartTime",
        `${t.date} ${pad(t.hour)}:${pad(t.minute)} has passed in every zone (now ${at})`,
        instead,
      );
  } else if (t.kind === "instant" && now > Date.parse(t.at)) {
    note("Schedule.StartTime", `${t.at} has passed (now ${at})`, instead);
  }
}

/** A one-time campaign: each recipient's own wall-clock time (IsLocalTime), or one instant for everyone. */
function oneTimeOf(
  s: PinpointSchedule,
  startMs: number,
  clock: WallClock,
  offset: Offset,
  zone: string,
  note: Note,
): SendTime {
  const { date, hour, minute, wall } = clock;
  if (s.IsLocalTime) {
    note(
      "Schedule.IsLocalTime",
      `true (${wall} at ${offset.text})`,
      `each recipient gets ${pad(hour)}:${pad(minute)} on ${date} in their own zone, those without a zone at ${note.flag.defaultTimezone} ${zone}; a send whose local time has passed at launch follows ${note.flag.missed} (default skip)`,
    );
    return { kind: "local", date, hour, minute, defaultTimezone: zone };
  }
  const at = new Date(startMs).toISOString().replace(".000Z", "Z");
  note(
    "Schedule.IsLocalTime",
    "false",
    `everyone gets the one instant ${at}, as in Pinpoint; for each recipient's own ${pad(hour)}:${pad(minute)} use ${note.flag.date} ${date} ${note.flag.hour} ${hour} ${note.flag.minute} ${minute} instead`,
  );
  return { kind: "instant", at };
}

/** A daily, weekly or monthly campaign: `--every` at the start time's wall clock, until the last date before EndTime. */
function recurringOf(
  s: PinpointSchedule,
  frequency: string,
  clock: WallClock,
  offset: Offset,
  zone: string,
  note: Note,
): SendTime {
  const { local, date, hour, minute, wall } = clock;
  const every =
    frequency === "DAILY"
      ? "daily"
      : frequency === "WEEKLY"
        ? `weekly:${DAY_NAMES[local.getUTCDay()]}`
        : `monthly:${local.getUTCDate()}`;
  if (frequency === "MONTHLY" && local.getUTCDate() > 28)
    note(
      "Schedule.StartTime",
      `day ${local.getUTCDate()} of the month`,
      `${note.flag.every} ${every} sends nothing in months without day ${local.getUTCDate()}`,
    );
  note("Schedule.StartTime", wall, `recurring sends start when you launch: launch on ${date}, not before`);
  if (!s.IsLocalTime)
    note(
      "Schedule.IsLocalTime",
      "false",
      `recurring sends are at ${pad(hour)}:${pad(minute)} in each recipient's zone; to send at one instant to everyone as Pinpoint did, empty the timezone column so every row uses ${note.flag.defaultTimezone} ${zone}`,
    );
  return {
    kind: "recurring",
    every,
    until: untilOf(s.EndTime, offset.minutes, { date, hour, minute }, note),
    hour,
    minute,
    defaultTimezone: zone,
  };
}

/**
 * The last local date with a send before EndTime (the launcher's end date includes its whole day). An EndTime before
 * the first send is refused (nothing would be sent); one past the launcher's limit on recurring sends is noted.
 */
function untilOf(
  endTime: string | undefined,
  offsetMinutes: number,
  first: { date: string; hour: number; minute: number },
  note: Note,
): string {
  if (endTime === undefined) {
    note("Schedule.EndTime", "missing", `${note.flag.until} is required for recurring sends: put the last date in it`);
    return "<YYYY-MM-DD>";
  }
  const end = new Date(instantOf("Schedule.EndTime", endTime) + offsetMinutes * MINUTE);
  const endMinuteOfDay =
    end.getUTCHours() * 60 + end.getUTCMinutes() + (end.getUTCSeconds() || end.getUTCMilliseconds() ? 1 : 0);
  const last = endMinuteOfDay > first.hour * 60 + first.minute ? end : new Date(end.getTime() - 86_400_000);
  const until = last.toISOString().slice(0, 10);
  if (until < first.date)
    throw new CampaignShapeError(
      `Schedule.EndTime "${endTime}" is before the first send (${first.date} ${pad(first.hour)}:${pad(first.minute)}): nothing to send`,
    );
  const limit = new Date(Date.parse(first.date) + recurringSends.maxYears * 365.25 * 86_400_000)
    .toISOString()
    .slice(0, 10);
  if (until > limit)
    note(
      "Schedule.EndTime",
      endTime,
      `${note.flag.until} ${until} is more than ${recurringSends.maxYears} years after the start, which the launcher refuses (each schedule would hold quota until then): give an earlier date and launch again later`,
    );
  return until;
}

function instantOf(key: string, value: string): number {
  const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms))
    throw new CampaignShapeError(
      `${key} "${value}": expected an ISO 8601 instant with Z or an offset (2026-12-01T14:00:00Z)`,
    );
  return ms;
}

/** Pinpoint's Timezone (`UTC`, `UTC+05:30`, `UTC-05`) as minutes east of UTC; missing means UTC. */
function offsetOf(timezone: string | undefined): Offset {
  if (timezone === undefined || timezone === "UTC") return { minutes: 0, text: "UTC" };
  const m = /^UTC([+-])(\d\d)(?::(\d\d))?$/.exec(timezone);
  if (!m || Number(m[2]) > 14 || !["00", "15", "30", "45", undefined].includes(m[3]))
    throw new CampaignShapeError(
      `Schedule.Timezone "${timezone}": expected UTC, UTC+HH or UTC±HH:MM as Pinpoint writes it (UTC-05, UTC+05:30)`,
    );
  return { minutes: (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)), text: timezone };
}

/** An IANA zone for a fixed offset: Etc/GMT∓N for whole hours (the sign is inverted in those names), else the table. */
export function zoneForOffset(offset: { minutes: number; text: string }, raw: string | undefined, note: Note): string {
  if (offset.minutes === 0) return "UTC";
  if (offset.minutes % 60 === 0) return `Etc/GMT${offset.minutes > 0 ? "-" : "+"}${Math.abs(offset.minutes / 60)}`;
  const key = offset.text.slice(3);
  if (FIXED_OFFSET_ZONES[key]) return FIXED_OFFSET_ZONES[key];
  const seasonal = SEASONAL_OFFSET_ZONES[key];
  if (seasonal) {
    note(
      "Schedule.Timezone",
      raw ?? "",
      `no IANA zone stays at ${offset.text} all year: ${seasonal[0]} is used for recipients without a zone (${seasonal[1]}); choose another ${note.flag.defaultTimezone} if that is wrong`,
    );
    return seasonal[0];
  }
  throw new CampaignShapeError(`Schedule.Timezone "${raw}": no IANA zone has the offset ${offset.text}`);
}

/**
 * Pinpoint's quiet time ends at End inclusive ("earlier than or equal to End"), sendtime's is exclusive: the end
 * moves one minute later. Pinpoint's campaign "doesn't send" in quiet time: the policy is skip.
 */
export function quietHoursOf(q: PinpointSchedule["QuietTime"], note: Note): LaunchSettings["quietHours"] {
  if (!q || (q.Start === undefined && q.End === undefined)) return undefined;
  const minutes = (key: string, v: string | undefined) => {
    const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(v ?? "");
    if (!m) throw new CampaignShapeError(`Schedule.QuietTime.${key} "${v ?? ""}": expected HH:MM, 24-hour`);
    return Number(m[1]) * 60 + Number(m[2]);
  };
  const start = minutes("Start", q.Start);
  const end = (minutes("End", q.End) + 1) % 1440;
  if (start === end)
    throw new CampaignShapeError(
      `Schedule.QuietTime ${q.Start}-${q.End} covers the whole day: the campaign could send nothing`,
    );
  const hhmm = (m: number) => `${pad(Math.floor(m / 60))}:${pad(m % 60)}`;
  note(
    "Schedule.QuietTime",
    `${q.Start}-${q.End}`,
    `${note.flag.quietHours} ${hhmm(start)}-${hhmm(end)} ${note.flag.quiet} skip: the same minutes (Pinpoint's End is inclusive, sendtime's exclusive) and no send in them; unlike Pinpoint, it also applies to recipients without a zone (at ${note.flag.defaultTimezone}); ${note.flag.quiet} delay would send when quiet time ends instead`,
  );
  return { start: hhmm(start), end: hhmm(end), policy: "skip" };
}
