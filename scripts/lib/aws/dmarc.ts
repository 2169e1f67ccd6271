/**
 * The From domain's DMARC record (RFC 7489): a DNS TXT lookup of `_dmarc.<domain>`, bounded in time. Gmail and
 * Yahoo require one of bulk senders. Without a record at the From domain, its parent domains are asked down to two
 * labels (DMARCbis's tree walk; there is no Public Suffix List here, so `example.co.uk` stops at `co.uk`).
 */
import { Resolver } from "dns/promises";

/** What the lookup needs of node's Resolver. */
export interface TxtResolver {
  resolveTxt(name: string): Promise<string[][]>;
  cancel(): void;
}

/**
 * How lookups are made: each query waits `timeoutMs` and is tried `tries` times per server by node's resolver; the
 * whole lookup is abandoned after `totalMs` whatever the resolver does. Tests replace `resolver` (a local DNS server
 * through setServers, or a fake).
 */
export const dnsLookup = {
  timeoutMs: 2_000,
  tries: 2,
  totalMs: 10_000,
  resolver: (): TxtResolver => new Resolver({ timeout: dnsLookup.timeoutMs, tries: dnsLookup.tries }),
};

export type DmarcLookup =
  /** One DMARC record, at `name`; `policy` is its p= tag. */
  | { kind: "found"; name: string; record: string; policy: string | undefined }
  /** No DMARC record at any of `names` (each answered: no such name, or no TXT record starting v=DMARC1). */
  | { kind: "none"; names: string[] }
  /** More than one DMARC record at `name`: receivers then apply none (RFC 7489 §6.6.3). */
  | { kind: "several"; name: string; records: number }
  /** The lookup of `name` could not tell (no answer in time, a server failure): `problem` says which. */
  | { kind: "unknown"; name: string; problem: string };

/** The names asked, in order: `_dmarc.` the domain, then each parent down to two labels. */
export function dmarcNames(domain: string): string[] {
  const labels = domain.toLowerCase().replace(/\.$/, "").split(".");
  const names: string[] = [];
  for (let i = 0; labels.length - i >= 2; i++) names.push(`_dmarc.${labels.slice(i).join(".")}`);
  return names;
}

/** Node's answers that mean "nothing there" (the name does not exist, or has no TXT record). */
const ABSENT = new Set(["ENOTFOUND", "ENODATA"]);

/** Looks the domain's DMARC record up; `signal` (the command's deadline) cuts it short too. */
export async function lookupDmarc(domain: string, signal?: AbortSignal): Promise<DmarcLookup> {
  const names = dmarcNames(domain);
  const resolver = dnsLookup.resolver();
  const started = Date.now();
  for (const name of names) {
    const left = dnsLookup.totalMs - (Date.now() - started);
    let answer: string[][] | undefined;
    try {
      answer = await bounded(resolver, name, left, signal);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "";
      if (ABSENT.has(code)) continue;
      return { kind: "unknown", name, problem: problemText(code, e as Error) };
    }
    // A TXT record may be split into strings of up to 255 bytes: joined, as RFC 7208 §3.3 has receivers do.
    const records = answer.map((chunks) => chunks.join("")).filter((r) => /^v=DMARC1\s*(;|$)/i.test(r));
    if (records.length > 1) return { kind: "several", name, records: records.length };
    if (records.length === 1) return { kind: "found", name, record: records[0], policy: tagOf(records[0], "p") };
  }
  return { kind: "none", names };
}

/** One query within `ms` (and the signal): a hang is cancelled and reported as a timeout. */
async function bounded(resolver: TxtResolver, name: string, ms: number, signal?: AbortSignal): Promise<string[][]> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const limit = new Promise<never>((_, reject) => {
    const stop = (code: string) => () => {
      resolver.cancel();
      reject(Object.assign(new Error(code), { code }));
    };
    timer = setTimeout(stop("ETOTAL"), Math.max(ms, 0));
    onAbort = stop("EDEADLINE");
    if (signal?.aborted) onAbort();
    signal?.addEventListener("abort", onAbort);
  });
  try {
    return await Promise.race([resolver.resolveTxt(name), limit]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    limit.catch(() => {});
  }
}

function problemText(code: string, e: Error): string {
  if (code === "ETOTAL") return `no answer within ${dnsLookup.totalMs / 1000} s`;
  if (code === "EDEADLINE") return "the command's time limit (--timeout-seconds) ran out";
  if (code === "ETIMEOUT")
    return `no answer within ${dnsLookup.timeoutMs / 1000} s, ${dnsLookup.tries} ${dnsLookup.tries === 1 ? "try" : "tries"}`;
  if (code === "ESERVFAIL") return "the DNS server answered SERVFAIL";
  if (code === "EREFUSED") return "the DNS server refused the query";
  if (code === "ECANCELLED") return "the lookup was cancelled";
  return `${code || "error"}: ${e.message.split("\n")[0]}`;
}

/** A tag's value in a DMARC record ("p" of "v=DMARC1; p=reject"), lower-cased. */
function tagOf(record: string, tag: string): string | undefined {
  for (const part of record.split(";")) {
    const [k, v] = part.split("=").map((s) => s.trim());
    if (k?.toLowerCase() === tag && v !== undefined) return v.toLowerCase();
  }
  return undefined;
}
