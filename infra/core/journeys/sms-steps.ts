/**
 * Journey steps of channel `sms` (docs/journeys.md, "Text messages"): the step's text is templates/<name>/sms.txt
 * (Handlebars), which the stack reads and hands to the enrolment function in its settings (the function has no
 * templates folder); it is rendered with the event's data at enrolment, its message parts counted (segments.ts) and
 * held to the step's limit; the subscriber's `phone` is read as the launcher reads it (zones/phone.ts); legal hours,
 * when the step asks for them, move the step to the next instant whose whole flexible window is legal for every zone
 * and jurisdiction that may be the subscriber's (legal-window.ts), and give the text its `Until`: when that window
 * closes. Pure: no I/O.
 */
import Handlebars from "handlebars";
import { Journey, JourneyStep, MAX_JOURNEYS_JSON } from "./journeys-definition";
import { readPhone } from "../zones/phone";
import { countSegments, SegmentCount } from "../sms/segments";
import { applyLegalHours, legalCandidates, legalWindowClose, sameSubjectLimit } from "../sms/legal-window";
import { Channel, SMS_MAX_TTL_SECONDS, SmsMessageType } from "../send/sms-input";
import {
  FolderReader,
  hasValue,
  SMS_TEMPLATE_FILE,
  STEP_VARIABLE,
  TemplateError,
  templateVariables,
} from "../plan/templates";

/** Message parts a text may take unless the step or journey says (`maxSegments`). */
export const DEFAULT_MAX_SEGMENTS = 3;
const MINUTE = 60_000;

/** What the enrolment needs for SMS steps, from the stack: each SMS template's text, and the texts' MessageType. */
export interface JourneySmsSettings {
  /** Template name → the text of its sms.txt (Handlebars), as the stack read it. */
  templates: Record<string, string>;
  /** @default "PROMOTIONAL" */
  messageType?: SmsMessageType;
}

export function stepChannel(step: JourneyStep): Channel {
  return step.channel ?? "email";
}

export function stepMaxSegments(journey: Journey, step: JourneyStep): number {
  return step.maxSegments ?? journey.maxSegments ?? DEFAULT_MAX_SEGMENTS;
}

/** The names of the SMS templates `journeys` use, once each, sorted. */
export function smsTemplateNames(journeys: readonly Journey[]): string[] {
  return [
    ...new Set(journeys.flatMap((j) => j.steps.filter((s) => s.channel === "sms").map((s) => s.template))),
  ].sort();
}

/**
 * The texts of the SMS templates `journeys` use, from `dir` (`<dir>/<name>/sms.txt`), beside those `known` already
 * (a stack's deployed settings); a template in neither is left out, for smsTemplateProblems to name.
 */
export function readSmsTemplates(
  journeys: readonly Journey[],
  dir: string,
  io: Pick<FolderReader, "exists" | "read">,
  known: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const templates: Record<string, string> = {};
  for (const name of smsTemplateNames(journeys)) {
    const file = `${dir}/${name}/${SMS_TEMPLATE_FILE}`;
    if (Object.prototype.hasOwnProperty.call(known, name)) templates[name] = known[name];
    else if (io.exists(file)) templates[name] = io.read(file);
  }
  return templates;
}

/** The text as sent: the template's output without the white space that ends (or starts) a file. */
function sendable(text: string): string {
  return text.trim();
}

/**
 * One line per SMS step whose template cannot be sent, checked where the stack reads them: absent from `templates`,
 * malformed Handlebars, empty, or — a template without a variable, whose text is known now — more message parts than
 * the step's maxSegments. `dir` names the folder in the messages.
 */
export function smsTemplateProblems(
  journeys: readonly Journey[],
  templates: Readonly<Record<string, string>>,
  dir: string,
): string[] {
  const problems: string[] = [];
  for (const j of journeys)
    j.steps.forEach((s, k) => {
      if (s.channel !== "sms") return;
      const where = `journey ${j.name} step ${k + 1}`;
      const file = `${dir}/${s.template}/${SMS_TEMPLATE_FILE}`;
      const text = Object.prototype.hasOwnProperty.call(templates, s.template) ? templates[s.template] : undefined;
      if (text === undefined) return problems.push(`${where}: SMS template ${file} is missing (add it)`);
      let vars;
      try {
        vars = templateVariables(text, file);
      } catch (e) {
        if (!(e instanceof TemplateError)) throw e;
        return problems.push(`${where}: ${e.message}`);
      }
      if (sendable(text) === "") return problems.push(`${where}: ${file} is empty: a text needs words`);
      const fixed = vars.required.size + vars.optional.size + vars.unchecked.length === 0;
      const count = countSegments(sendable(text));
      const max = stepMaxSegments(j, s);
      if (fixed && count.segments > max)
        problems.push(`${where}: ${file} is ${segmentsText(count)}, over ${max}: ${SHORTEN}`);
    });
  return problems;
}

/**
 * The function's environment holds the journeys and the SMS templates' texts, within Lambda's 4 KB: both together,
 * as JSON in UTF-8 bytes, are held to the journeys' MAX_JOURNEYS_JSON. One line when over, else undefined.
 */
