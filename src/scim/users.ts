// The /Users operations over the store: each reads the stored user, works on its SCIM form, and
// writes it back whole in one upsert. Writes to one user take turns in this process (a keyed
// lock), so a PATCH reads what the previous one wrote; a user's uniqueness is the store's unique
// index across replicas, and a look-up here within one.
import { KeyedLock } from "../provisioning/keyed-lock.ts";
import { isUserConflict } from "../provisioning/user-conflict-error.ts";
import type { UserRecord } from "../provisioning/user-record.ts";
import { badValue, mutability, ScimError } from "./errors.ts";
import { type Filter, type JsonObject, matches, ownValue, parseFilter } from "./filter.ts";
import type { ScimUserStore } from "./handler-options.ts";
import { patchOf, resourceOf, type ScimTimes } from "./mapping.ts";
import { applyPatch, readPatchBody } from "./patch.ts";
import { served } from "./present.ts";
import { normalizeResource } from "./resource.ts";
import { listResponseSchema } from "./schemas.ts";

/** A user as served, with its ETag. */
export interface ServedUser {
  body: JsonObject;
  version: string;
}

/** A ListResponse. */
export interface ListPage {
  schemas: [string];
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
  Resources: JsonObject[];
}

const notFound = (id: string) =>
  new ScimError(404, `No user has the id ${JSON.stringify(id.slice(0, 100))}`);

/** The /Users operations; `location(id)` is a user's meta.location. */
export function createUserOperations(
  store: ScimUserStore,
  location: (id: string) => string,
  maxResults: number,
  now: () => string = () => new Date().toISOString(),
) {
  const lock = new KeyedLock();

  async function locked<T>(key: string, body: () => Promise<T>): Promise<T> {
    await lock.acquire(key);
    try {
      return await body();
    } finally {
      lock.release(key);
    }
  }

  function serve(user: UserRecord): ServedUser {
    const { resource, times } = resourceOf(user);
    const body = served(user.uuid, resource, times, location(user.uuid));
    return { body, version: (body.meta as JsonObject).version as string };
  }

  /** The live user with this id (a deleted one kept by `onDelete: "deactivate"` is gone). */
  async function live(id: string): Promise<UserRecord> {
    const user = await store.get(id);
    if (user === undefined || user.deactivatedAt !== undefined) throw notFound(id);
    return user;
  }

  /** Throws 409 when another live user holds `userName` (SCIM compares it without case). */
  async function checkUserName(userName: unknown, self: string | undefined): Promise<void> {
    if (typeof userName !== "string") throw badValue("userName is required");
    const lower = userName.toLowerCase();
    const users = await store.list();
    if (users.some((user) => user.uuid !== self && user.username?.toLowerCase() === lower)) {
      throw new ScimError(409, "Another user has this userName", "uniqueness");
    }
  }

  async function write(uuid: string, resource: JsonObject, times: ScimTimes): Promise<ServedUser> {
    try {
      const { user } = await store.upsert(patchOf(uuid, resource, times));
      return serve(user);
    } catch (error) {
      if (isUserConflict(error)) {
        const field = (error as { field?: string }).field;
        throw new ScimError(
          409,
          `Another user holds this ${field === undefined ? "value" : `${field} (a unique field of the store)`}`,
          "uniqueness",
        );
      }
      throw error;
    }
  }

  function checkVersion(current: ServedUser, ifMatch: string | undefined): void {
    if (ifMatch !== undefined && !listsVersion(ifMatch, current.version)) {
      throw new ScimError(412, "The user has changed since the version given in If-Match");
    }
  }

  return {
    async get(id: string): Promise<ServedUser> {
      return serve(await live(id));
    },

    async create(body: unknown): Promise<ServedUser> {
      const resource = normalizeResource(body);
      const userName = resource.userName;
      if (typeof userName !== "string") throw badValue("userName is required");
      return locked(`userName:${userName.toLowerCase()}`, async () => {
        await checkUserName(userName, undefined);
        const stamp = now();
        return write(crypto.randomUUID(), resource, { created: stamp, lastModified: stamp });
      });
    },

    async replace(id: string, body: unknown, ifMatch?: string): Promise<ServedUser> {
      const resource = normalizeResource(body);
      return locked(id, async () => {
        const user = await live(id);
        checkVersion(serve(user), ifMatch);
        if (resource.userName?.toString().toLowerCase() !== user.username?.toLowerCase()) {
          await checkUserName(resource.userName, id);
        }
        const { times } = resourceOf(user);
        return write(id, resource, { created: times.created, lastModified: now() });
      });
    },

    async patch(id: string, body: unknown, ifMatch?: string): Promise<ServedUser> {
      const operations = readPatchBody(body);
      return locked(id, async () => {
        const user = await live(id);
        checkVersion(serve(user), ifMatch);
        const { resource, times } = resourceOf(user);
        const patched = applyPatch(resource, operations);
        if (typeof patched.userName !== "string") throw mutability("userName is required");
        if (patched.userName.toLowerCase() !== user.username?.toLowerCase()) {
          await checkUserName(patched.userName, id);
        }
        return write(id, patched, { created: times.created, lastModified: now() });
      });
    },

    async remove(id: string, ifMatch?: string): Promise<void> {
      await locked(id, async () => {
        const user = await live(id);
        checkVersion(serve(user), ifMatch);
        await store.delete(id);
      });
    },

    async list(query: URLSearchParams): Promise<ListPage> {
      const text = query.get("filter");
      const filter = text === null || text.trim() === "" ? undefined : parseFilter(text);
      const startIndex = Math.max(1, integerOf(query.get("startIndex"), 1));
      const count = Math.min(maxResults, Math.max(0, integerOf(query.get("count"), maxResults)));
      const found = (await candidates(filter)).map(serve).map((user) => user.body);
      const hits = filter === undefined ? found : found.filter((body) => matches(filter, body));
      const page = hits.slice(startIndex - 1, startIndex - 1 + count);
      return {
        schemas: [listResponseSchema],
        totalResults: hits.length,
        startIndex,
        itemsPerPage: page.length,
        Resources: page,
      };
    },
  };

  /** The users a filter can match: one by id, else every live user. */
  async function candidates(filter: Filter | undefined): Promise<UserRecord[]> {
    if (
      filter?.op === "eq" &&
      filter.path.attribute.toLowerCase() === "id" &&
      filter.path.subAttribute === undefined
    ) {
      if (typeof filter.value !== "string") return [];
      const user = await store.get(filter.value);
      return user === undefined || user.deactivatedAt !== undefined ? [] : [user];
    }
    return store.list();
  }
}

/** Whether an If-Match or If-None-Match header lists `version` (or is `*`). */
export function listsVersion(header: string, version: string): boolean {
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed === version;
  });
}

/** An integer query parameter (RFC 7644 §3.4.2.4), or `fallback` when absent or not a number. */
function integerOf(text: string | null, fallback: number): number {
  if (text === null || text.trim() === "") return fallback;
  const value = Number(text);
  return Number.isFinite(value) ? Math.trunc(value) : fallback;
}

export { ownValue };
