/**
 * The flags many commands take, each declared once with its one meaning (tests/scripts/flag-meanings.test.ts): a
 * command spreads them and adds what is its own in `note`, never a second meaning.
 */
import { campaignIdProblem, SES_NAME } from "../../../infra/core/plan/naming";
import { VARIANT_PLACEHOLDER } from "../recipients/audience";
import { checked, instant } from "./parsers";

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
