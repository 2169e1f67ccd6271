/** What the launcher is asked to plan (plan.ts planCampaign): the list, its rules, audience and rates, the files. */
import { Readable } from "stream";
import { OptOutKind } from "../../../infra/core/consent/ses-subscription";
import { QuietTime } from "../../../infra/core/timing/quiet-time";
import { BaseRule } from "../../../infra/core/timing/send-rules";
import { Step } from "../../../infra/core/timing/send-time";
import { InferSource, ZoneAliases } from "../../../infra/core/zones/zone-names";
import { Audience } from "../recipients/audience";
import { CsvEncoding } from "../recipients/recipients";
import { RowProgress } from "../recipients/row-progress";
import { TemplateSet } from "../templates/campaign-templates";
import { BulkSigning } from "./unsubscribe-links";
import { AmbiguousZonePolicy } from "./decision-types";
import { MissedPolicy } from "./missed";
import { OutputLock } from "./output-folder";
import { PlanSink } from "./line-writer";
import { EffectiveTps } from "./window";
import { Ramp } from "./ramp";
import { SmsRequest } from "./sms-steps";

export interface PlanRequest {
  campaignId: string;
  /** The recipient CSV's path, or its name in messages when `input` is given. */
  file: string;
  /** The output folder, locked by the caller for this run (OutputLock.acquire). */
  out: OutputLock;
  /** The list as a stream read once (e.g. from S3), with its size in bytes; without it, `file` is read from disk. */
  input?: { stream: Readable; bytes: number };
  /** Where the plan lines go as they are written (an upload), besides plan.jsonl; `localPlan: false` leaves that out. */
  planSink?: PlanSink;
  localPlan?: boolean;
  /** When step 1 is sent (a row's send_at replaces it). */
  rule: BaseRule;
  /** Every step, each with its SES template (`{variant}` in it is replaced by the recipient's variant). */
  steps: (Step & { template: string })[];
  defaultZone: string;
  quiet?: QuietTime;
  /** Variants and holdout; none when both are empty. */
  audience: Audience;
  missed: { policy: MissedPolicy; graceMinutes: number };
  /** Safety margin after the fan-out's estimated end before a send counts as reachable. */
  marginMinutes: number;
  now: number;
  /** CreateSchedule rate the fan-out is expected to sustain, for its ETA. */
  createTps: number;
  rate: EffectiveTps;
  /**
   * How the list is read and checked; strictZones rejects rows with no usable zone instead of defaulting them (or
   * mapping them through the zone table); zoneAliases (`--zone-alias X=ZONE`) are read before that table.
   */
  recipients: RecipientReading;
  /** A window chosen by the caller instead of a computed one; `source` says where it came from. */
  window?: { minutes: number; source: string };
  /**
   * Bulk sends (--bulk, one-time rules only): recipients of a step who share its instant and variant share schedules
   * of up to 50 entries (bulk.ts), each entry signed with `signing`. The window holds emails at `rates.emails` and
   * schedules (invocations) at `rates.invocations`; `rate` is then the emails' rate.
   */
  bulk?: {
    signing: BulkSigning;
    rates: { emails: EffectiveTps; invocations: EffectiveTps };
    /** The stack's SES contact list, read at launch (none in a dry run: not checked). */
    contactList?: ContactListCheck;
    /** Texts a bulk line of texts holds (sms-bulk.ts smsBulkEntriesPerLine: the pool's pace); SMS_MAX_ENTRIES when not given. */
    smsEntriesPerLine?: number;
  };
  /** The templates folder, read: a row whose data lacks a variable its templates need is rejected. None: no check. */
  templates?: TemplateSet;
  /** The uses of those templates the check cannot read (campaign-templates.ts uncheckedForms), for the summary. */
  templatesNotChecked?: string[];
  /** A warm-up: at most a cap of sends per UTC day (ramp.ts); recipients past it move to a later day. */
  ramp?: Ramp;
  /** Called with each planned recipient's address (a launch in SES's sandbox checks them against its identities). */
  onPlanned?: (email: string) => void;
  /** Text steps (channel sms): their templates, --max-segments and legal hours; none without a text step. */
  sms?: SmsRequest;
  /** Rows read so far, of the local file's row bound (none for a streamed list: its bound is far too loose for an ETA). */
  progress?: RowProgress;
}

/**
 * The addresses opted out in the stack's SES contact list, read by a real --bulk launch (SendBulkEmail carries no
 * ListManagementOptions, so SES would not drop them): a row whose address, as the opt-out table keys it
 * (unsubscribeAddress), is here is rejected `opted-out` before it is planned.
 */
export interface ContactListCheck {
  contactListName: string;
  topicName: string;
  /** Address → "topic" (opted out of the topic) or "all" (unsubscribed from every topic of the list). */
  optedOut: ReadonlyMap<string, OptOutKind>;
}

/** How a recipient list is read and checked, the launcher's and size-window's alike (RecipientChecker's options). */
export interface RecipientReading {
  encoding: CsvEncoding;
  allowDuplicateEmails: boolean;
  strictZones: boolean;
  zoneAliases?: ZoneAliases;
  inferZone?: readonly InferSource[];
  ambiguousZone?: AmbiguousZonePolicy;
}
