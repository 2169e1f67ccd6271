/**
 * The launcher's core: plans every valid recipient × step of a CSV into plan.jsonl, every other row into rejects.csv,
 * streaming. A row goes through the pipeline
 *
 *   check it (recipient-rows.ts) → decide its zone and each step's send (decisions.ts)
 *     → write its plan lines or a reject (plan-row format: infra/plan-row.ts; files: plan-files.ts) → count it
 *
 * and the counts become the summary. Every per-recipient decision is made here, once, and recorded in the plan.
 */
import { scheduleName } from "../../../infra/naming";
import { planLineFromJson } from "../../../infra/plan-row";
import { ses, stepFunctions } from "../../../infra/quotas";
import { PlanFiles, PlanPaths } from "./plan-files";
import { MissedPolicy, SendDecider, StepDecision, ZoneDecisions } from "./decisions";
import { Columns, isReject, RecipientChecker, recipientColumns, RecipientRow, Reject, RejectReason, STEP_KEY } from "./recipient-rows";
import { countLines, CsvEncoding, openRecipientCsv } from "./recipients";
import { CompactSeenKeys } from "./seen-keys";
import { LocalTime, Step, stepOffset } from "./send-time";
import { EffectiveTps, fanOutSeconds, InstantHistogram, minimumWindowMinutes, peakTpsWith } from "./window";

/** A plan line must fit one Distributed Map batch on its own, with room for the batch wrapper and BatchInput. */
export const MAX_PLAN_ROW_BYTES = stepFunctions.maxBatchBytes - 1_024;

export interface PlanRequest {
  campaignId: string;
  file: string;
  outDir: string;
  /** Step 1's local time. */
  base: LocalTime;
  /** Every step, each with its SES template. */
  steps: (Step & { template: string })[];
  defaultZone: string;
  /** Reject rows with a missing or unknown zone instead of sending them in the default zone. */
  strictZones: boolean;
  missed: { policy: MissedPolicy; graceMinutes: number };
  /** Safety margin after the fan-out's estimated end before a send counts as reachable. */
  marginMinutes: number;
  now: number;
  /** CreateSchedule rate the fan-out is expected to sustain, for its ETA. */
  createTps: number;
  rate: EffectiveTps;
  /** How the list is read and checked. */
  recipients: { encoding: CsvEncoding; allowDuplicateEmails: boolean };
  /** A window chosen by the caller instead of a computed one; `source` says where it came from. */
  window?: { minutes: number; source: string };
}

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
    source: string;
    effectiveTps: number;
    effectiveTpsSource: string;
    fits: boolean;
    requiredTps?: number;
    /** With a window given by the caller: the smallest that holds the rate, and the peak rate with the given one. */
    minimumMinutes?: number;
    peakTps?: number;
  };
  /** Steps not planned for some recipients because an earlier step's send came within MIN_STEP_GAP_MINUTES. */
  collisions: { step: number; with: number; recipients: number }[];
  /** Planned rows whose id differs from an earlier row's only in case or surrounding spaces. */
  idsDifferingOnlyInCase: number;
  fanOut: { etaSeconds: number; createTps: number };
  firstSend: string | null;
  lastSend: string | null;
  planSha256: string;
  files: PlanPaths;
}

