/**
 * The shapes of a Pinpoint campaign's mapping (campaign.ts maps): the CampaignResponse fields read, the launch
 * settings and notes it gives, and the launcher's flag names the notes quote.
 */
import { InputError } from "../../../infra/core/errors";

/** A Pinpoint campaign file that does not have the shape of a CampaignResponse; the message names the key. */
export class CampaignShapeError extends InputError {}

/** The CampaignResponse fields read; the rest are reported when they carry a setting. */
export interface PinpointCampaign {
  Id?: string;
  Name?: string;
  SegmentId?: string;
  SegmentVersion?: number;
  HoldoutPercent?: number;
  TreatmentName?: string;
  TemplateConfiguration?: TemplateConfiguration;
  MessageConfiguration?: Record<string, unknown>;
  AdditionalTreatments?: PinpointTreatment[];
  Schedule?: PinpointSchedule;
  Limits?: { Daily?: number; Total?: number; MessagesPerSecond?: number; Session?: number; MaximumDuration?: number };
  Hook?: Record<string, unknown>;
  CustomDeliveryConfiguration?: Record<string, unknown>;
  Priority?: number;
  [key: string]: unknown;
}
export interface TemplateConfiguration {
  EmailTemplate?: { Name?: string; Version?: string };
  [channel: string]: unknown;
}
export interface PinpointTreatment {
  Id?: string;
  SizePercent?: number;
  TreatmentName?: string;
  TemplateConfiguration?: TemplateConfiguration;
  MessageConfiguration?: Record<string, unknown>;
  Schedule?: PinpointSchedule;
}
export interface PinpointSchedule {
  StartTime?: string;
  EndTime?: string;
  IsLocalTime?: boolean;
  Timezone?: string;
  Frequency?: string;
  QuietTime?: { Start?: string; End?: string };
  EventFilter?: { FilterType?: string; Dimensions?: { EventType?: { DimensionType?: string; Values?: string[] } } };
}

/** When the sends happen, in sendtime's terms. */
export type SendTime =
  | { kind: "local"; date: string; hour: number; minute: number; defaultTimezone: string }
  | { kind: "instant"; at: string }
  | { kind: "recurring"; every: string; until: string; hour: number; minute: number; defaultTimezone: string };

export interface Variant {
  name: string;
  percent: number;
  template: string;
}

export interface LaunchSettings {
  campaignId: string;
  template: string;
  sendTime: SendTime;
  quietHours?: { start: string; end: string; policy: "skip" };
  variants: Variant[];
  holdoutPercent?: number;
  tps?: number;
}

/** A setting that needs attention: what Pinpoint had, and what to do in sendtime instead. */
export interface MappingNote {
  setting: string;
  value: string;
  instead: string;
}

export interface CampaignMapping {
  /** Undefined when the campaign cannot be a sendtime campaign (event-triggered: a journey). */
  launch?: LaunchSettings;
  notes: MappingNote[];
}

/** The launcher's flag names, given by the CLI (the core knows meanings, not flags): notes name them. */
export interface FlagNames {
  campaignId: string;
  date: string;
  hour: string;
  minute: string;
  at: string;
  every: string;
  until: string;
  defaultTimezone: string;
  missed: string;
  quietHours: string;
  quiet: string;
}

export type Note = ((setting: string, value: string, instead: string) => void) & { flag: FlagNames };
