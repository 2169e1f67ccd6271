/**
 * A Pinpoint campaign's treatments → sendtime's template, A/B variants and holdout (campaign.ts puts them together),
 * with a note for each template to create in SES and each treatment setting sendtime does not keep.
 */
import { createHash } from "crypto";
import { SES_NAME } from "../../../infra/core/plan/naming";
import { CampaignShapeError } from "./campaign-types";
import { variantKey } from "../recipients/audience";
import { LaunchSettings, Note, PinpointCampaign, TemplateConfiguration, Variant } from "./campaign-types";

/** The template (step 1), the variants (2–8: the campaign's own treatment, then AdditionalTreatments) and the holdout. */
export function treatmentsOf(
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