export async function planCampaign(o: PlanRequest): Promise<PlanSummary> {
  const csv = await openRecipientCsv(o.file, o.recipients.encoding);
  const columns = recipientColumns(o.file, csv.header);
  // The fan-out must finish before a send is due. Its length depends on the schedule count, known only at the
  // end; the file's line count bounds it from above, so the cutoff is safe (a little early) without a second pass.
  const etaSeconds = fanOutSeconds((await countLines(o.file)) * o.steps.length, o.createTps);
  const cutoffMs = o.now + etaSeconds * 1000 + o.marginMinutes * 60_000;

  // Ids and addresses seen so far, exact and compact (a Map stops at 2^24 entries and costs ~100 bytes a key).
  const seenIds = new CompactSeenKeys();
  const seenEmails = o.recipients.allowDuplicateEmails ? undefined : new CompactSeenKeys();
  const seenFoldedIds = new CompactSeenKeys();
  const checker = new RecipientChecker(columns, {
    allowDuplicateEmails: o.recipients.allowDuplicateEmails,
    ids: seenIds,
    emails: seenEmails,
    foldedIds: seenFoldedIds,
  });
  const decider = new SendDecider({
    base: o.base,
    steps: o.steps,
    defaultZone: o.defaultZone,
    strictZones: o.strictZones,
    missed: { ...o.missed, cutoffMs },
  });
  const lines = new PlanLines(columns, o.steps);
  const tally = new PlanTally(o.steps.length);
  const files = new PlanFiles(o.outDir);
  const reject = (r: Reject) => {
    tally.reject(r.reason);
    return files.reject(r);
  };
  let planSha256: string;
  try {
    for await (const rec of csv.records) {
      tally.rows++;
      const row = checker.check(rec);
      if (isReject(row)) {
        await reject(row);
        continue;
      }
      const decided = decider.decide(row.rawZone);
      if (decided.reject) {
        await reject({ line: row.line, id: row.id, ...decided.reject });
        continue;
      }
      const planned = lines.of(row, decided.steps);
      if (typeof planned !== "string") {
        await reject(planned);
        continue;
      }
      if (planned === "") {
        tally.missedAll(decided.steps.length);
        await reject(missedReject(row, cutoffMs, o.missed.policy));
        continue;
      }
      tally.plan(row, decided);
      await files.writePlan(planned);
      for (const note of row.notes ?? []) await files.note(row, note);
      for (const note of decided.notes) await files.note(row, note);
    }
    planSha256 = await files.close();
  } catch (e) {
    files.abort();
    throw e;
  } finally {
    seenIds.close();
    seenEmails?.close();
    seenFoldedIds.close();
  }
  const summary = summarize(o, tally, decider, cutoffMs, planSha256, files.paths);
  files.commit(summary);
  return summary;
}

function missedReject(row: RecipientRow, cutoffMs: number, policy: MissedPolicy): Reject {
  const cutoff = new Date(cutoffMs).toISOString();
  return {
    line: row.line,
    id: row.id,
    reason: "send-time-passed",
    text: `every send time is before ${cutoff} (now + fan-out + margin); missed-time policy ${policy}`,
  };
}

/**
 * A recipient's plan lines. Everything that does not change per row is serialized once: each step's template, and
 * per zone each step's time (through the decisions, which are cached per zone).
 */
class PlanLines {
  private readonly templateJson: string[];
  constructor(
    private readonly columns: Columns,
    steps: (Step & { template: string })[],
  ) {
    this.templateJson = steps.map((s) => JSON.stringify(s.template));
  }

  /** The row's lines (empty when every step was skipped), or a too-large reject. */
  of(row: RecipientRow, decisions: StepDecision[]): string | Reject {
    const { header, data } = this.columns;
    // Personalization: every other column, as strings, plus the step; serialized once per row. No prototype, so
    // a column named __proto__ is data like any other.
    const values: Record<string, string> = Object.create(null);
    for (const i of data) values[header[i]] = row.fields[i];
    const dataJson = JSON.stringify(values);
    const dataPrefix = dataJson.length > 2 ? dataJson.slice(0, -1) + "," : "{";
    const emailJson = JSON.stringify(row.email);
    const idJson = JSON.stringify(row.id);
    const lines: string[] = [];
    for (let k = 0; k < decisions.length; k++) {
      const { step, time } = decisions[k];
      if (!time) continue;
      const templateData = `${dataPrefix}"${STEP_KEY}":"${step.number}"}`;
      // Schedule names, send_at, IANA zone names and ISO instants hold nothing JSON escapes: quoted as they are.
      const line = planLineFromJson({
        schedule_name: `"${scheduleName(row.id, step.number)}"`,
        send_at: `"${time.send_at}"`,
        timezone: `"${time.timezone}"`,
        email: emailJson,
        template: this.templateJson[k],
        template_data: templateData,
        recipient_id: idJson,
        step: String(step.number),
        utc: `"${time.utc}"`,
      });
      // (UTF-16 length × 3 bounds the UTF-8 size: count bytes only when it could matter.)
      if (
        templateData.length > ses.maxTemplateDataChars ||
        (line.length * 3 > MAX_PLAN_ROW_BYTES && Buffer.byteLength(line) > MAX_PLAN_ROW_BYTES)
      )
        return {
          line: row.line,
          id: row.id,
          reason: "too-large",
          text: `personalization too large: a plan row must fit a ${MAX_PLAN_ROW_BYTES}-byte batch and TemplateData ${ses.maxTemplateDataChars} characters`,
        };
      lines.push(line);
    }
    // Joined, not appended line by line: a flat string hashes and writes without flattening a rope first.
    return lines.join("");
  }
}

