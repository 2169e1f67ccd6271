/**
 * A Pinpoint campaign (what `aws pinpoint get-campaign` prints: `{"CampaignResponse": {...}}`, or the bare object)
 * → the arguments of a sendtime launch, and one note for every setting that has no equivalent or needs a step by
 * hand. Pure: no I/O. The launcher's flag names are the CLI's business: this module returns settings by meaning
 * (`LaunchSettings`); scripts/import-pinpoint.ts turns them into a command line.
 *
 * How Pinpoint's schedule is read (API reference, Schedule): StartTime is an ISO 8601 instant (or IMMEDIATE);
 * with IsLocalTime true, the wall-clock time of StartTime at the campaign's Timezone offset (`UTC-05`) is the time
 * every endpoint gets in its own zone, and endpoints without a zone get it at that offset; with IsLocalTime false,
 * everyone gets the one instant StartTime.
 */
import { createHash } from "crypto";
import { SES_NAME } from "../../../infra/core/plan/naming";
import { recurringSends } from "../../../infra/core/plan/quotas";
import { CampaignShapeError } from "../../../infra/core/errors";
import { variantKey } from "../recipients/audience";

/** The CampaignResponse fields read; the rest are reported when they carry a setting. */
export interface PinpointCampaign {
  Id?: string;
  Name?: string;
  SegmentId?: string;
  SegmentVersion?: number;
  HoldoutPercent?: number;
  TreatmentName?: string;
  TemplateConfiguration?: TemplateConfiguration;
  MessageConfiguration?: Record<string, unknown>;
  AdditionalTreatments?: PinpointTreatment[];
  Schedule?: PinpointSchedule;
  Limits?: { Daily?: number; Total?: number; MessagesPerSecond?: number; Session?: number; MaximumDuration?: number };
  Hook?: Record<string, unknown>;
  CustomDeliveryConfiguration?: Record<string, unknown>;
  Priority?: number;
  [key: string]: unknown;
}
interface TemplateConfiguration {
  EmailTemplate?: { Name?: string; Version?: string };
  [channel: string]: unknown;
}
export interface PinpointTreatment {
  Id?: string;
  SizePercent?: number;
  TreatmentName?: string;
  TemplateConfiguration?: TemplateConfiguration;
  MessageConfiguration?: Record<string, unknown>;
  Schedule?: PinpointSchedule;
}
export interface PinpointSchedule {
  StartTime?: string;
  EndTime?: string;
  IsLocalTime?: boolean;
  Timezone?: string;
  Frequency?: string;
  QuietTime?: { Start?: string; End?: string };
  EventFilter?: { FilterType?: string; Dimensions?: { EventType?: { DimensionType?: string; Values?: string[] } } };
}

/** When the sends happen, in sendtime's terms. */
export type SendTime =
  | { kind: "local"; date: string; hour: number; minute: number; defaultTimezone: string }
  | { kind: "instant"; at: string }
  | { kind: "recurring"; every: string; until: string; hour: number; minute: number; defaultTimezone: string };

export interface Variant {
  name: string;
  percent: number;
  template: string;
}

export interface LaunchSettings {
  campaignId: string;
  template: string;
  sendTime: SendTime;
  quietHours?: { start: string; end: string; policy: "skip" };
  variants: Variant[];
  holdoutPercent?: number;
  tps?: number;
}

/** A setting that needs attention: what Pinpoint had, and what to do in sendtime instead. */
export interface MappingNote {
  setting: string;
  value: string;
  instead: string;
}

export interface CampaignMapping {
  /** Undefined when the campaign cannot be a sendtime campaign (event-triggered: a journey). */
  launch?: LaunchSettings;
  notes: MappingNote[];
}

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

/** The launcher's flag names, given by the CLI (the core knows meanings, not flags): notes name them. */
export interface FlagNames {
  campaignId: string;
  date: string;
  hour: string;
  minute: string;
  at: string;
  every: string;
  until: string;
  defaultTimezone: string;
  missed: string;
  quietHours: string;
  quiet: string;
}

type Note = ((setting: string, value: string, instead: string) => void) & { flag: FlagNames };

