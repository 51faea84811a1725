// The /Users operations over the store: each reads the stored user, works on its SCIM form, and
// writes it back whole with `store.replace`, conditionally on the stored user being the one read
// (optimistic concurrency: a replica that lost the race reads again and re-applies), and, when the
// user gets a new userName, on the other holders of that name being the ones read (so that two
// replicas cannot both give one userName, whatever its case). Writes to one user, and writes that
// give one userName, also take turns in this process (keyed locks: a user's, then a name's), so
// they rarely race at all; see docs/scim.md, "Replicas".
import { KeyedLock } from "../users/keyed-lock.ts";
import { asciiLowerCase, storableText } from "../users/store-rules.ts";
import { isUserConflict } from "../users/user-conflict-error.ts";
import type { UserRecord } from "../users/user-record.ts";
import { badValue, mutability, ScimError } from "./errors.ts";
import { type JsonObject, matches } from "./evaluate.ts";
import { type Filter, parseFilter } from "./filter.ts";
import type { ScimUserStore } from "./handler-options.ts";
import {
  deletedForScim,
  deletedRecord,
  hasUserName,
  inactiveForScim,
  recordOf,
  resourceOf,
  type ScimTimes,
  scimExtraKey,
} from "./mapping.ts";
import { applyPatch, readPatchBody } from "./patch.ts";
import { type ServedUser, served } from "./present.ts";
import { normalizeResource } from "./resource.ts";
import { listResponseSchema, userSchema } from "./schemas.ts";

export type { ServedUser };

/** A ListResponse. */
export interface ListPage {
  schemas: [string];
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
  Resources: JsonObject[];
}

/** The largest startIndex read as given (RFC 7644 §3.4.2.4); a larger one is read as this one. */
const maxStartIndex = 2 ** 31 - 1;

/** How many times a PUT or PATCH reads and writes a user that other replicas keep changing. */
const maxWriteAttempts = 8;

const notFound = (id: string) =>
  new ScimError(404, `No user has the id ${JSON.stringify(id.slice(0, 100))}`);

/** What every /Users operation works over: the store, the settings and the locks. */
interface UserContext {
  store: ScimUserStore;
  location: (id: string) => string;
  maxResults: number;
  now: () => string;
  /** Per user id. */
  lock: KeyedLock;
  /**
   * Per userName, ASCII-lowercased: taken by a create and by a rename, inside the user's lock when
   * both are held (never the other way round, so no two requests wait on each other).
   */
  names: KeyedLock;
}

/** The /Users operations; `location(id)` is a user's meta.location. */
export function createUserOperations(
  store: ScimUserStore,
  location: (id: string) => string,
  maxResults: number,
  now: () => string = () => new Date().toISOString(),
) {
  const context: UserContext = {
    store,
    location,
    maxResults,
    now,
    lock: new KeyedLock(),
    names: new KeyedLock(),
  };
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
  const id = crypto.randomUUID();
  const stamp = context.now();
  const times = { created: stamp, lastModified: stamp };
  return locked(context.names, asciiLowerCase(userName), async () => {
    for (let attempt = 0; attempt < maxWriteAttempts; attempt++) {
      const holders = await freeUserName(context, userName, id);
      const written = await write(context, id, resource, times, undefined, holders);
      if (written !== undefined) return written;
    }
    throw contended();
  });
}

