// Runs against the server at PLATFORM_INTEGRATION_REDIS_URL (.ci/steps/redis.sh starts one).
// Without it the suite is skipped, unless PLATFORM_INTEGRATION_REQUIRE_REDIS=1 says it must run.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { Redis } from "ioredis";
import { testUserStore } from "platform-integration/testing";
import { afterAll, describe, expect, it } from "vitest";
import { RedisUserStore } from "./redis-user-store.ts";

const url = process.env.PLATFORM_INTEGRATION_REDIS_URL;
const required = process.env.PLATFORM_INTEGRATION_REQUIRE_REDIS === "1";

describe.runIf(url || required)("RedisUserStore", () => {
  if (!url) {
    it("has a server to run against", () => {
      throw new Error(
        "PLATFORM_INTEGRATION_REQUIRE_REDIS=1, but PLATFORM_INTEGRATION_REDIS_URL is unset",
      );
    });
    return;
  }
  // Keys of this run only, deleted at the end: the URL may point at a developer's server.
  const run = `pi-test-${randomUUID().slice(0, 8)}:`;
  let stores = 0;
  const newPrefix = () => `${run}${++stores}:`;
  const clients: Redis[] = [];
  const connect = async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    clients.push(redis);
    await redis.ping();
    return redis;
  };
  afterAll(async () => {
    const redis = await connect();
    const keys = await redis.keys(`${run}*`);
    if (keys.length > 0) await redis.del(...keys);
    for (const client of clients) client.disconnect();
  });

  // The contract reads users back through a client of its own.
  const prefixOf = new WeakMap<RedisUserStore, string>();
  const reader = connect();
  testUserStore({
    describe,
    it,
    create: async () => {
      const prefix = newPrefix();
      const store = new RedisUserStore({ redis: await connect(), prefix });
      prefixOf.set(store, prefix);
      return store;
    },
    read: async (store, uuid) =>
      new RedisUserStore({ redis: await reader, prefix: prefixOf.get(store) as string }).get(uuid),
  });

  it("loses no update when two replicas upsert the same users at once", async () => {
    const prefix = newPrefix();
    const [one, two] = [
      new RedisUserStore({ redis: await connect(), prefix }),
      new RedisUserStore({ redis: await connect(), prefix }),
    ];
    const results = await Promise.all(
      Array.from({ length: 80 }, (_, index) =>
        (index % 2 ? one : two).upsert({
          uuid: `u${index % 4}`,
          extra: { [`key${index}`]: index },
        }),
      ),
    );
    expect(results.filter((result) => result.created)).toHaveLength(4);
    for (const uuid of ["u0", "u1", "u2", "u3"]) {
      const expected = Array.from(
        { length: 20 },
        (_, round) => `key${round * 4 + Number(uuid[1])}`,
      );
      expect(Object.keys((await two.get(uuid))?.extra ?? {}).sort()).toEqual(expected.sort());
    }
  });

  it("keeps a hash per user: documented fields by name, extra values as their JSON text", async () => {
    const prefix = newPrefix();
    const redis = await connect();
    const store = new RedisUserStore({ redis, prefix });
    await store.upsert({ uuid: "u1", username: "bob", extra: { level: 3, zip: "0150" } });
    expect(await redis.hgetall(`${prefix}user:u1`)).toEqual({
      uuid: "u1",
      username: "bob",
      "extra:level": "3",
      "extra:zip": '"0150"',
    });
    await store.upsert({ uuid: "u1", username: null, extra: { zip: null } });
    expect(await redis.hgetall(`${prefix}user:u1`)).toEqual({ uuid: "u1", "extra:level": "3" });
  });

  it("keeps U+0000 inside a value, which a Redis string holds", async () => {
    const store = new RedisUserStore({ redis: await connect(), prefix: newPrefix() });
    await store.upsert({ uuid: "u1", fullName: "a\u0000b", extra: { note: "c\u0000d" } });
    expect(await store.get("u1")).toEqual({
      uuid: "u1",
      fullName: "a\u0000b",
      extra: { note: "c\u0000d" },
    });
  });

  it("lists every user by uuid, and resets only its own prefix", async () => {
    const redis = await connect();
    const [mine, other] = [newPrefix(), newPrefix()];
    const store = new RedisUserStore({ redis, prefix: mine });
    const neighbour = new RedisUserStore({ redis, prefix: other });
    for (const uuid of ["u2", "u1", "u3"]) await store.upsert({ uuid, username: uuid });
    await neighbour.upsert({ uuid: "n1" });
    expect(await store.list()).toEqual([
      { uuid: "u1", username: "u1" },
      { uuid: "u2", username: "u2" },
      { uuid: "u3", username: "u3" },
    ]);
    await store.reset();
    expect(await store.list()).toEqual([]);
    expect(await redis.keys(`${mine}*`)).toEqual([]);
    expect(await neighbour.list()).toEqual([{ uuid: "n1" }]);
  });

  it("is not ready once its client has disconnected", async () => {
    const redis = await connect();
    const store = new RedisUserStore({ redis, prefix: newPrefix() });
    expect(store.ready()).toBe(true);
    const ended = once(redis, "end");
    redis.disconnect();
    await ended;
    expect(store.ready()).toBe(false);
  });
});
