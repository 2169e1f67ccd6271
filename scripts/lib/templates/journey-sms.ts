/**
 * enrol's SMS steps: their texts as the function has them (the stack output journeyEnrolment.sms), and those it lacks
 * (`--journeys FILE` replacing the stack's journeys) from the templates folder; a template missing from both, or one
 * the stack would refuse, is one line (exit 2), as at deploy time (infra/core/journeys/sms-steps.ts).
 */
import { Journey } from "../../../infra/core/journeys/journeys-definition";
import { EnrolmentSettings } from "../../../infra/core/journeys/journey-types";
import { readSmsTemplates, smsTemplateNames, smsTemplateProblems } from "../../../infra/core/journeys/sms-steps";
import { FolderReader, TemplateError } from "../../../infra/core/plan/templates";
import { DEFAULT_SMS_MESSAGE_TYPE } from "../../../infra/core/send/sms-input";
import { DEFAULT_TEMPLATES_DIR, fileSystem } from "./campaign-templates";

/** `settings` with the SMS templates `journey` uses; unchanged for a journey without SMS steps. */
export function withJourneySms(
  journey: Journey,
  settings: EnrolmentSettings,
  templatesFlag: string | undefined,
  io: FolderReader = fileSystem,
): EnrolmentSettings {
  if (smsTemplateNames([journey]).length === 0) return settings;
  const dir = templatesFlag === undefined || templatesFlag === "none" ? DEFAULT_TEMPLATES_DIR : templatesFlag;
  const templates = readSmsTemplates([journey], dir, io, settings.sms?.templates);
  const problems = smsTemplateProblems([journey], templates, dir);
  if (problems.length) throw new TemplateError(problems.join("; "));
  return { ...settings, sms: { templates, messageType: settings.sms?.messageType ?? DEFAULT_SMS_MESSAGE_TYPE } };
}
