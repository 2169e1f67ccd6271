/**
 * The launcher's core: validates a recipient CSV and plans every valid recipient × step into plan.jsonl, every other
 * row into rejects.csv (line, id, reason), streaming. All per-recipient decisions — zone and fallback, local send
 * time, DST, missed-time policy, drip dates, schedule name, personalization — are made here, once.
 *
 * Output files are written under temporary names and renamed at the end: a failed run leaves no half plan.
 */
import { createHash, Hash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { isEmailAddress } from "../../../infra/config";
import { campaignIdProblem, scheduleName, SES_NAME } from "../../../infra/naming";
import { ses, stepFunctions } from "../../../infra/quotas";
import { UsageError } from "../cli/run";
import { openRecipientCsv } from "./recipients";
import {
  addDays,
  campaignSteps,
  canonicalZone,
  LocalTime,
  localTimeOf,
  parseLocalTime,
  ScheduledTime,
  Step,
  stepTime,
  zonedInstant,
  scheduledTime,
  ZoneResolver,
} from "./send-time";
import { EffectiveTps, InstantHistogram, minimumWindowMinutes } from "./window";

export type MissedPolicy = "skip" | "send-now" | "next-day";
export const MISSED_POLICIES: MissedPolicy[] = ["skip", "send-now", "next-day"];

/** Reserved columns: the rest of the CSV becomes template data. */
export const ID_COLUMN = "id";
export const EMAIL_COLUMN = "email";
export const TIMEZONE_COLUMN = "timezone";
const STEP_KEY = "step";

/** A plan line must fit one Distributed Map batch on its own, with room for the batch wrapper and BatchInput. */
export const MAX_PLAN_ROW_BYTES = stepFunctions.maxBatchBytes - 1_024;

export interface PlanOptions {
  campaignId: string;
  file: string;
  outDir: string;
  /** SES template of step 1; later steps name theirs in `--step +3d:NAME` (default: this one). */
  template: string;
  date: string;
  hour: number;
  minute: number;
  stepFlags: string[];
  defaultTimezone: string;
  missed: MissedPolicy;
  graceMinutes: number;
  /** Safety margin after the fan-out's estimated end before a send counts as reachable. */
  marginMinutes: number;
  now: number;
  /** CreateSchedule rate the fan-out is expected to sustain, for its ETA. */
  createTps: number;
  rate: EffectiveTps;
  /** Use this window instead of computing one. */
  windowMinutes?: number;
}

export type RejectReason = "wrong-field-count" | "missing-id" | "duplicate-id" | "invalid-email" | "too-large" | "send-time-passed";

export interface PlanSummary {
  campaignId: string;
  rows: number;
  recipientsPlanned: number;
  schedules: number;
  steps: { step: number; offset: string; template: string; schedules: number }[];
  rejected: { total: number; byReason: Partial<Record<RejectReason, number>> };
  zones: { defaultTimezone: string; defaulted: number; canonicalised: number };
  missed: { policy: MissedPolicy; graceMinutes: number; cutoff: string; skipped: number; sentNow: number; movedToNextDay: number };
  window: {
    minutes: number;
    source: "computed" | "--window-minutes";
    effectiveTps: number;
    effectiveTpsSource: string;
    fits: boolean;
    requiredTps?: number;
  };
  fanOut: { etaSeconds: number; createTps: number };
  firstSend: string | null;
  lastSend: string | null;
  planSha256: string;
  files: { plan: string; rejects: string; summary: string };
}

/** What happens to one zone's send of one step. */
interface Decision {
  outcome: "planned" | "sent-now" | "next-day" | "skipped";
  time?: ScheduledTime;
  /** `"send_at":…,"timezone":…` and the utc value, serialized once per zone and step. */
  json?: { when: string; utc: string };
}

export async function planCampaign(o: PlanOptions): Promise<PlanSummary> {
  const idProblem = campaignIdProblem(o.campaignId);
  if (idProblem) throw new UsageError(`--campaign: ${idProblem}`);
  if (!SES_NAME.test(o.template)) throw new UsageError(`--template ${o.template}: an SES template name, 1–64 of A-Z a-z 0-9 _ -`);
  const base = parseLocalTime(o.date, o.hour, o.minute);
  if (typeof base === "string") throw new UsageError(base);
  const steps = campaignSteps(o.template, o.stepFlags);
  if (typeof steps === "string") throw new UsageError(steps);
  const defaultZone = canonicalZone(o.defaultTimezone);
  if (!defaultZone) throw new UsageError(`--default-timezone ${o.defaultTimezone}: not an IANA time zone name (e.g. America/New_York)`);

  const csv = await openRecipientCsv(o.file);
  const columns = checkHeader(o.file, csv.header, csv.column);
  const dataColumns = csv.header.map((_, i) => i).filter((i) => ![columns.id, columns.email, columns.timezone].includes(i));

  // The fan-out must finish before a send is due. Its length depends on the schedule count, known only at the
  // end; the file's line count bounds it from above, so the cutoff is safe (a little early) without a second pass.
  const rowBound = await countLines(o.file);
  const etaSeconds = Math.ceil((rowBound * steps.length) / o.createTps);
  const cutoff = o.now + etaSeconds * 1000 + o.marginMinutes * 60_000;
  const decide = decisionsFor(base, steps, o.missed, o.graceMinutes, cutoff);
  // A plan line's fields in the contract's (PlanRow's) order; every string JSON-escaped.
  const templateJson = steps.map((s) => JSON.stringify(s.template ?? o.template));

  fs.mkdirSync(o.outDir, { recursive: true });
  const files = {
    plan: path.join(o.outDir, "plan.jsonl"),
    rejects: path.join(o.outDir, "rejects.csv"),
    summary: path.join(o.outDir, "summary.json"),
  };
  const hash = createHash("sha256");
  const plan = new LineWriter(files.plan + ".partial", hash);
  const rejects = new LineWriter(files.rejects + ".partial");
  rejects.write("line,id,reason\n");

  const resolver = new ZoneResolver(defaultZone);
  const seen = new Map<string, number>();
  const plannedByZone = new Map<string, number>();
  const byReason: Partial<Record<RejectReason, number>> = {};
  const schedulesByStep = steps.map(() => 0);
  let rows = 0,
    planned = 0,
    rejected = 0,
    defaulted = 0,
    canonicalised = 0,
    skipped = 0,
    sentNow = 0,
    nextDay = 0;
  const reject = async (line: number, id: string, reason: RejectReason, text: string) => {
    rejected++;
    byReason[reason] = (byReason[reason] ?? 0) + 1;
    await rejects.write(`${line},${csvField(id)},${csvField(text)}\n`);
  };

  try {
    for await (const rec of csv.records) {
      rows++;
      const f = rec.fields;
      const id = f[columns.id] ?? "";
      if (f.length !== csv.header.length) {
        await reject(rec.line, id, "wrong-field-count", `${f.length} fields where the header has ${csv.header.length}`);
        continue;
      }
      if (id.trim() === "") {
        await reject(rec.line, id, "missing-id", "missing id");
        continue;
      }
      const first = seen.get(id);
      if (first !== undefined) {
        await reject(rec.line, id, "duplicate-id", `duplicate id (first on line ${first}); a recipient is sent once`);
        continue;
      }
      seen.set(id, rec.line);
      const email = f[columns.email].trim();
      if (!isEmailAddress(email) || email.length > 254) {
        await reject(rec.line, id, "invalid-email", `invalid email address "${f[columns.email]}"`);
        continue;
      }
      const { zone, status } = resolver.resolve(columns.timezone === undefined ? undefined : f[columns.timezone]);

      // Personalization: every other column, as strings, plus the step; serialized once per row.
      const data: Record<string, string> = {};
      for (const i of dataColumns) data[csv.header[i]] = f[i];
      const dataJson = JSON.stringify(data);
      const dataPrefix = dataJson.length > 2 ? dataJson.slice(0, -1) + "," : "{";
      const decisions = decide(zone);
      const emailJson = JSON.stringify(email);
      const idJson = JSON.stringify(id);
      const lines: string[] = [];
      let tooLarge = false;
      for (let k = 0; k < steps.length; k++) {
        const d = decisions[k];
        if (!d.json) continue;
        const step = steps[k].number;
        const templateData = `${dataPrefix}"${STEP_KEY}":"${step}"}`;
        // Schedule names are [0-9A-Za-z_.-] only: nothing to escape.
        const line =
          `{"schedule_name":"${scheduleName(id, step)}",${d.json.when},"email":${emailJson},"template":${templateJson[k]},` +
          `"template_data":${templateData},"recipient_id":${idJson},"step":${step},"utc":${d.json.utc}}\n`;
        // (UTF-16 length × 3 bounds the UTF-8 size: count bytes only when it could matter.)
        if (
          templateData.length > ses.maxTemplateDataChars ||
          (line.length * 3 > MAX_PLAN_ROW_BYTES && Buffer.byteLength(line) > MAX_PLAN_ROW_BYTES)
        )
          tooLarge = true;
        lines.push(line);
      }
      if (tooLarge) {
        await reject(
          rec.line,
          id,
          "too-large",
          `personalization too large: a plan row must fit a ${MAX_PLAN_ROW_BYTES}-byte batch and TemplateData ${ses.maxTemplateDataChars} characters`,
        );
        continue;
      }
      if (lines.length === 0) {
        skipped += steps.length;
        await reject(
          rec.line,
          id,
          "send-time-passed",
          `every send time is before ${new Date(cutoff).toISOString()} (now + fan-out + margin); --missed ${o.missed}`,
        );
        continue;
      }
      if (status === "defaulted") defaulted++;
      if (status === "canonicalised") canonicalised++;
      for (let k = 0; k < steps.length; k++) {
        const outcome = decisions[k].outcome;
        if (outcome === "skipped") skipped++;
        else {
          schedulesByStep[k]++;
          if (outcome === "sent-now") sentNow++;
          if (outcome === "next-day") nextDay++;
        }
      }
      const pending = plan.write(lines.join(""));
      if (pending) await pending;
      planned++;
      plannedByZone.set(zone, (plannedByZone.get(zone) ?? 0) + 1);
    }
    await plan.close();
    await rejects.close();
  } catch (e) {
    plan.abort();
    rejects.abort();
    throw e;
  }

  const histogram = new InstantHistogram();
  for (const [zone, count] of plannedByZone) for (const d of decide(zone)) if (d.time) histogram.add(d.time.utcMs, zone, count);
  const instants = histogram.instants();
  const sized = o.windowMinutes === undefined ? minimumWindowMinutes(instants, o.rate.tps) : undefined;
  const schedules = histogram.total;
  const summary: PlanSummary = {
    campaignId: o.campaignId,
    rows,
    recipientsPlanned: planned,
    schedules,
    steps: steps.map((s, k) => ({
      step: s.number,
      offset: s.hours ? `+${s.hours}h` : `+${s.days ?? 0}d`,
      template: s.template ?? o.template,
      schedules: schedulesByStep[k],
    })),
    rejected: { total: rejected, byReason },
    zones: { defaultTimezone: defaultZone, defaulted, canonicalised },
    missed: {
      policy: o.missed,
      graceMinutes: o.graceMinutes,
      cutoff: new Date(cutoff).toISOString(),
      skipped,
      sentNow,
      movedToNextDay: nextDay,
    },
    window: sized
      ? {
          minutes: sized.windowMinutes,
          source: "computed",
          effectiveTps: o.rate.tps,
          effectiveTpsSource: o.rate.source,
          fits: sized.fits,
          requiredTps: sized.fits ? undefined : sized.requiredTps,
        }
      : { minutes: o.windowMinutes!, source: "--window-minutes", effectiveTps: o.rate.tps, effectiveTpsSource: o.rate.source, fits: true },
    fanOut: { etaSeconds: Math.ceil(schedules / o.createTps), createTps: o.createTps },
    firstSend: instants.length ? new Date(instants[0].utcMs).toISOString() : null,
    lastSend: instants.length ? new Date(instants[instants.length - 1].utcMs).toISOString() : null,
    planSha256: hash.digest("hex"),
    files,
  };
  fs.renameSync(files.plan + ".partial", files.plan);
  fs.renameSync(files.rejects + ".partial", files.rejects);
  fs.writeFileSync(files.summary, JSON.stringify(summary, null, 2) + "\n");
  return summary;
}

/** The header must name id and email once each; `step` is reserved for the step number. */
function checkHeader(file: string, header: string[], column: (n: string) => number | undefined) {
  const missing = [ID_COLUMN, EMAIL_COLUMN].filter((c) => column(c) === undefined);
  if (missing.length)
    throw new UsageError(`${file}:1: the header needs columns ${missing.map((m) => `"${m}"`).join(" and ")} (found: ${header.join(", ")})`);
  const dup = header.find((h, i) => header.indexOf(h) !== i);
  if (dup !== undefined) throw new UsageError(`${file}:1: column "${dup}" appears twice in the header`);
  if (column(STEP_KEY) !== undefined)
    throw new UsageError(`${file}:1: column "${STEP_KEY}" is reserved: sendtime adds the step number to the template data; rename it`);
  return { id: column(ID_COLUMN)!, email: column(EMAIL_COLUMN)!, timezone: column(TIMEZONE_COLUMN) };
}

/**
 * Each zone's outcome per step, cached: sends due before `cutoff` follow the missed-time policy —
 * skip; send-now (at the cutoff, in UTC) when late by less than the grace; next-day (same local time the next day,
 * skipped if that is still too early).
 */
function decisionsFor(
  base: LocalTime,
  steps: Step[],
  policy: MissedPolicy,
  graceMinutes: number,
  cutoff: number,
): (zone: string) => Decision[] {
  const cache = new Map<string, Decision[]>();
  const sendNowAt = Math.ceil(cutoff / 60_000) * 60_000;
  return (zone) => {
    let decisions = cache.get(zone);
    if (decisions) return decisions;
    decisions = steps.map((step): Decision => {
      const time = stepTime(zone, base, step);
      if (time.utcMs >= cutoff) return { outcome: "planned", time };
      if (policy === "send-now" && cutoff - time.utcMs < graceMinutes * 60_000)
        return { outcome: "sent-now", time: scheduledTime("UTC", sendNowAt, "exact") };
      if (policy === "next-day") {
        const requested = step.hours ? localTimeOf(zone, time.utcMs) : addDays(base, step.days ?? 0);
        const { utcMs, fold } = zonedInstant(zone, addDays(requested, 1));
        if (utcMs >= cutoff) return { outcome: "next-day", time: scheduledTime(zone, utcMs, fold) };
      }
      return { outcome: "skipped" };
    });
    for (const d of decisions) {
      if (d.time)
        d.json = {
          when: `"send_at":"${d.time.send_at}","timezone":${JSON.stringify(d.time.timezone)}`,
          utc: `"${new Date(d.time.utcMs).toISOString()}"`,
        };
    }
    cache.set(zone, decisions);
    return decisions;
  };
}

/** Lines in a file: an upper bound on its records (a quoted field may span lines). */
async function countLines(file: string): Promise<number> {
  let n = 0;
  for await (const chunk of fs.createReadStream(file) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
  }
  return n + 1;
}

/** RFC 4180 quoting when needed. */
function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** Buffered writes with backpressure; optionally hashes what it writes. */
class LineWriter {
  private readonly stream: fs.WriteStream;
  private buffer = "";
  constructor(
    readonly file: string,
    private readonly hash?: Hash,
  ) {
    this.stream = fs.createWriteStream(file);
  }
  /** Appends; resolves at once unless the buffer is full and the disk is behind. */
  write(text: string): Promise<void> | undefined {
    this.buffer += text;
    return this.buffer.length >= 1 << 20 ? this.flush() : undefined;
  }
  private async flush(): Promise<void> {
    const chunk = this.buffer;
    this.buffer = "";
    this.hash?.update(chunk);
    if (!this.stream.write(chunk)) await new Promise<void>((r) => this.stream.once("drain", () => r()));
  }
  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve, reject) => this.stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
  abort(): void {
    this.stream.destroy();
    fs.rmSync(this.file, { force: true });
  }
}
