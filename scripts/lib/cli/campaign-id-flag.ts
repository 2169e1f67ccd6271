/** The --campaign flag of the commands that operate a launched campaign. */
import { campaignIdProblem } from "../../../infra/core/plan/naming";
import { UsageError } from "../../../infra/core/errors";

/** The --campaign flag, checked: `campaign-<id>` must be a valid group name. */
export function requireCampaign(campaign: string | undefined): string {
  if (campaign === undefined) throw new UsageError("--campaign is required (see --help)");
  const problem = campaignIdProblem(campaign);
  if (problem) throw new UsageError(`--campaign: ${problem}`);
  return campaign;
}
