/**
 * Before planning: the text template of each SMS step (templates/<name>/sms.txt, infra/core/plan/sms-templates.ts),
 * each there and its fixed text (every variable empty) within --max-segments, or the launch stops with one line.
 */
import { readSmsTemplates, segmentsProblem, SmsTemplate } from "../../../infra/core/plan/sms-templates";
import { FolderReader, TemplateError } from "../../../infra/core/plan/templates";
import { Step } from "../../../infra/core/timing/send-time";
import { UsageError } from "../../../infra/core/errors";
import { Audience, VARIANT_PLACEHOLDER } from "../recipients/audience";
import { nearest } from "../../../infra/core/text/nearest";
import { DEFAULT_TEMPLATES_DIR, fileSystem } from "./campaign-templates";

/** Each text step's template by step index; none when no step is a text. */
export function smsStepTemplates(
  flag: string | undefined,
  steps: readonly Step[],
  maxSegments: number,
  audience: Audience,
  io: FolderReader = fileSystem,
): Map<number, SmsTemplate> | undefined {
  const texts = steps.flatMap((s, k) => (s.channel === "sms" ? [k] : []));
  if (texts.length === 0) return undefined;
  if (texts[0] === 0 && audience.variants.some((v) => v.template !== undefined))
    throw new UsageError(
      `--variant ${audience.variants.find((v) => v.template)!.name}: a variant's own template is for an email first step, not --channel sms`,
    );
  const dir = flag ?? DEFAULT_TEMPLATES_DIR;
  if (flag === "none")
    throw new UsageError(
      `--templates none: step ${steps[texts[0]].number} is a text, whose template is a local file (templates/NAME/sms.txt); give the templates folder`,
    );
  const all = readSmsTemplates(dir, io);
  const out = new Map<number, SmsTemplate>();
  for (const k of texts) {
    const name = steps[k].template!;
    if (name.includes(VARIANT_PLACEHOLDER))
      throw new UsageError(
        `step ${steps[k].number}: text template "${name}": a text step's template is one for every variant ({variant} is for email templates)`,
      );
    const t = all.get(name);
    if (!t) {
      const near = nearest(name, [...all.keys()]);
      throw new TemplateError(
        `text template "${name}" (step ${steps[k].number}) not in ${dir}/: add ${dir}/${name}/sms.txt${near ? ` (did you mean "${near}"?)` : ""}`,
      );
    }
    const problem = segmentsProblem(t.fixed, maxSegments);
    if (problem)
      throw new TemplateError(
        `${dir}/${name}/sms.txt: its text alone (every variable empty) is ${problem}; shorten it or raise --max-segments`,
      );
    out.set(k, t);
  }
  return out;
}
