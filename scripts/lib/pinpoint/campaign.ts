/**
 * A Pinpoint campaign (what `aws pinpoint get-campaign` prints: `{"CampaignResponse": {...}}`, or the bare object)
 * → the arguments of a sendtime launch, and one note for every setting that has no equivalent or needs a step by
 * hand. Pure: no I/O. The launcher's flag names are the CLI's business: this module returns settings by meaning
 * (`LaunchSettings`); scripts/import-pinpoint.ts turns them into a command line.
 *
 * The schedule is read by campaign-schedule.ts, the treatments by campaign-treatments.ts; the shapes are
 * campaign-types.ts's.
 */
import { CampaignShapeError } from "./campaign-types";
import { CampaignMapping, FlagNames, MappingNote, Note, PinpointCampaign } from "./campaign-types";
import { passedNote, quietHoursOf, sendTimeOf } from "./campaign-schedule";
import { treatmentsOf } from "./campaign-treatments";

export function mapCampaign(
  input: unknown,
  o: { campaignId?: string; maxIdLength: number; flags: FlagNames; now?: number },
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
  if (sendTime && o.now !== undefined) passedNote(sendTime, o.now, note);
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
