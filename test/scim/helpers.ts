// Calls a SCIM handler through its Web entry, as an identity provider would.
import { MemoryUserStore, type MemoryUserStoreOptions } from "../../src/provisioning/index.ts";
import {
  createScimHandler,
  type ScimHandler,
  type ScimHandlerOptions,
} from "../../src/scim/index.ts";

export const token = "s3cret-token-for-tests";
export const userSchema = "urn:ietf:params:scim:schemas:core:2.0:User";
export const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const patchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const errorSchema = "urn:ietf:params:scim:api:messages:2.0:Error";

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads an answer's members loosely; toMatchObject checks them
  body: any;
}

/** One request to `handler`, bearer token included unless `headers.authorization` says otherwise. */
export async function scim(
  handler: Pick<ScimHandler, "fetch">,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await handler.fetch(
    new Request(`http://127.0.0.1${path}`, {
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
  return {
    status: response.status,
    headers: response.headers,
    body: text === "" ? undefined : JSON.parse(text),
  };
}

export function setup(
  options: Partial<ScimHandlerOptions> = {},
  storeOptions: MemoryUserStoreOptions = {},
) {
  const store = new MemoryUserStore(storeOptions);
  const handler = createScimHandler({ store, token, ...options });
  return { store, handler };
}

/** What Entra ID POSTs for a new user (Microsoft's tutorial, string boolean included). */
export function entraUser(userName: string, externalId = `ext-${userName}`) {
  return {
    schemas: [userSchema, enterprise],
    externalId,
    userName,
    active: "True",
    emails: [{ primary: true, type: "work", value: `${userName}@example.com` }],
    meta: { resourceType: "User" },
    name: { formatted: "Ryan Leenay", familyName: "Leenay", givenName: "Ryan" },
    roles: [],
  };
}
