/**
 * The addresses opted out in the stack's SES contact list, read before a bulk launch. SES drops a send to an
 * opted-out contact only when the send carries ListManagementOptions, and SendBulkEmail cannot: so a real
 * `launch-campaign --bulk` rejects those rows itself (reason opted-out) instead of planning them.
 *
 * Two listings of ListContacts (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_ListContacts.html), every
 * page of each, within the command's Deadline, a repeated page token refused (call.ts allPages):
 *   1. Filter {FilteredStatus: OPT_OUT, TopicFilter: {TopicName, UseDefaultIfPreferenceUnavailable: true}}: the
 *      topic's opt-outs, as SES documents the filter (API_ListContactsFilter.html, API_TopicFilter.html); a contact
 *      with no preference for the topic counts by the topic's default.
 *   2. No filter: every contact, for UnsubscribeAll. ListContactsFilter has no field for it, and the reference does not
 *      say that listing 1 includes contacts unsubscribed from every topic; a Contact carries UnsubscribeAll
 *      (API_Contact.html), so the whole list is read and each contact judged by it.
 * SES may answer a filtered page with no contacts and a token (aws/aws-cli#8742): only a page without NextToken ends a
 * listing. Each contact is judged by its own fields, whichever listing returned it (a filter that returns an opted-in
 * contact rejects nobody, aws/aws-sdk-js#4143).
 *
 * Memory: one Map entry per opted-out address (the address as the opt-out table keys it), nothing per other contact.
 */
import { Contact, ListContactsCommand, ListContactsCommandInput, SESv2Client } from "@aws-sdk/client-sesv2";
import { allPages, Deadline, throttled } from "./call";
import { unsubscribeAddress } from "../../../infra/core/consent/unsubscribe";
import { OptOutKind } from "../../../infra/core/consent/ses-subscription";

/** SES's largest page of contacts (it answers 1,000 at most: aws/aws-sdk-js#3570). */
const PAGE_SIZE = 1_000;

export interface ContactListTopic {
  contactListName: string;
  topicName: string;
}

export interface ContactListOptOuts extends ContactListTopic {
  /** Opted-out addresses (trimmed, lower-cased: unsubscribeAddress) and how. */
  optedOut: Map<string, OptOutKind>;
  /** Contacts read over both listings (a contact in both counts twice). */
  contactsRead: number;
}

export async function readContactListOptOuts(
  d: Deadline,
  ses: SESv2Client,
  list: ContactListTopic,
  progress: (text: string) => void = () => {},
): Promise<ContactListOptOuts> {
  const found: ContactListOptOuts = { ...list, optedOut: new Map(), contactsRead: 0 };
  const say = throttled(progress);
  const listings: { what: string; filter?: ListContactsCommandInput["Filter"] }[] = [
    {
      what: `SES ListContacts of contact list ${list.contactListName} (opted out of topic ${list.topicName})`,
      filter: {
        FilteredStatus: "OPT_OUT",
        TopicFilter: { TopicName: list.topicName, UseDefaultIfPreferenceUnavailable: true },
      },
    },
    { what: `SES ListContacts of contact list ${list.contactListName} (every contact, for UnsubscribeAll)` },
  ];
  for (const { what, filter } of listings) {
    const pages = allPages(
      d,
      what,
      (token, options) =>
        ses.send(
          new ListContactsCommand({
            ContactListName: list.contactListName,
            ...(filter ? { Filter: filter } : {}),
            PageSize: PAGE_SIZE,
            ...(token ? { NextToken: token } : {}),
          }),
          options,
        ),
      (page) => page.NextToken,
    );
    for await (const page of pages) {
      for (const contact of page.Contacts ?? []) {
        found.contactsRead++;
        const kind = optOutKind(contact, list.topicName);
        if (kind && typeof contact.EmailAddress === "string") {
          const address = unsubscribeAddress(contact.EmailAddress);
          // Every topic outranks one: the reject names the broader opt-out.
          if (found.optedOut.get(address) !== "all") found.optedOut.set(address, kind);
        }
      }
      say(
        () =>
          `contact list ${list.contactListName}: ${found.contactsRead} contacts read, ${found.optedOut.size} opted out`,
      );
    }
  }
  return found;
}

/** Whether a contact may not be mailed on `topic`: UnsubscribeAll, its own OPT_OUT, or no preference and an OPT_OUT default. */
export function optOutKind(c: Contact, topic: string): OptOutKind | undefined {
  if (c.UnsubscribeAll === true) return "all";
  const own = c.TopicPreferences?.find((p) => p.TopicName === topic);
  const status = own
    ? own.SubscriptionStatus
    : c.TopicDefaultPreferences?.find((p) => p.TopicName === topic)?.SubscriptionStatus;
  return status === "OPT_OUT" ? "topic" : undefined;
}
