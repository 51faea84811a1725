// The /Users operations over the store: each reads the stored user, works on its SCIM form, and
// writes it back whole with `store.replace`, conditionally on the stored user being the one read
// (optimistic concurrency: a replica that lost the race reads again and re-applies). Writes to one
// user also take turns in this process (a keyed lock), so they rarely race at all; see
// docs/scim.md, "Replicas".
import { KeyedLock } from "../users/keyed-lock.ts";
import { asciiLowerCase } from "../users/store-rules.ts";
import { isUserConflict } from "../users/user-conflict-error.ts";
import type { UserRecord } from "../users/user-record.ts";
import { badValue, mutability, ScimError } from "./errors.ts";
import { type JsonObject, matches } from "./evaluate.ts";
import { type Filter, parseFilter } from "./filter.ts";
import type { ScimUserStore } from "./handler-options.ts";
import {
  deletedForScim,
  deletedRecord,
  recordOf,
  resourceOf,
  type ScimTimes,
  scimExtraKey,
} from "./mapping.ts";
import { applyPatch, readPatchBody } from "./patch.ts";
import { served } from "./present.ts";
import { normalizeResource } from "./resource.ts";
import { listResponseSchema, userSchema } from "./schemas.ts";

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

/** How many times a PUT or PATCH reads and writes a user that other replicas keep changing. */
const maxWriteAttempts = 8;

const notFound = (id: string) =>
  new ScimError(404, `No user has the id ${JSON.stringify(id.slice(0, 100))}`);

/** What every /Users operation works over: the store, the settings and the per-user lock. */
interface UserContext {
  store: ScimUserStore;
  location: (id: string) => string;
  maxResults: number;
  now: () => string;
  lock: KeyedLock;
}

/** The /Users operations; `location(id)` is a user's meta.location. */
export function createUserOperations(
  store: ScimUserStore,
  location: (id: string) => string,
  maxResults: number,
  now: () => string = () => new Date().toISOString(),
) {
  const context: UserContext = { store, location, maxResults, now, lock: new KeyedLock() };
  return operationsOver(context);
}

/** The /Users operations over `context`; `locatedBy` gives them with another `location`. */
function operationsOver(context: UserContext) {
  return {
    get: (id: string): Promise<ServedUser> => getUser(context, id),
    create: (body: unknown): Promise<ServedUser> => createUser(context, body),
    replace: (id: string, body: unknown, ifMatch?: string): Promise<ServedUser> =>
      replaceUser(context, id, body, ifMatch),
    patch: (id: string, body: unknown, ifMatch?: string): Promise<ServedUser> =>
      patchUser(context, id, body, ifMatch),
    remove: (id: string, ifMatch?: string): Promise<void> => removeUser(context, id, ifMatch),
    list: (query: URLSearchParams): Promise<ListPage> => listUsers(context, query),
    /** The same operations (the same store and per-user lock) serving users at `location`. */
    locatedBy: (location: (id: string) => string) => operationsOver({ ...context, location }),
  };
}

async function getUser(context: UserContext, id: string): Promise<ServedUser> {
  return serve(context, await live(context, id));
}

async function createUser(context: UserContext, body: unknown): Promise<ServedUser> {
  const resource = normalizeResource(body);
  const userName = resource.userName;
  if (typeof userName !== "string") throw badValue("userName is required");
  return locked(context, `userName:${asciiLowerCase(userName)}`, async () => {
    await checkUserName(context, userName, undefined);
    const stamp = context.now();
    const times = { created: stamp, lastModified: stamp };
    return (await write(context, crypto.randomUUID(), resource, times, undefined)) as ServedUser;
  });
}

async function replaceUser(
  context: UserContext,
  id: string,
  body: unknown,
  ifMatch?: string,
): Promise<ServedUser> {
  const resource = normalizeResource(body);
  return locked(context, id, () =>
    rewrite(context, id, async (user) => {
      checkVersion(serve(context, user), ifMatch);
      if (!sameUserName(resource.userName, user.username)) {
        await checkUserName(context, resource.userName, id);
      }
      const { times } = resourceOf(user);
      return { resource, times: { created: times.created, lastModified: context.now() } };
    }),
  );
}

