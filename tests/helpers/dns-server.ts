/**
 * A DNS server on 127.0.0.1 (UDP, node:dgram) for the preflight's DMARC lookups: it reads each query's name and type
 * (RFC 1035 §4.1) and answers TXT records, no such name (NXDOMAIN), a name without records (NOERROR, no answer),
 * SERVFAIL, or nothing at all (a hang). Node's resolver reaches it through setServers(["127.0.0.1:<port>"]).
 */
import * as dgram from "dgram";
import { Resolver } from "dns/promises";
import { dnsLookup, TxtResolver } from "../../scripts/lib/aws/dmarc";

export type DnsAnswer = { txt: string[][] } | "nxdomain" | "nodata" | "servfail" | "hang";

export interface DnsServer {
  address: string;
  /** Each query's name (lower-cased) and type (16 = TXT), in order. */
  queries: { name: string; type: number }[];
  close(): Promise<void>;
}

export async function startDnsServer(answer: (name: string, type: number) => DnsAnswer): Promise<DnsServer> {
  const socket = dgram.createSocket("udp4");
  const queries: DnsServer["queries"] = [];
  socket.on("message", (msg, from) => {
    const q = readQuestion(msg);
    queries.push({ name: q.name, type: q.type });
    const a = answer(q.name, q.type);
    if (a === "hang") return;
    socket.send(response(msg, q.end, a), from.port, from.address);
  });
  await new Promise<void>((r) => socket.bind(0, "127.0.0.1", () => r()));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    close: () => new Promise<void>((r) => socket.close(() => r())),
  };
}

/** The first question's name, type and where it ends (the header is 12 bytes; the name is length-prefixed labels). */
function readQuestion(msg: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (msg[at] !== 0) {
    labels.push(msg.subarray(at + 1, at + 1 + msg[at]).toString("latin1"));
    at += 1 + msg[at];
  }
  at += 1;
  return { name: labels.join(".").toLowerCase(), type: msg.readUInt16BE(at), end: at + 4 };
}

function response(query: Buffer, questionEnd: number, a: Exclude<DnsAnswer, "hang">): Buffer {
  const rcode = a === "nxdomain" ? 3 : a === "servfail" ? 2 : 0;
  const records = typeof a === "object" ? a.txt : [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // the id
  // QR, the query's opcode and RD, AA; RA; the rcode.
  header[2] = 0x80 | (query[2] & 0x79) | 0x04;
  header[3] = 0x80 | rcode;
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const answers = records.map((strings) => {
    const rdata = Buffer.concat(
      strings.map((s) => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)])),
    );
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    rr.writeUInt16BE(16, 2); // TXT
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(300, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, query.subarray(12, questionEnd), ...answers]);
}

/** A resolver asking only `server` (what the preflight's dnsLookup.resolver returns in tests). */
export function resolverFor(server: DnsServer): TxtResolver {
  const r = new Resolver({ timeout: dnsLookup.timeoutMs, tries: dnsLookup.tries });
  r.setServers([server.address]);
  return r;
}
