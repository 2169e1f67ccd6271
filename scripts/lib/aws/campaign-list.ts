/**
 * What list-campaigns reads from AWS: every `campaign-*` schedule group (ListScheduleGroups, every page), the
 * schedules still pending in each (ListSchedules, every page: a fired one-time schedule deletes itself), and each
 * campaign's last launch record in the bucket (`launches/<campaign>/`, the newest object). Every call is bounded by
 * the command's Deadline; a page token returned twice stops the listing (see allPages).
 */
import { ListScheduleGroupsCommand, ListSchedulesCommand, SchedulerClient } from "@aws-sdk/client-scheduler";
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { CAMPAIGN_PREFIX, CLEANUP_SCHEDULE_NAME, LAUNCHES_PREFIX } from "../../../infra/core/plan/naming";
import { allPages, awsCall, Deadline, throttled } from "./call";
import { CampaignStateRecord, campaignStateOrError, Ledger } from "./campaign-state";

export interface LastLaunch {
  id: string;
  at: string;
  schedules: number;
  firstSend: string | null;
  lastSend: string | null;
  /** Where the record is. */
  record: string;
}

export interface CampaignListing {
  campaign: string;
  group: string;
  /** ACTIVE or DELETING (a cancelled or finished campaign whose schedules are being removed). */
  state: string;
  createdAt: string | null;
  /** Schedules in the group, the group's own housekeeping schedule not counted. */
  pendingSchedules: number;
  /** Of those, how many are DISABLED (paused). */
  disabledSchedules: number;
  /** A journey of this stack (its subscribers' schedules), not a launched campaign. */
  journey: boolean;
  /** The newest launch record; null when none is stored (a journey, or no bucket given). */
  lastLaunch: LastLaunch | null;
  /**
   * Its state in the ledger (live, paused by an operator or a guardrail, cancelled: with the reason and time), or why
   * it could not be read; absent without the ledger (a stack without the ledgerTableName output).
   */
  campaignState?: CampaignStateRecord | { error: string };
}

export async function listCampaigns(
  d: Deadline,
  clients: { scheduler: SchedulerClient; s3?: S3Client; ledger?: Ledger },
  o: { bucket?: string; journeys: string[] },
): Promise<CampaignListing[]> {
  const groups: { name: string; state: string; createdAt: string | null }[] = [];
  for await (const page of allPages(
    d,
    `ListScheduleGroups ${CAMPAIGN_PREFIX}*`,
    (NextToken, opts) =>
      clients.scheduler.send(
        new ListScheduleGroupsCommand({ NamePrefix: CAMPAIGN_PREFIX, MaxResults: 100, NextToken }),
        opts,
      ),
    (p) => p.NextToken,
  ))
    for (const g of page.ScheduleGroups ?? [])
      if (g.Name?.startsWith(CAMPAIGN_PREFIX))
        groups.push({
          name: g.Name,
          state: g.State ?? "UNKNOWN",
          createdAt: g.CreationDate ? new Date(g.CreationDate).toISOString() : null,
        });
  groups.sort((a, b) => a.name.localeCompare(b.name));
  const out: CampaignListing[] = [];
  for (const g of groups) {
    const campaign = g.name.slice(CAMPAIGN_PREFIX.length);
    const pending = await countSchedules(d, clients.scheduler, g.name);
    const journey = o.journeys.includes(campaign);
    const lastLaunch =
      clients.s3 && o.bucket && !journey ? await lastLaunchOf(d, clients.s3, o.bucket, campaign) : null;
    const listing: CampaignListing = {
      campaign,
      group: g.name,
      state: g.state,
      createdAt: g.createdAt,
      ...pending,
      journey,
      lastLaunch,
    };
    if (clients.ledger && !journey) listing.campaignState = await campaignStateOrError(d, clients.ledger, campaign);
    out.push(listing);
  }
  return out;
}

async function countSchedules(d: Deadline, scheduler: SchedulerClient, GroupName: string) {
  let pendingSchedules = 0;
  let disabledSchedules = 0;
  const progress = throttled(d.progress);
  for await (const page of allPages(
    d,
    `ListSchedules in ${GroupName}`,
    (NextToken, opts) => scheduler.send(new ListSchedulesCommand({ GroupName, MaxResults: 100, NextToken }), opts),
    (p) => p.NextToken,
  )) {
    for (const s of page.Schedules ?? []) {
      if (s.Name === CLEANUP_SCHEDULE_NAME) continue;
      pendingSchedules++;
      if (s.State === "DISABLED") disabledSchedules++;
    }
    progress(() => `counting schedules in ${GroupName}: ${pendingSchedules.toLocaleString("en-US")} so far`);
  }
  return { pendingSchedules, disabledSchedules };
}

/** The newest record under launches/<campaign>/ (by LastModified; the key is the launch id, not a time). */
async function lastLaunchOf(d: Deadline, s3: S3Client, bucket: string, campaign: string): Promise<LastLaunch | null> {
  const prefix = `${LAUNCHES_PREFIX}${campaign}/`;
  let newest: { key: string; at: number } | undefined;
  for await (const page of allPages(
    d,
    `listing s3://${bucket}/${prefix}`,
    (ContinuationToken, opts) =>
      s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken }), opts),
    (p) => (p.IsTruncated ? p.NextContinuationToken : undefined),
  ))
    for (const o of page.Contents ?? []) {
      const at = o.LastModified ? new Date(o.LastModified).getTime() : 0;
      if (o.Key?.endsWith(".json") && (!newest || at > newest.at)) newest = { key: o.Key, at };
    }
  if (!newest) return null;
  const where = `s3://${bucket}/${newest.key}`;
  const text = await awsCall(d, `reading ${where}`, async (opts) => {
    const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: newest.key }), opts);
    return (await r.Body?.transformToString("utf8")) ?? "";
  });
  let r: {
    launch?: { id?: unknown; at?: unknown };
    scheduled?: { schedules?: unknown }[];
    firstSend?: unknown;
    lastSend?: unknown;
  };
  try {
    r = JSON.parse(text);
  } catch {
    r = {};
  }
  const schedules = Array.isArray(r.scheduled)
    ? r.scheduled.reduce((n, c) => n + (typeof c?.schedules === "number" ? c.schedules : 0), 0)
    : 0;
  if (typeof r.launch?.id !== "string" || typeof r.launch?.at !== "string")
    return {
      id: newest.key.slice(prefix.length).replace(/\.json$/, ""),
      at: new Date(newest.at).toISOString(),
      schedules,
      firstSend: null,
      lastSend: null,
      record: where,
    };
  const iso = (v: unknown) => (typeof v === "string" ? v : null);
  return {
    id: r.launch.id,
    at: r.launch.at,
    schedules,
    firstSend: iso(r.firstSend),
    lastSend: iso(r.lastSend),
    record: where,
  };
}