async function patchUser(
  context: UserContext,
  id: string,
  body: unknown,
  ifMatch?: string,
): Promise<ServedUser> {
  const operations = readPatchBody(body);
  return locked(context, id, () =>
    rewrite(context, id, async (user) => {
      checkVersion(serve(context, user), ifMatch);
      const { resource, times } = resourceOf(user);
      const patched = applyPatch(resource, operations);
      if (typeof patched.userName !== "string") throw mutability("userName is required");
      if (!sameUserName(patched.userName, user.username)) {
        await checkUserName(context, patched.userName, id);
      }
      return { resource: patched, times: { created: times.created, lastModified: context.now() } };
    }),
  );
}

async function removeUser(context: UserContext, id: string, ifMatch?: string): Promise<void> {
  await locked(context, id, async () => {
    const user = await live(context, id);
    checkVersion(serve(context, user), ifMatch);
    // An inactive user is deactivated already, which a store's delete leaves as it is: it is
    // marked deleted first (SCIM answers 404 from then on), then removed where the store
    // removes deleted users (`onDelete: "delete"`).
    if (user.deactivatedAt !== undefined) await context.store.replace(deletedRecord(user));
    await context.store.delete(id);
  });
}

async function listUsers(context: UserContext, query: URLSearchParams): Promise<ListPage> {
  const { maxResults } = context;
  const text = query.get("filter");
  const filter = text === null || text.trim() === "" ? undefined : parseFilter(text);
  const startIndex = Math.max(1, integerOf(query.get("startIndex"), 1));
  const count = Math.min(maxResults, Math.max(0, integerOf(query.get("count"), maxResults)));
  const found = (await candidates(context, filter)).map((user) => serve(context, user).body);
  const hits = filter === undefined ? found : found.filter((body) => matches(filter, body));
  const page = hits.slice(startIndex - 1, startIndex - 1 + count);
  return {
    schemas: [listResponseSchema],
    totalResults: hits.length,
    startIndex,
    itemsPerPage: page.length,
    Resources: page,
  };
}

// --- Shared steps ----------------------------------------------------------------------------

async function locked<T>(context: UserContext, key: string, body: () => Promise<T>): Promise<T> {
  await context.lock.acquire(key);
  try {
    return await body();
  } finally {
    context.lock.release(key);
  }
}

function serve(context: UserContext, user: UserRecord): ServedUser {
  const { resource, times } = resourceOf(user);
  const body = served(user.uuid, resource, times, context.location(user.uuid));
  return { body, version: (body.meta as JsonObject).version as string };
}

/** The user with this id, active or not; a deleted one (kept by the store or not) is gone. */
async function live(context: UserContext, id: string): Promise<UserRecord> {
  const user = await context.store.get(id);
  if (user === undefined || deletedForScim(user)) throw notFound(id);
  return user;
}

/** Every SCIM user, inactive ones included, in the store's order. */
async function everyone(context: UserContext): Promise<UserRecord[]> {
  const users = await context.store.list({ includeDeactivated: true });
  return users.filter((user) => !deletedForScim(user));
}

/** The SCIM users whose userName is `userName`, ignoring ASCII case. */
async function byUserName(context: UserContext, userName: string): Promise<UserRecord[]> {
  const { store } = context;
  if (store.findUsers === undefined) {
    const lower = asciiLowerCase(userName);
    return (await everyone(context)).filter(
      (user) => user.username !== undefined && asciiLowerCase(user.username) === lower,
    );
  }
  const found = await store.findUsers({ field: "username", value: userName, ignoreCase: true });
  return found.filter((user) => !deletedForScim(user));
}