export function mapCampaign(
  input: unknown,
  o: { campaignId?: string; maxIdLength: number; flags: FlagNames },
): CampaignMapping {
  const c = campaignOf(input);
  const notes: MappingNote[] = [];
  const note: Note = Object.assign(
    (setting: string, value: string, instead: string) => void notes.push({ setting, value, instead }),
    {
      flag: o.flags,
    },
  );
  const campaignId = o.campaignId ?? campaignIdFrom(c, o.maxIdLength, note);
  audienceNotes(c, note);
  const sendTime = sendTimeOf(c.Schedule ?? {}, note);
  const treatments = treatmentsOf(c, campaignId, note);
  const quietHours = quietHoursOf(c.Schedule?.QuietTime, note);
  const tps = limitsOf(c.Limits ?? {}, note);
  if (!sendTime) return { notes };
  return { launch: { campaignId, sendTime, ...treatments, quietHours, tps }, notes };
}

function campaignOf(input: unknown): PinpointCampaign {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  const c = isObject(input) && isObject(input.CampaignResponse) ? input.CampaignResponse : input;
  if (!isObject(c) || (c.Schedule === undefined && c.Name === undefined && c.Id === undefined))
    throw new CampaignShapeError(
      'not a Pinpoint campaign: expected {"CampaignResponse": {...}} as aws pinpoint get-campaign prints it',
    );
  if (c.Schedule !== undefined && !isObject(c.Schedule)) throw new CampaignShapeError("Schedule: must be an object");
  return c as PinpointCampaign;
}

