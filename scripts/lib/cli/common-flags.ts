/**
 * The flags many commands take, each declared once with its one meaning (tests/scripts/flag-meanings.test.ts): a
 * command spreads them and adds what is its own in `note`, never a second meaning.
 */
import { campaignIdProblem, SES_NAME } from "../../../infra/core/plan/naming";
import { VARIANT_PLACEHOLDER } from "../recipients/audience";
import { CHANNELS } from "../../../infra/core/send/sms-input";
import { LegalHoursPreset } from "../../../infra/core/sms/legal-hours";
import { checked, choice, instant, int, listOf, path as pathParser } from "./parsers";

/** --max-segments' default: a text of up to 3 message parts (docs/sms.md). */
export const DEFAULT_MAX_SEGMENTS = 3;
/** --legal-hours' presets, in the one order a list of them is given back. */
export const LEGAL_HOURS_PRESET_NAMES: readonly LegalHoursPreset[] = ["us", "ca"];

/** `campaign-<id>` must be a valid schedule group name. */
export const CAMPAIGN_ID = checked("campaign-id", "spring", campaignIdProblem, { quote: false });

/** An SES template name; `{variant}` is checked once the variants are known (checkTemplates). */
export const TEMPLATE_NAME = checked("template-name", "welcome", (raw) =>
  SES_NAME.test(raw.split(VARIANT_PLACEHOLDER).join("v"))
    ? undefined
    : "an SES template name, 1–64 of A-Z a-z 0-9 _ - (may hold {variant})",
);

export const CAMPAIGN_FLAG = {
  campaign: {
    type: "string",
    value: "ID",
    parse: CAMPAIGN_ID,
    help: "the campaign id (its schedule group is campaign-<ID>)",
  },
} as const;

/** --campaign with this command's note. */
export function campaignFlag<N extends string>(note: N) {
  return { campaign: { ...CAMPAIGN_FLAG.campaign, note } } as const;
}

/** --json with this command's note (the shape, or what is printed). */
export function jsonFlag<N extends string | undefined = undefined>(note?: N, group?: string) {
  return {
    json: {
      type: "boolean",
      help: "the report as JSON on stdout",
      ...(note === undefined ? {} : { note: note as N }),
      ...(group === undefined ? {} : { group }),
    },
  } as const;
}

/** --dry-run with what this command does instead (its note). */
export function dryRunFlag<N extends string>(note: N, group?: string) {
  return {
    "dry-run": {
      type: "boolean",
      help: "change nothing in AWS",
      note,
      ...(group === undefined ? {} : { group }),
    },
  } as const;
}

/** --now with what this command takes it for (its note). */
export function nowFlag<N extends string>(note: N, group?: string) {
  return {
    now: {
      type: "string",
      value: "INSTANT",
      parse: instant(),
      help: "the time taken as now, ISO 8601 with Z or an offset",
      note,
      defaultHelp: "now",
      ...(group === undefined ? {} : { group }),
    },
  } as const;
}

/** Flags whose tables spread these and add their note, group, `with`. */
export const RECIPIENTS = {
  type: "string",
  value: "FILE",
  path: true,
  parse: pathParser(),
  help: "the recipient CSV",
} as const;

export const TEMPLATE = { type: "string", value: "NAME", parse: TEMPLATE_NAME, help: "the SES template" } as const;

export const TEMPLATES = {
  type: "string",
  value: "DIR|none",
  path: true,
  words: ["none"],
  help: "the templates folder (default templates/ when it exists); none: not checked",
} as const;

/** --out: checked where it is written (an empty path is refused there, naming what the folder is for). */
export const OUT = { type: "string", value: "DIR", path: true, help: "the output folder" } as const;

/** --at: one instant (launch-campaign, size-window, reschedule). */
export const AT = {
  type: "string",
  value: "INSTANT",
  parse: instant(),
  help: "one instant, ISO 8601 with Z or an offset",
} as const;

/** --bulk (launch-campaign; size-window sizes as it would). */
export const BULK_HELP = "one SendBulkEmail schedule for up to 50 recipients of a step sharing instant and variant";

/** The group of the text-message (SMS) flags in a command's help. */
export const SMS_GROUP = "Text messages (SMS)";

/**
 * The flags of a step's channel and its texts (docs/sms.md, "Launching texts"), declared once: the launcher takes
 * them, and a command that plans texts (size-window, enrol) spreads the same ones. In a table that has the flags named
 * by `with`, the help shows each beside that flag (--help is at most 50 lines); elsewhere in the group SMS_GROUP.
 */
export const SMS_FLAGS = {
  channel: {
    type: "string",
    value: "email|sms",
    parse: choice(CHANNELS),
    help: "the first step's channel (a later step's: --step +1d:sms:TEMPLATE)",
    default: "email",
    group: SMS_GROUP,
    with: "step",
  },
  "max-segments": {
    type: "string",
    value: "N",
    parse: int(1, 10),
    help: "the most message parts a text may take (a template or row above it is refused)",
    default: DEFAULT_MAX_SEGMENTS,
    group: SMS_GROUP,
    with: "template",
  },
  "legal-hours": {
    type: "string",
    value: "us|ca|none",
    parse: listOf(LEGAL_HOURS_PRESET_NAMES),
    help: "send texts only inside these presets' legal hours (us,ca: both), per recipient (docs/sms.md)",
    defaultHelp: "none",
    group: SMS_GROUP,
    with: "quiet-hours",
  },
  "legal-hours-miss": {
    type: "string",
    value: "delay|skip",
    parse: choice(["delay", "skip"] as const),
    help: "a text planned outside legal hours: moved to the next legal instant, or skipped",
    default: "delay",
    group: SMS_GROUP,
    with: "quiet",
  },
} as const;