async function replaceUser(
  context: UserContext,
  id: string,
  body: unknown,
  ifMatch?: string,
): Promise<ServedUser> {
  const resource = normalizeResource(body);
  if (typeof resource.userName !== "string") throw badValue("userName is required");
  return locked(context.lock, id, () =>
    rewrite(context, id, async (user) => {
      checkVersion(context, user, ifMatch);
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
  return locked(context.lock, id, () =>
    rewrite(context, id, async (user) => {
      checkVersion(context, user, ifMatch);
      const { resource, times } = resourceOf(user);
      const patched = applyPatch(resource, operations);
      if (typeof patched.userName !== "string") throw mutability("userName is required");
      return { resource: patched, times: { created: times.created, lastModified: context.now() } };
    }),
  );
}

/**
 * Deletes with the store's delete, which removes the row (`onDelete: "delete"`) or deactivates an
 * active user (SCIM then reads it as deleted). A user SCIM deactivated is one a store that keeps
 * deactivated rows leaves as it is: it is then marked deleted, conditionally on it being as read
 * just after. In that order, a failure of either step leaves a user SCIM still reads, so the 5xx
 * it answers is retried to completion; marked first, a failed delete would leave a row SCIM
 * answers 404 for, that no retry could remove.
 */
async function removeUser(context: UserContext, id: string, ifMatch?: string): Promise<void> {
  await locked(context.lock, id, async () => {
    const { store } = context;
    checkVersion(context, await live(context, id), ifMatch);
    for (let attempt = 0; attempt < maxWriteAttempts; attempt++) {
      await store.delete(id);
      const left = await store.get(id);
      if (left === undefined || deletedForScim(left)) return;
      // Inactive and kept; or made active again by another replica since the delete (deleted
      // again on the next round).
      if (left.deactivatedAt === undefined) continue;
      if ((await store.replace(deletedRecord(left), { expected: left })) !== undefined) return;
    }
    throw contended();
  });
}

async function listUsers(context: UserContext, query: URLSearchParams): Promise<ListPage> {
  const { maxResults } = context;
  const text = query.get("filter");
  const filter = text === null || text.trim() === "" ? undefined : parseFilter(text);
  // Past the end of any store, and an offset every store takes (SQLite and PostgreSQL refuse one
  // past 2^63, node:sqlite one that is not a safe integer): a page past the end is empty.
  const startIndex = Math.min(maxStartIndex, Math.max(1, integerOf(query.get("startIndex"), 1)));
  const count = Math.min(maxResults, Math.max(0, integerOf(query.get("count"), maxResults)));
  let page: JsonObject[];
  let totalResults: number;
  if (filter === undefined && context.store.listPage !== undefined) {
    // Paged by the store: one page read, and the total counted there.
    const read = await context.store.listPage({
      offset: startIndex - 1,
      limit: count,
      includeDeactivated: inactiveForScim,
    });
    page = read.users.map((user) => serve(context, user).body);
    totalResults = read.total;
  } else {
    // A filter on attributes the store cannot look up is evaluated here, over every user.
    const found = (await candidates(context, filter)).map((user) => serve(context, user).body);
    const hits = filter === undefined ? found : found.filter((body) => matches(filter, body));
    page = hits.slice(startIndex - 1, startIndex - 1 + count);
    totalResults = hits.length;
  }
  return {
    schemas: [listResponseSchema],
    totalResults,
    startIndex,
    itemsPerPage: page.length,
    Resources: page,
  };
}

// --- Shared steps ----------------------------------------------------------------------------

async function locked<T>(lock: KeyedLock, key: string, body: () => Promise<T>): Promise<T> {
  await lock.acquire(key);
  try {
    return await body();
  } finally {
    lock.release(key);
  }
}

/** The 503 of a write that lost the race to other replicas at every attempt. */
function contended(): ScimError {
  return new ScimError(
    503,
    `The user (or the holders of its userName) changed under ${maxWriteAttempts} attempts to write it (other replicas writing at once); retry`,
  );
}

/** `user` as served; the body shares values with `user`, which the caller gives up. */
function serve(context: UserContext, user: UserRecord): ServedUser {
  const { resource, times } = resourceOf(user);
  return served(user.uuid, resource, times, context.location(user.uuid));
}

/** The user with this id, active or not; a deleted one (kept by the store or not) is gone. */
async function live(context: UserContext, id: string): Promise<UserRecord> {
  // No store holds such an id (every write refuses it), and PostgreSQL fails to read one: 404,
  // not the 503 an identity provider would retry for ever.
  if (!storableText(id)) throw notFound(id);
  const user = await context.store.get(id);
  if (user === undefined || deletedForScim(user)) throw notFound(id);
  return user;
}

/** Every SCIM user, inactive ones included, in the store's order. */
async function everyone(context: UserContext): Promise<UserRecord[]> {
  const users = await context.store.list({ includeDeactivated: true });
  return users.filter((user) => !deletedForScim(user));
}

/** The stored users whose username is `userName` ignoring ASCII case, deleted ones too. */
async function holdersOf(context: UserContext, userName: string): Promise<UserRecord[]> {
  const { store } = context;
  if (store.findUsers !== undefined) {
    return store.findUsers({ field: "username", value: userName, ignoreCase: true });
  }
  const lower = asciiLowerCase(userName);
  return (await store.list({ includeDeactivated: true })).filter(
    (user) => user.username !== undefined && asciiLowerCase(user.username) === lower,
  );
}

/**
 * The SCIM user served with its id as userName (it has no username) whose id is `userName`
 * ignoring ASCII case, if any: read by id as given, lowercased and uppercased (ids differing from
 * the name in mixed case are not looked for: that would read every user).
 */
async function idHolderOf(context: UserContext, userName: string): Promise<UserRecord[]> {
  if (!storableText(userName)) return [];
  const lower = asciiLowerCase(userName);
  const ids = new Set([userName, lower, userName.replace(/[a-z]+/g, (s) => s.toUpperCase())]);
  for (const id of ids) {
    const user = await context.store.get(id);
    if (user !== undefined && !hasUserName(user) && !deletedForScim(user)) return [user];
  }
  return [];
}

/** The SCIM users whose userName is `userName` (stored, or their id for want of one), ignoring ASCII case. */
async function byUserName(context: UserContext, userName: string): Promise<UserRecord[]> {
  const holders = (await holdersOf(context, userName)).filter((user) => !deletedForScim(user));
  const [byId] = await idHolderOf(context, userName);
  return byId === undefined || holders.some((user) => user.uuid === byId.uuid)
    ? holders
    : [...holders, byId];
}

/**
 * The other stored users holding `userName` (compared without case), for the write's
 * `usernameHolders` condition: each one a deleted user whose row the store keeps. Throws 409 when
 * one is a SCIM user, active or not (a deactivated user keeps its userName, to come back with
 * it), or when another SCIM user is served with `userName` as its id, having no username.
 */
async function freeUserName(
  context: UserContext,
  userName: string,
  self: string,
): Promise<UserRecord[]> {
  const holders = (await holdersOf(context, userName)).filter((user) => user.uuid !== self);
  const served = (await idHolderOf(context, userName)).some((user) => user.uuid !== self);
  if (served || holders.some((user) => !deletedForScim(user))) {
    throw new ScimError(409, "Another user has this userName", "uniqueness");
  }
  return holders;
}

/**
 * Writes the user; over `previous` (the user as read), only if the store still holds it; with
 * `holders` (a new userName), only if those are still the other users holding the userName. Else
 * resolves undefined: another replica wrote meanwhile, and the caller reads again.
 */
async function write(
  context: UserContext,
  uuid: string,
  resource: JsonObject,
  times: ScimTimes,
  previous: UserRecord | undefined,
  holders: UserRecord[] | undefined,
): Promise<ServedUser | undefined> {
  const { store } = context;
  // The change's own time (every caller stamps lastModified): a deactivation made by it is dated
  // as the change is, and the clock is read once.
  const record = recordOf(uuid, resource, times, previous, times.lastModified ?? context.now());
  try {
    const stored =
      previous === undefined && holders === undefined
        ? await store.replace(record)
        : await store.replace(record, { expected: previous, usernameHolders: holders });
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
 * the one read, and for a new userName (ignoring case) under its name lock, conditionally on no
 * other SCIM user holding it; when another replica wrote meanwhile, reads again and applies
 * `change` afresh, at most `maxWriteAttempts` times, then answers 503 (the identity provider
 * retries).
 */
async function rewrite(
  context: UserContext,
  id: string,
  change: (user: UserRecord) => Promise<{ resource: JsonObject; times: ScimTimes }>,
): Promise<ServedUser> {
  for (let attempt = 0; attempt < maxWriteAttempts; attempt++) {
    const user = await live(context, id);
    const { resource, times } = await change(user);
    const userName = resource.userName as string;
    const written = sameUserName(userName, user.username)
      ? await write(context, id, resource, times, user, undefined)
      : await locked(context.names, asciiLowerCase(userName), async () => {
          const holders = await freeUserName(context, userName, id);
          return write(context, id, resource, times, user, holders);
        });
    if (written !== undefined) return written;
  }
  throw contended();
}

/** Throws 412 unless `ifMatch` (when given) lists the version of `user` as served now. */
function checkVersion(context: UserContext, user: UserRecord, ifMatch: string | undefined): void {
  if (ifMatch !== undefined && !listsVersion(ifMatch, serve(context, user).version)) {
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
  // No user holds a value with U+0000 or a lone surrogate (every write refuses one), and
  // PostgreSQL fails to compare one: no user matches, rather than a 503 retried for ever.
  if (!storableText(key.value)) return [];
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