/** The run's counts, kept as rows stream by. */
class PlanTally {
  rows = 0;
  planned = 0;
  rejected = 0;
  readonly byReason: Partial<Record<RejectReason, number>> = {};
  defaulted = 0;
  canonicalised = 0;
  skipped = 0;
  sentNow = 0;
  movedToNextDay = 0;
  readonly schedulesByStep: number[];
  /** Recipients per "step with": a step not planned because it came too close to another. */
  readonly collisions = new Map<string, number>();
  idsDifferingOnlyInCase = 0;
  /** Planned recipients per zone: with the per-zone decisions, the histogram of send instants. */
  readonly plannedByZone = new Map<string, number>();

  constructor(steps: number) {
    this.schedulesByStep = new Array(steps).fill(0);
  }

  reject(reason: RejectReason): void {
    this.rejected++;
    this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
  }

  missedAll(steps: number): void {
    this.skipped += steps;
  }

  plan(row: RecipientRow, d: ZoneDecisions): void {
    this.planned++;
    if (row.sameIdButCase !== undefined) this.idsDifferingOnlyInCase++;
    if (d.status === "defaulted") this.defaulted++;
    if (d.status === "canonicalised") this.canonicalised++;
    d.steps.forEach((s, k) => {
      if (s.outcome === "skipped") this.skipped++;
      else if (s.outcome === "collided") {
        const key = `${s.step.number} ${s.collidedWith}`;
        this.collisions.set(key, (this.collisions.get(key) ?? 0) + 1);
      } else this.schedulesByStep[k]++;
      if (s.outcome === "sent-now") this.sentNow++;
      if (s.outcome === "next-day") this.movedToNextDay++;
    });
    this.plannedByZone.set(d.zone, (this.plannedByZone.get(d.zone) ?? 0) + 1);
  }
}

function summarize(
  o: PlanRequest,
  t: PlanTally,
  decider: SendDecider,
  cutoffMs: number,
  planSha256: string,
  files: PlanPaths,
): PlanSummary {
  const histogram = new InstantHistogram();
  for (const [zone, count] of t.plannedByZone) for (const d of decider.forZone(zone)) if (d.time) histogram.add(d.time.utcMs, zone, count);
  const instants = histogram.instants();
  const schedules = histogram.total;
  const rate = { effectiveTps: o.rate.tps, effectiveTpsSource: o.rate.source };
  const sized = minimumWindowMinutes(instants, o.rate.tps);
  let window: PlanSummary["window"];
  if (o.window) {
    const minimumMinutes = sized.fits ? sized.windowMinutes : undefined;
    const peakTps = Math.round(peakTpsWith(instants, o.window.minutes) * 100) / 100;
    window = { minutes: o.window.minutes, source: o.window.source, ...rate, fits: true, minimumMinutes, peakTps };
  } else
    window = {
      minutes: sized.windowMinutes,
      source: "computed",
      ...rate,
      fits: sized.fits,
      requiredTps: sized.fits ? undefined : sized.requiredTps,
    };
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    campaignId: o.campaignId,
    rows: t.rows,
    recipientsPlanned: t.planned,
    schedules,
    steps: o.steps.map((s, k) => ({ step: s.number, offset: stepOffset(s), template: s.template, schedules: t.schedulesByStep[k] })),
    rejected: { total: t.rejected, byReason: t.byReason },
    zones: { defaultTimezone: o.defaultZone, defaulted: t.defaulted, canonicalised: t.canonicalised },
    missed: {
      policy: o.missed.policy,
      graceMinutes: o.missed.graceMinutes,
      cutoff: iso(cutoffMs),
      skipped: t.skipped,
      sentNow: t.sentNow,
      movedToNextDay: t.movedToNextDay,
    },
    window,
    collisions: [...t.collisions].map(([key, recipients]) => {
      const [step, other] = key.split(" ").map(Number);
      return { step, with: other, recipients };
    }),
    idsDifferingOnlyInCase: t.idsDifferingOnlyInCase,
    fanOut: { etaSeconds: fanOutSeconds(schedules, o.createTps), createTps: o.createTps },
    firstSend: instants.length ? iso(instants[0].utcMs) : null,
    lastSend: instants.length ? iso(instants[instants.length - 1].utcMs) : null,
    planSha256,
    files,
  };
}
