/**
 * A client of Sluice's admin API (/admin/v1 on the admin listener), generated
 * from the API's OpenAPI document (schema.gen.ts, ops.gen.ts: make clients) and
 * driven by openapi-fetch, with a small hand-written layer (this file):
 *
 * - createAdminClient authenticates every request with an admin token;
 * - a create is sent with an Idempotency-Key (a fresh one unless the request
 *   carries one), so a retry never makes it twice;
 * - an answer 429, or 503 to a request safe to repeat (GET, PUT, DELETE, or a
 *   create under its key), is retried after its Retry-After;
 * - every refusal throws a ProblemError carrying the API's problem detail;
 * - every list operation that pages by cursor has an async iterator in `iterate`.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.gen.js";
import { creates } from "./ops.gen.js";

export type { components, paths } from "./schema.gen.js";
export * as iterate from "./ops.gen.js";

/** The API's RFC 9457 problem detail. */
export type Problem = components["schemas"]["Problem"];

/** A refusal of the API: its status and problem detail. */
export class ProblemError extends Error {
  readonly status: number;
  readonly problem: Problem;
  constructor(status: number, problem: Problem) {
    const where = (problem.errors ?? []).map((e) => `; ${e.location}: ${e.message}`).join("");
    super(`sluice admin API: ${status} ${problem.title ?? ""}${problem.detail ? ": " + problem.detail : ""}${where}`);
    this.name = "ProblemError";
    this.status = status;
    this.problem = problem;
  }
}

/** The options of createAdminClient. */
export interface AdminClientOptions {
  /** The admin listener, e.g. http://127.0.0.1:8082. */
  baseUrl: string;
  /** An admin token (`sluice admintoken create`). */
  token: string;
  /** How many times a 429 or 503 is sent again (default 4; 0: never). */
  retries?: number;
  /** The longest wait between attempts accepted, in ms (default 30000): a longer Retry-After throws at once. */
  maxWaitMs?: number;
  /** The fetch to send with (default globalThis.fetch). */
  fetch?: typeof fetch;
}

/** A client of the admin API: every operation by its path, e.g. client.POST("/admin/v1/tenants", { body }). */
export type AdminClient = Client<paths>;

/** A fresh Idempotency-Key (what the client sends on a create that carries none). */
export function idempotencyKey(): string {
  return crypto.randomUUID();
}

/** Returns a client of the admin API at options.baseUrl authenticating with options.token. */
export function createAdminClient(options: AdminClientOptions): AdminClient {
  return createClient<paths>({ baseUrl: options.baseUrl, fetch: sender(options) });
}

function sender(o: AdminClientOptions): (req: Request) => Promise<Response> {
  const send = o.fetch ?? globalThis.fetch;
  const retries = o.retries ?? 4;
  const maxWait = o.maxWaitMs ?? 30_000;
  return async (req: Request) => {
    req.headers.set("Authorization", `Bearer ${o.token}`);
    const path = new URL(req.url).pathname;
    const create = creates.some((c) => c.method === req.method && c.path.test(path));
    if (create && !req.headers.has("Idempotency-Key")) req.headers.set("Idempotency-Key", idempotencyKey());
    const safe = create || ["GET", "PUT", "DELETE"].includes(req.method);
    for (let attempt = 0; ; attempt++) {
      const res = await send(req.clone());
      if (res.status < 400) return res;
      const again = res.status === 429 || (res.status === 503 && safe);
      const wait = retryAfter(res.headers.get("Retry-After")) ?? Math.min(250 * 2 ** attempt, maxWait);
      if (!again || attempt >= retries || wait > maxWait) throw await problemOf(res);
      await res.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
}

/** Reads Retry-After (seconds or an HTTP date) as ms. */
export function retryAfter(h: string | null, now = Date.now()): number | undefined {
  if (!h) return undefined;
  if (/^\d+$/.test(h)) return Number(h) * 1000;
  const at = Date.parse(h);
  return Number.isNaN(at) ? undefined : Math.max(at - now, 0);
}

async function problemOf(res: Response): Promise<ProblemError> {
  const text = await res.text();
  let problem: Problem = { type: "about:blank" };
  if (/json/.test(res.headers.get("Content-Type") ?? "")) {
    try {
      problem = JSON.parse(text) as Problem;
    } catch {
      // not a problem detail: described by its status below
    }
  }
  problem.status ??= res.status;
  problem.title ??= res.statusText;
  if (!problem.detail && !text.trimStart().startsWith("{") && text) problem.detail = text.slice(0, 200).trim();
  return new ProblemError(res.status, problem);
}
