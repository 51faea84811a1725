import type { JsonValue } from "type-fest";
import {
  MemoryUserStore,
  type UserFieldName,
  type UserPatch,
  userFieldNames,
} from "../../src/provisioning/index.ts";

/** A request as the reference application received it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  body?: unknown;
}

/** A Fetch-style handler with what it stored and what it received, for assertions. */
export interface ReferenceProvisioning {
  fetch(request: Request): Promise<Response>;
  store: MemoryUserStore;
  received: ReceivedRequest[];
}

const fieldByWireName = new Map<string, UserFieldName>(
  userFieldNames.map((name) => [
    name.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`),
    name,
  ]),
);

/**
 * A minimal, correct Provisioning API (spec 4.1 and 7, plus POST /v1/reset) over a
 * MemoryUserStore: the yardstick that the conformance suite must pass and the deliberately wrong
 * servers are derived from. It serves the endpoints under `prefix` (the provisioner URL's path).
 */
export function createReferenceProvisioning(prefix = ""): ReferenceProvisioning {
  const store = new MemoryUserStore();
  const received: ReceivedRequest[] = [];
  const answer = (status: number, error?: string) =>
    error === undefined ? new Response(null, { status }) : Response.json({ error }, { status });

  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const text = request.method === "GET" ? "" : await request.text();
    let body: unknown;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      received.push({ method: request.method, path: url.pathname, body: text });
      return answer(400, "invalid_json");
    }
    received.push({ method: request.method, path: url.pathname, ...(text && { body }) });
    if (!url.pathname.startsWith(`${prefix}/v1/`)) return answer(404, "not_found");
    const route = `${request.method} ${url.pathname.slice(prefix.length)}`;
    if (route === "GET /v1/ping") return answer(204);
    if (route === "POST /v1/reset") {
      await store.reset();
      return answer(204);
    }
    if (route === "POST /v1/user/create" || route === "POST /v1/user/modify") {
      const patch = toPatch(body);
      if (!patch) return answer(400, "invalid_user");
      await store.upsert(patch);
      return answer(route.endsWith("create") ? 201 : 204);
    }
    const deleted = /^DELETE \/v1\/user\/([^/]+)$/.exec(route);
    if (deleted?.[1]) {
      await store.delete(decodeURIComponent(deleted[1]));
      return answer(204);
    }
    return answer(404, "not_found");
  };
  return { fetch, store, received };
}

function toPatch(body: unknown): UserPatch | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const { uuid, ...fields } = body as Record<string, JsonValue>;
  if (typeof uuid !== "string" || uuid === "") return undefined;
  const patch: UserPatch = { uuid };
  const extra: [string, JsonValue][] = [];
  for (const [key, value] of Object.entries(fields)) {
    const field = fieldByWireName.get(key);
    if (field && (typeof value === "string" || value === null)) patch[field] = value;
    else extra.push([key, value]);
  }
  if (extra.length > 0) patch.extra = Object.fromEntries(extra);
  return patch;
}
