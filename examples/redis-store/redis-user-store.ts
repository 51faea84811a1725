// A UserStore on Redis, for an application that already runs Redis: copy this file. Each user is
// a hash; every write is one Lua script or one MULTI, so several replicas of the application can
// share the server without losing an update. It runs on one Redis server (or one primary): on a
// cluster, the user's hash and the index live in different slots.
import type { Redis } from "ioredis";
import type {
  UpsertResult,
  UserPatch,
  UserRecord,
  UserStore,
} from "platform-integration/provisioning";
import { userFieldNames } from "platform-integration/provisioning";

/** Options of {@link RedisUserStore}. */
export interface RedisUserStoreOptions {
  /** The application's ioredis client. The store never closes it. */
  redis: Redis;
  /** What every key of the store starts with (default `provisioned-users:`). */
  prefix?: string;
}

// Hash fields: `uuid` (so that a user with no other field still exists), each documented field
// under its own name, and each `extra` key behind this prefix, its value as JSON text: merged
// key by key, never re-encoded by Lua, so numbers keep their exact text.
const extraPrefix = "extra:";
const documented = new Set<string>(userFieldNames);

// KEYS[1]: the user's hash, KEYS[2]: the set of every uuid. ARGV[1]: the uuid, ARGV[2]: how many
// field-value pairs follow to set; the arguments after them name the fields to delete. Answers
// whether it created the user, and the user's fields after the merge.
const mergeScript = `
local created = redis.call('EXISTS', KEYS[1]) == 0
local last = 2 + 2 * tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'uuid', ARGV[1], unpack(ARGV, 3, last))
if #ARGV > last then
  redis.call('HDEL', KEYS[1], unpack(ARGV, last + 1))
end
redis.call('SADD', KEYS[2], ARGV[1])
return { created and 1 or 0, redis.call('HGETALL', KEYS[1]) }`;

// KEYS[1]: the set of every uuid; ARGV[1]: the prefix of the users' hashes. Deletes them all in
// one step, so a reset and a create cannot interleave. It blocks the server while it runs: a
// reset is rare, and precedes a full re-sync anyway.
const resetScript = `
local uuids = redis.call('SMEMBERS', KEYS[1])
for index = 1, #uuids, 1000 do
  local keys = {}
  for inner = index, math.min(index + 999, #uuids) do
    keys[#keys + 1] = ARGV[1] .. uuids[inner]
  end
  redis.call('DEL', unpack(keys))
end
redis.call('DEL', KEYS[1])
return #uuids`;

type MergeCommand = (
  userKey: string,
  indexKey: string,
  ...args: string[]
) => Promise<[created: number, fields: string[]]>;
type ResetCommand = (indexKey: string, userPrefix: string) => Promise<number>;

/**
 * A {@link UserStore} on Redis through ioredis: a hash per user, the merge atomic in a Lua script
 * (sent once, then called by its SHA). Absent fields keep their value, `null` deletes the hash
 * field; `extra` merges key by key, each value kept as the JSON text it arrived as.
 *
 * @example
 * ```ts
 * const redis = new Redis(process.env.REDIS_URL!);
 * const store = new RedisUserStore({ redis });
 * const handler = createProvisioningHandler({ store });
 * ```
 */
export class RedisUserStore implements UserStore {
  readonly #redis: Redis;
  readonly #userPrefix: string;
  readonly #indexKey: string;
  readonly #merge: MergeCommand;
  readonly #reset: ResetCommand;

  constructor({ redis, prefix = "provisioned-users:" }: RedisUserStoreOptions) {
    this.#redis = redis;
    this.#userPrefix = `${prefix}user:`;
    this.#indexKey = `${prefix}uuids`;
    // ioredis runs a defined command with EVALSHA, and sends the script again when the server
    // does not have it (after a restart).
    redis.defineCommand("provisionedUsersMerge", { lua: mergeScript, numberOfKeys: 2 });
    redis.defineCommand("provisionedUsersReset", { lua: resetScript, numberOfKeys: 1 });
    const commands = redis as unknown as {
      provisionedUsersMerge: MergeCommand;
      provisionedUsersReset: ResetCommand;
    };
    this.#merge = commands.provisionedUsersMerge.bind(redis);
    this.#reset = commands.provisionedUsersReset.bind(redis);
  }

  async upsert(patch: UserPatch): Promise<UpsertResult> {
    const set: string[] = [];
    const remove: string[] = [];
    for (const field of userFieldNames) {
      const value = patch[field];
      if (value === null) remove.push(field);
      else if (value !== undefined) set.push(field, value);
    }
    for (const [key, value] of Object.entries(patch.extra ?? {})) {
      if (value === null) remove.push(extraPrefix + key);
      else set.push(extraPrefix + key, JSON.stringify(value));
    }
    const [created, fields] = await this.#merge(
      this.#userPrefix + patch.uuid,
      this.#indexKey,
      patch.uuid,
      String(set.length / 2),
      ...set,
      ...remove,
    );
    return { created: created === 1, user: toUser(fields) };
  }

  async delete(uuid: string): Promise<{ deleted: boolean }> {
    const results = await this.#redis
      .multi()
      .del(this.#userPrefix + uuid)
      .srem(this.#indexKey, uuid)
      .exec();
    const [error, removed] = results?.[0] ?? [new Error("The transaction was discarded")];
    if (error) throw error;
    return { deleted: removed === 1 };
  }

  async reset(): Promise<void> {
    await this.#reset(this.#indexKey, this.#userPrefix);
  }

  /** True while the client is connected and ready for commands. */
  ready(): boolean {
    return this.#redis.status === "ready";
  }

  /** The stored user with this uuid, or undefined. */
  async get(uuid: string): Promise<UserRecord | undefined> {
    const fields = await this.#redis.hgetall(this.#userPrefix + uuid);
    return "uuid" in fields ? toUser(Object.entries(fields).flat()) : undefined;
  }

  /** Every stored user, ordered by uuid. */
  async list(): Promise<UserRecord[]> {
    const uuids = (await this.#redis.smembers(this.#indexKey)).sort();
    const users = await Promise.all(uuids.map((uuid) => this.get(uuid)));
    return users.filter((user) => user !== undefined);
  }
}

/** The user in a hash's fields, as HGETALL lists them: name, value, name, value... */
function toUser(fields: string[]): UserRecord {
  const user: Record<string, unknown> = {};
  const extra: [string, unknown][] = [];
  for (let index = 0; index < fields.length; index += 2) {
    const [name, value] = [fields[index] as string, fields[index + 1] as string];
    if (name === "uuid" || documented.has(name)) user[name] = value;
    else if (name.startsWith(extraPrefix))
      extra.push([name.slice(extraPrefix.length), JSON.parse(value)]);
  }
  // fromEntries defines own properties, so a `__proto__` key stays a plain key.
  if (extra.length > 0) user.extra = Object.fromEntries(extra);
  return user as unknown as UserRecord;
}
