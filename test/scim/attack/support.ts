// Attack helpers: a SCIM client over a handler's Web entry.
import type { ScimHandler, ScimUserStore } from "../../../src/scim/index.ts";

export const token = "attack-token";
export const patchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: loose reads in attack tests
  body: any;
}

export function clientOf(handler: Pick<ScimHandler, "fetch">, base = "/scim/v2") {
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> => {
    const response = await handler.fetch(
      new Request(`http://127.0.0.1${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/scim+json" }),
          ...headers,
        },
        ...(body === undefined
          ? {}
          : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      }),
    );
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {}
    return { status: response.status, headers: response.headers, body: parsed };
  };
}

export type { ScimUserStore };