/** The campaign's Name in sendtime's id alphabet, lower case (`Spring Sale!` → `spring-sale`), else its Id. */
function campaignIdFrom(c: PinpointCampaign, max: number, note: Note): string {
  const fromName = (c.Name ?? "")
    .toLowerCase()
    .replace(/[^0-9a-z_.-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, max);
  const id = fromName || (c.Id ?? "").replace(/[^0-9A-Za-z_.-]/g, "").slice(0, max) || "pinpoint-campaign";
  if (id !== c.Name)
    note(
      "Name",
      JSON.stringify(c.Name ?? ""),
      `campaign id "${id}" (ids are ${max} characters at most of 0-9 a-z A-Z - _ .); give ${note.flag.campaignId} to choose another`,
    );
  return id;
}

/** Who receives it and through what: the settings that stay behind in Pinpoint. */
function audienceNotes(c: PinpointCampaign, note: Note) {
  if (c.SegmentId)
    note(
      "SegmentId",
      `${c.SegmentId}${c.SegmentVersion !== undefined ? ` version ${c.SegmentVersion}` : ""}`,
      `sendtime sends to the CSV you give it: export the segment's endpoints (aws pinpoint create-export-job --export-job-request SegmentId=${c.SegmentId},S3UrlPrefix=…,RoleArn=…) and import them; filters are applied by the export, not by sendtime`,
    );
  if (c.Hook && Object.keys(c.Hook).length)
    note("Hook", JSON.stringify(c.Hook), "no campaign hooks: filter or personalise the recipient CSV before launching");
  if (c.CustomDeliveryConfiguration)
    note("CustomDeliveryConfiguration", "set", "no custom channels: sendtime sends email through SES only");
  const other = [
    ...Object.keys(c.MessageConfiguration ?? {}).filter((k) => k !== "EmailMessage"),
    ...Object.keys(c.TemplateConfiguration ?? {}).filter((k) => k !== "EmailTemplate"),
  ];
  if (other.length)
    note(
      other
        .map((k) => (k.endsWith("Template") ? `TemplateConfiguration.${k}` : `MessageConfiguration.${k}`))
        .join(", "),
      "set",
      "sendtime sends email only: SMS, voice and push stay with AWS End User Messaging",
    );
  const from = (c.MessageConfiguration?.EmailMessage as { FromAddress?: string } | undefined)?.FromAddress;
  if (from)
    note(
      "MessageConfiguration.EmailMessage.FromAddress",
      from,
      "every send comes from the stack's fromAddress (pulumi config sendtime:fromAddress)",
    );
  if (c.Priority !== undefined)
    note("Priority", String(c.Priority), "no priorities between campaigns: sendtime sends every campaign you launch");
  if (c.IsPaused)
    note("IsPaused", "true", "the campaign is paused in Pinpoint; a sendtime campaign starts when you launch it");
}

const MINUTE = 60_000;
const pad = (n: number) => String(n).padStart(2, "0");

/** The send time, or undefined (with a note saying what to do) when sendtime has no campaign equivalent. */
function sendTimeOf(s: PinpointSchedule, note: Note): SendTime | undefined {
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
  const local = new Date(startMs + offset.minutes * MINUTE); // its UTC fields are the wall clock at the offset
  return frequency === "ONCE"
    ? oneTimeOf(s, startMs, local, offset, zone, note)
    : recurringOf(s, frequency, local, offset, zone, note);
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

/** A one-time campaign: each recipient's own wall-clock time (IsLocalTime), or one instant for everyone. */
function oneTimeOf(
  s: PinpointSchedule,
  startMs: number,
  local: Date,
  offset: Offset,
  zone: string,
  note: Note,
): SendTime {
  const date = local.toISOString().slice(0, 10);
  const [hour, minute] = [local.getUTCHours(), local.getUTCMinutes()];
  const wall = `${date} ${pad(hour)}:${pad(minute)}`;
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
  local: Date,
  offset: Offset,
  zone: string,
  note: Note,
): SendTime {
  const date = local.toISOString().slice(0, 10);
  const [hour, minute] = [local.getUTCHours(), local.getUTCMinutes()];
  const wall = `${date} ${pad(hour)}:${pad(minute)}`;
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

/** The template (step 1), the variants (2–8: the campaign's own treatment, then AdditionalTreatments) and the holdout. */
function treatmentsOf(
  c: PinpointCampaign,
  campaignId: string,
  note: Note,
): Pick<LaunchSettings, "template" | "variants" | "holdoutPercent"> {
  const holdout = percentOf("HoldoutPercent", c.HoldoutPercent ?? 0);
  const fallback = sesName(campaignId); // a campaign id may hold "."
  const mainTemplate = templateOf(c.TemplateConfiguration, c.MessageConfiguration, fallback, "", note) ?? fallback;
  const extra = c.AdditionalTreatments ?? [];
  if (!Array.isArray(extra)) throw new CampaignShapeError("AdditionalTreatments: must be a list");
  const holdoutPercent = holdout > 0 ? holdout : undefined;
  if (extra.length === 0) return { template: mainTemplate, variants: [], holdoutPercent };

  const nameOf = variantNamer();
  const shares = extra.map((t, i) => percentOf(`AdditionalTreatments[${i}].SizePercent`, t.SizePercent ?? NaN));
  const mainShare = 100 - holdout - shares.reduce((a, b) => a + b, 0);
  if (mainShare < 0)
    throw new CampaignShapeError(
      `HoldoutPercent and AdditionalTreatments[].SizePercent add up to ${100 - mainShare}, above 100`,
    );
  const variants: Variant[] = [{ name: nameOf(c.TreatmentName, "A"), percent: mainShare, template: mainTemplate }];
  extra.forEach((t, i) => {
    const name = nameOf(t.TreatmentName, String.fromCharCode(66 + i)); // B, C, …
    variants.push({
      name,
      percent: shares[i],
      template: treatmentTemplate(c, t, i, name, campaignId, mainTemplate, note),
    });
  });
  note(
    "AdditionalTreatments",
    variants.map((v) => `${v.name} ${v.percent}%`).join(", ") + (holdout ? `, holdout ${holdout}%` : ""),
    "the same shares, but not the same people: sendtime assigns each recipient by a hash of campaign id and recipient id",
  );
  const kept = variants.filter((v) => v.percent > 0);
  if (kept.length < variants.length)
    note(
      "SizePercent",
      "0",
      `treatments with no share are left out: ${variants
        .filter((v) => v.percent === 0)
        .map((v) => v.name)
        .join(", ")}`,
    );
  if (kept.length === 1) return { template: kept[0].template, variants: [], holdoutPercent };
  if (kept.length > 8) throw new CampaignShapeError(`${kept.length} treatments: sendtime takes at most 8 variants`);
  return { template: mainTemplate, variants: kept, holdoutPercent };
}

/**
 * Variant names from treatment names: SES tag characters, at most 32, unique in more than case (`-2`, `-3`, … on a
 * repeat: the launcher refuses names that differ only in case, audience.ts variantKey).
 */
function variantNamer(): (raw: string | undefined, fallback: string) => string {
  const names = new Set<string>();
  return (raw, fallback) => {
    const base =
      (raw ?? "")
        .replace(/[^A-Za-z0-9_-]+/g, "-")
        .replace(/^-+|-+$/g, "")
        .slice(0, 32) || fallback;
    let name = base;
    for (let n = 2; names.has(variantKey(name)); n++) name = `${base.slice(0, 30)}-${n}`;
    names.add(variantKey(name));
    return name;
  };
}

/** AdditionalTreatments[i]'s template, or the campaign's (noted); a schedule of its own is noted, not kept. */
function treatmentTemplate(
  c: PinpointCampaign,
  t: NonNullable<PinpointCampaign["AdditionalTreatments"]>[number],
  i: number,
  name: string,
  campaignId: string,
  mainTemplate: string,
  note: Note,
): string {
  const own = templateOf(
    t.TemplateConfiguration,
    t.MessageConfiguration,
    sesName(`${campaignId}-${name}`),
    `AdditionalTreatments[${i}].`,
    note,
  );
  if (own === undefined)
    note(
      `AdditionalTreatments[${i}]`,
      name,
      `no email content of its own: it gets the campaign's template ${mainTemplate}`,
    );
  if (t.Schedule && JSON.stringify(t.Schedule) !== JSON.stringify(c.Schedule))
    note(
      `AdditionalTreatments[${i}].Schedule`,
      JSON.stringify(t.Schedule),
      "sendtime sends every variant at the campaign's time: launch this treatment as a campaign of its own to keep its schedule",
    );
  return own ?? mainTemplate;
}

function percentOf(key: string, v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > 100)
    throw new CampaignShapeError(`${key} ${v}: expected a whole number from 0 to 100`);
  return v;
}

/**
 * The SES template to send: the Pinpoint email template's name (the template itself must be created in SES), or
 * `fallback` for a message written into the campaign. Undefined when there is no email content at all.
 */
function templateOf(
  tc: TemplateConfiguration | undefined,
  mc: Record<string, unknown> | undefined,
  fallback: string,
  where: string,
  note: Note,
) {
  const rewrite = "write {{X}} for {{Attributes.X}} and {{User.UserAttributes.X}} (the import's column names)";
  const t = tc?.EmailTemplate;
  if (t?.Name) {
    const name = sesName(t.Name);
    note(
      `${where}TemplateConfiguration.EmailTemplate`,
      `${t.Name}${t.Version ? ` version ${t.Version}` : ""}`,
      `create the SES template ${name} (aws sesv2 create-email-template) from ${t.Version ? `version ${t.Version} of ` : ""}the Pinpoint template; ${rewrite}`,
    );
    return name;
  }
  if (mc?.EmailMessage) {
    note(
      `${where}MessageConfiguration.EmailMessage`,
      "set",
      `sendtime sends SES templates only: create the template ${fallback} from its Title (subject), HtmlBody and Body; ${rewrite}`,
    );
    return fallback;
  }
  return undefined;
}

/**
 * A name SES takes (`[A-Za-z0-9_-]{1,64}`): `name` itself when it is one; else its SES characters, cut to 55, then
 * `-` and the first 8 hex digits of its sha256. Cutting alone made distinct names one (Pinpoint's reach 128
 * characters): two treatments would have sent one template.
 */
function sesName(name: string): string {
  if (SES_NAME.test(name)) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
  return `${name.replace(/[^A-Za-z0-9_-]+/g, "-").slice(0, 64 - 1 - hash.length)}-${hash}`;
}

/**
 * Pinpoint's quiet time ends at End inclusive ("earlier than or equal to End"), sendtime's is exclusive: the end
 * moves one minute later. Pinpoint's campaign "doesn't send" in quiet time: the policy is skip.
 */
function quietHoursOf(q: PinpointSchedule["QuietTime"], note: Note): LaunchSettings["quietHours"] {
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

/** MessagesPerSecond is the rate the window must hold; the per-endpoint caps have no sendtime equivalent. */
function limitsOf(l: NonNullable<PinpointCampaign["Limits"]>, note: Note): number | undefined {
  if (l.Daily)
    note(
      "Limits.Daily",
      String(l.Daily),
      "no per-recipient daily cap: sendtime sends each recipient once per step; leave out of the CSV whoever had enough mail today",
    );
  if (l.Total)
    note(
      "Limits.Total",
      String(l.Total),
      `no per-recipient total cap: a recurring campaign sends once per occurrence, so choose ${note.flag.until} (or the steps) to stay within it`,
    );
  if (l.Session) note("Limits.Session", String(l.Session), "no sessions: email is not sent per app session");
  if (l.MaximumDuration)
    note(
      "Limits.MaximumDuration",
      `${l.MaximumDuration} s`,
      "how long a send is retried is the stack's sendtime:maxEventAgeSeconds (60–86,400), for every campaign",
    );
  if (l.MessagesPerSecond === undefined) return undefined;
  if (!(l.MessagesPerSecond > 0))
    throw new CampaignShapeError(`Limits.MessagesPerSecond ${l.MessagesPerSecond}: expected a number above 0`);
  return l.MessagesPerSecond;
}