/**
 * Throws 409 when another SCIM user, active or not, holds `userName` (compared without case):
 * a deactivated user keeps its userName, to come back with it.
 */
async function checkUserName(
  context: UserContext,
  userName: unknown,
  self: string | undefined,
): Promise<void> {
  if (typeof userName !== "string") throw badValue("userName is required");
  if ((await byUserName(context, userName)).some((user) => user.uuid !== self)) {
    throw new ScimError(409, "Another user has this userName", "uniqueness");
  }
}

/**
 * Writes the user; over `previous` (the user as read), only if the store still holds it, else
 * resolves undefined (another replica wrote the user since: the caller reads again).
 */
async function write(
  context: UserContext,
  uuid: string,
  resource: JsonObject,
  times: ScimTimes,
  previous: UserRecord | undefined,
): Promise<ServedUser | undefined> {
  const { store } = context;
  const record = recordOf(uuid, resource, times, previous, context.now());
  try {
    const stored =
      previous === undefined
        ? await store.replace(record)
        : await store.replace(record, { expected: previous });
    return stored === undefined ? undefined : serve(context, stored);
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

/**
 * Reads the user and writes what `change` makes of it, conditionally on the stored user being
 * the one read; when another replica wrote it meanwhile, reads it again and applies `change`
 * afresh, at most `maxWriteAttempts` times, then answers 503 (the identity provider retries).
 */
async function rewrite(
  context: UserContext,
  id: string,
  change: (user: UserRecord) => Promise<{ resource: JsonObject; times: ScimTimes }>,
): Promise<ServedUser> {
  for (let attempt = 0; attempt < maxWriteAttempts; attempt++) {
    const user = await live(context, id);
    const { resource, times } = await change(user);
    const written = await write(context, id, resource, times, user);
    if (written !== undefined) return written;
  }
  throw new ScimError(
    503,
    `The user changed under ${maxWriteAttempts} attempts to write it (other replicas writing it at once); retry`,
  );
}

function checkVersion(current: ServedUser, ifMatch: string | undefined): void {
  if (ifMatch !== undefined && !listsVersion(ifMatch, current.version)) {
    throw new ScimError(412, "The user has changed since the version given in If-Match");
  }
}

/**
 * The users a filter can match: found by id, userName or externalId when the filter requires
 * one (alone, or in an `and`), else every SCIM user. The filter itself is applied after.
 */
async function candidates(context: UserContext, filter: Filter | undefined): Promise<UserRecord[]> {
  const { store } = context;
  const key = filter === undefined ? undefined : lookupOf(filter);
  if (key === undefined) return everyone(context);
  if (key.attribute === "id") {
    const user = await store.get(key.value);
    return user === undefined || deletedForScim(user) ? [] : [user];
  }
  if (key.attribute === "username") return byUserName(context, key.value);
  if (store.findUsers === undefined) return everyone(context);
  const found = await store.findUsers({ extra: [scimExtraKey, "externalId"], value: key.value });
  return found.filter((user) => !deletedForScim(user));
}

/** The `id`, `userName` or `externalId` a filter requires, when it requires one. */
function lookupOf(
  filter: Filter,
): { attribute: "id" | "username" | "externalid"; value: string } | undefined {
  if (filter.op === "and") return lookupOf(filter.left) ?? lookupOf(filter.right);
  if (filter.op !== "eq" || typeof filter.value !== "string") return undefined;
  const { schema, attribute, subAttribute } = filter.path;
  if (subAttribute !== undefined || (schema !== undefined && schema !== userSchema)) {
    return undefined;
  }
  const name = attribute.toLowerCase();
  return name === "id" || name === "username" || name === "externalid"
    ? { attribute: name, value: filter.value }
    : undefined;
}

function sameUserName(given: unknown, stored: string | undefined): boolean {
  return (
    typeof given === "string" &&
    stored !== undefined &&
    asciiLowerCase(given) === asciiLowerCase(stored)
  );
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