export function smsSettingsSizeProblem(journeys: readonly Journey[], sms: JourneySmsSettings): string | undefined {
  const size = Buffer.byteLength(JSON.stringify(journeys), "utf8") + Buffer.byteLength(JSON.stringify(sms), "utf8");
  if (size <= MAX_JOURNEYS_JSON) return undefined;
  return `the journeys and their SMS templates are ${size} bytes as JSON, over ${MAX_JOURNEYS_JSON}: the enrolment function's environment (4 KB in all) cannot hold them; shorten the texts or the journeys`;
}

const SHORTEN = "shorten it or raise the step's maxSegments (1–10)";

function segmentsText(c: SegmentCount): string {
  const unit = c.encoding === "GSM-7" ? "septets" : "UTF-16 units";
  return `${c.segments} message parts (${c.encoding}, ${c.units} ${unit})`;
}

/**
 * The subscriber's number for an SMS step: E.164, or why there is none (missing, or not a valid number with their
 * `country`). Read as the launcher reads a row's `phone`.
 */
export function subscriberPhone(recipient: Record<string, unknown>): { e164: string } | { problem: string } {
  const raw = recipient.phone;
  const text = raw === undefined || raw === null ? undefined : typeof raw === "string" ? raw : JSON.stringify(raw);
  const country = typeof recipient.country === "string" ? recipient.country : undefined;
  const read = readPhone(text, country);
  if (read === undefined)
    return { problem: "no phone: detail.recipient.phone is missing (E.164, or national with country)" };
  if ("problem" in read) return { problem: `detail.recipient.${read.problem}` };
  return { e164: read.e164 };
}

const compiled = new Map<string, Handlebars.TemplateDelegate>();

/**
 * The step's text rendered with the subscriber's data (the step number included), and its message parts; or why it
 * is not sent: a variable used outside any block that the data lacks, or more parts than `maxSegments`.
 */
export function renderSmsText(
  name: string,
  text: string,
  data: Record<string, string>,
  maxSegments: number,
): { body: string; segments: number } | { problem: string } {
  const file = `${name}/${SMS_TEMPLATE_FILE}`;
  const lacking = [...templateVariables(text, file).required].find((v) => v !== STEP_VARIABLE && !hasValue(data[v]));
  if (lacking !== undefined) return { problem: `${file} uses {{${lacking}}}, which detail.recipient lacks` };
  let render = compiled.get(text);
  if (!render) compiled.set(text, (render = Handlebars.compile(text, { noEscape: true })));
  const body = sendable(render(data));
  const count = countSegments(body);
  if (count.segments === 0) return { problem: `${file} renders to an empty text` };
  if (count.segments > maxSegments)
    return { problem: `${file} renders to ${segmentsText(count)}, over ${maxSegments}` };
  return { body, segments: count.segments };
}

/** When an SMS step goes, and until when its text may: moved by legal hours, or why it is not sent. */
export type SmsTiming =
  { utcMs: number; until: number; moved: boolean; sameSubjectLimit?: number } | { skipped: string };

/**
 * An SMS step due at `utcMs` for a subscriber of `zones` and number `e164`. Without legal hours it goes then, and its
 * text may wait SendTextMessage's longest TimeToLive. With them it moves to the first instant at or after `utcMs` from
 * which the whole flexible window (`windowMinutes`: Scheduler starts it anywhere in it) is legal in every candidate,
 * moved again out of quiet time by `unquiet` (the journey's quiet time: the instant its window is free, or undefined
 * when it is); its Until is when the legal window holding it closes.
 */
export function smsStepTiming(
  step: JourneyStep,
  zones: readonly string[],
  e164: string,
  utcMs: number,
  windowMinutes: number,
  unquiet: (utcMs: number) => number | undefined = () => undefined,
): SmsTiming {
  const presets = step.legalHours ?? [];
  const candidates = presets.length ? legalCandidates(presets, zones, e164) : [];
  if (candidates.length === 0) return { utcMs, until: utcMs + SMS_MAX_TTL_SECONDS * 1000, moved: false };
  const limit = sameSubjectLimit(presets, e164);
  let t = utcMs;
  for (let moves = 0; moves < 32; moves++) {
    const legal = applyLegalHours(t, candidates, "delay");
    if ("skipped" in legal) return { skipped: legal.skipped };
    const close = legalWindowClose(legal.utcMs, candidates);
    const quietEnd = unquiet(legal.utcMs);
    if (quietEnd !== undefined && quietEnd > legal.utcMs) t = quietEnd;
    else if (close - legal.utcMs < windowMinutes * MINUTE) t = close;
    else
      return {
        utcMs: legal.utcMs,
        until: close,
        moved: legal.utcMs !== utcMs,
        ...(limit === undefined ? {} : { sameSubjectLimit: limit }),
      };
  }
  return { skipped: `legal hours and quiet time leave no ${windowMinutes}-minute window for the text` };
}
