/**
 * A stand-in AWS endpoint on 127.0.0.1 for wire-level tests: the handler sees each request (method, path, the
 * X-Amz-Target of JSON protocols, the body) and answers it, or never answers (a hang). The CLIs reach it through
 * AWS_ENDPOINT_URL_<SERVICE>, set by `withEndpoint` for the duration of one in-process run.
 */
import * as http from "http";
import { AddressInfo } from "net";

export interface SeenRequest {
  method: string;
  url: string;
  target?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** What to answer: a status, headers and a JSON body (or raw text), or "hang" to never answer. */
export type Answer = { status?: number; headers?: Record<string, string>; json?: unknown; text?: string } | "hang";

export interface Endpoint {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startEndpoint(handler: (r: SeenRequest) => Answer): Promise<Endpoint> {
  const requests: SeenRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const seen = {
        method: req.method!,
        url: req.url!,
        target: req.headers["x-amz-target"] as string | undefined,
        headers: req.headers,
        body,
      };
      requests.push(seen);
      const answer = handler(seen);
      if (answer === "hang") {
        hanging.add(res);
        return;
      }
      res.statusCode = answer.status ?? 200;
      for (const [k, v] of Object.entries(answer.headers ?? {})) res.setHeader(k, v);
      if (answer.json !== undefined) {
        if (!res.hasHeader("content-type")) res.setHeader("content-type", "application/x-amz-json-1.0");
        res.end(JSON.stringify(answer.json));
      } else res.end(answer.text ?? "");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const CREDENTIALS = { AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test", AWS_REGION: "us-east-1" };

/** Runs `body` with the given AWS_ENDPOINT_URL_<SERVICE> variables (and test credentials) set, then restores them. */
export async function withEnv<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const all = { ...CREDENTIALS, ...vars };
  const saved = Object.fromEntries(Object.keys(all).map((k) => [k, process.env[k]]));
  Object.assign(process.env, all);
  try {
    return await body();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
