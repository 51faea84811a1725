// Attack helpers: a SCIM client over a handler's Web entry, its paths under the base path.
import { createProvisioningHandler } from "../../../src/provisioning/index.ts";
import {
  createScimHandler,
  type ScimHandler,
  type ScimUserStore,
} from "../../../src/scim/index.ts";
import { type Answer, patchOp, scim, token } from "../helpers.ts";

export { type Answer, patchOp, token };

export function clientOf(handler: Pick<ScimHandler, "fetch">, base = "/scim/v2") {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    scim(handler, method, `${base}${path}`, body, headers);
}

/**
 * Both protocols over one store: a SCIM client, and `platform(path, body)` POSTing the platform's
 * Provisioning API messages under /ldap/auth.
 */
export function bothProtocols(store: ScimUserStore) {
  const provisioning = createProvisioningHandler({ store, basePath: "/ldap/auth" });
  const platform = (path: string, body: unknown) =>
    provisioning.fetch(
      new Request(`http://127.0.0.1/ldap/auth${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  return { scim: clientOf(createScimHandler({ store, token })), platform };
}

/** A deferred promise. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/**
 * Wraps a store: when `hold(method)` is armed, the next call of `method` signals `reached` and
 * waits until `release()` before it runs (deterministic interleavings, no timers).
 */
export function gated<S extends object>(store: S) {
  type Deferred = ReturnType<typeof deferred<void>>;
  const holds = new Map<string, { reached: Deferred; gate: Deferred }>();
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const hold = typeof key === "string" ? holds.get(key) : undefined;
        if (hold !== undefined) {
          holds.delete(key as string);
          hold.reached.resolve();
          await hold.gate.promise;
        }
        return value.apply(target, args);
      };
    },
  });
  return {
    store: proxy as S,
    hold(method: string) {
      const entry = { reached: deferred(), gate: deferred() };
      holds.set(method, entry);
      return { reached: entry.reached.promise, release: () => entry.gate.resolve() };
    },
  };
}

/**
 * `count` PostgresUserStores over one new table (unique username and email), each on a pool of
 * its own (a replica each); `drop` removes the tables and ends the pools.
 */
export async function postgresStores(
  url: string,
  count: number,
  onDelete: "delete" | "deactivate" = "delete",
) {
  const { default: pg } = await import("pg");
  const { PostgresUserStore } = await import("../../../src/stores/postgres/index.ts");
  const pools = Array.from({ length: count }, () => new pg.Pool({ connectionString: url, max: 2 }));
  const table = `scim_attack_${crypto.randomUUID().slice(0, 8)}`;
  const stores = pools.map(
    (pool) => new PostgresUserStore({ pool, table, unique: ["username", "email"], onDelete }),
  );
  await stores[0]?.migrate();
  return {
    stores,
    drop: async () => {
      for (const name of [table, `${table}_quarantine`, `${table}_quarantine_awaits`]) {
        await pools[0]?.query(`DROP TABLE IF EXISTS "${name}"`);
      }
      await Promise.all(pools.map((pool) => pool.end()));
    },
  };
}
