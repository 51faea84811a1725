// Property-based checks of the Reliability section: hostile bodies, interleaved operations and a
// store that fails during a long sync. Run counts are sized for a quick suite on two shared cores.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningResponse,
  type UserPatch,
  type UserRecord,
  type UserStore,
} from "../../src/provisioning/index.ts";
import { mergeUser } from "../../src/users/merge-user.ts";
import { call } from "./helpers.ts";

/** The spec's wire names, written out here so that the test does not reuse the code under test. */
const wireNames = {
  userId: "user_id",
  username: "username",
  firstName: "first_name",
  lastName: "last_name",
  fullName: "full_name",
  passwordFormat: "password_format",
  password: "password",
  email: "email",
} as const;
const errorCodes = ["invalid_json", "invalid_user", "invalid_uuid", "payload_too_large"];
const bystander: UserRecord = { uuid: "bystander", username: "keep-me", password: "pw-bystander" };

const text = fc.string({ unit: "grapheme", maxLength: 40 });
const hostileKey = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "uuid"),
  fc.constantFrom(...Object.values(wireNames)),
  text,
);
const anyValue = fc.oneof(
  text,
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.jsonValue({ maxDepth: 4 }),
);
const record = fc.record(
  {
    uuid: fc.oneof(text, fc.constant("bystander"), fc.integer(), fc.constant(null)),
    fields: fc.dictionary(hostileKey, anyValue, { maxKeys: 8 }),
  },
  { requiredKeys: ["fields"] },
);
const hostileBody: fc.Arbitrary<string> = fc.oneof(
  record.map(({ uuid, fields }) => stringifyRecord(uuid, fields)),
  fc
    .array(record, { maxLength: 4 })
    .map(
      (records) =>
        `[${records.map(({ uuid, fields }) => stringifyRecord(uuid, fields)).join(",")}]`,
    ),
  fc.jsonValue().map((value) => JSON.stringify(value) ?? ""),
  fc
    .integer({ min: 1, max: 3000 })
    .map((depth) => `{"uuid":"deep","x":${"[".repeat(depth)}${"]".repeat(depth)}}`),
  fc
    .integer({ min: 1, max: 2_000_000 })
    .map((size) => `{"uuid":"huge","full_name":"${"x".repeat(size)}"}`),
  fc.string({ unit: "binary", maxLength: 200 }),
  record.chain(({ uuid, fields }) => {
    const whole = stringifyRecord(uuid, fields);
    return fc.nat(whole.length).map((cut) => whole.slice(0, cut));
  }),
);

/** JSON of a record whose keys may include `__proto__`, kept as an own key. */
function stringifyRecord(uuid: unknown, fields: Record<string, unknown>): string {
  const entries = Object.entries(fields).filter(([key]) => key !== "uuid");
  if (uuid !== undefined) entries.unshift(["uuid", uuid]);
  return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(",")}}`;
}

/** Every string of 8 characters or more inside a JSON value: what an error body must not echo. */
function longStrings(value: unknown, found: string[] = []): string[] {
  if (typeof value === "string" && value.length >= 8) found.push(value);
  else if (typeof value === "object" && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      longStrings(key, found);
      longStrings(child, found);
    }
  }
  return found;
}

function tryParse(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

describe("hostile bodies", () => {
  it("never crash, never answer 2xx for what was not stored, never touch another user", async () => {
    await fc.assert(
      fc.asyncProperty(
        hostileBody,
        fc.constantFrom("create", "modify"),
        async (body, operation) => {
          const store = new MemoryUserStore();
          await store.upsert(bystander);
          const handler = createProvisioningHandler({ store, onError: () => {} });
          const response = await call(handler, "POST", `/v1/user/${operation}`, body);
          const parsed = tryParse(body);
          const records = Array.isArray(parsed) ? parsed : [parsed];
          const touched = new Set(
            records.map((one) => (one as { uuid?: unknown } | null)?.uuid).filter((uuid) => uuid),
          );
          if (response.status === (operation === "create" ? 201 : 204)) {
            await expectStored(store, records);
          } else {
            expectRefused(response, parsed);
            expect(await store.list()).toEqual([bystander]);
          }
          if (!touched.has("bystander")) expect(await store.get("bystander")).toEqual(bystander);
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();
          expect(Object.getPrototypeOf({})).toBe(Object.prototype);
        },
      ),
      { numRuns: 1500 },
    );
  }, 120_000);

  function expectRefused(response: ProvisioningResponse, parsed: unknown) {
    const error = JSON.parse(response.body ?? "null") as { error: string; message: string };
    expect(errorCodes).toContain(error.error);
    expect(response.status).toBe(error.error === "payload_too_large" ? 413 : 400);
    for (const echoed of longStrings(parsed)) expect(response.body).not.toContain(echoed);
  }

  async function expectStored(store: MemoryUserStore, records: unknown[]) {
    // The last record for each uuid decides the documented fields it sent.
    for (const one of records) {
      const fields = one as Record<string, unknown>;
      expect(typeof fields.uuid === "string" && fields.uuid !== "").toBe(true);
      const user = await store.get(fields.uuid as string);
      expect(user).toBeDefined();
      for (const [key, value] of Object.entries(fields)) {
        if (
          key === "uuid" ||
          records.some(
            (other) => other !== one && (other as { uuid: unknown }).uuid === fields.uuid,
          )
        )
          continue;
        const field = Object.entries(wireNames).find(([, wire]) => wire === key)?.[0];
        if (field === undefined)
          expect(Object.hasOwn(user?.extra ?? {}, key) || value === null).toBe(true);
        else if (value === null) expect(user).not.toHaveProperty(field);
        else
          expect(user?.[field as keyof typeof wireNames]).toBe(
            typeof value === "string" ? value : JSON.stringify(value),
          );
      }
    }
  }
});

type Operation =
  | { kind: "create" | "modify"; patch: UserPatch; hops: number }
  | { kind: "delete"; uuid: string; hops: number };

const uuids = ["alice", "bob", "carol"];
const patchOf = (uuid: string) =>
  fc
    .dictionary(
      fc.constantFrom(...(Object.keys(wireNames) as (keyof typeof wireNames)[])),
      fc.oneof(fc.string({ maxLength: 6 }), fc.constant(null)),
      { maxKeys: 4 },
    )
    .map((fields) => ({ uuid, ...fields }) as UserPatch);
const operation: fc.Arbitrary<Operation> = fc
  .tuple(fc.constantFrom(...uuids), fc.constantFrom("create", "modify", "delete"), fc.nat(4))
  .chain(([uuid, kind, hops]) =>
    kind === "delete"
      ? fc.constant<Operation>({ kind, uuid, hops })
      : patchOf(uuid).map((patch): Operation => ({ kind, patch, hops })),
  );

function toWire(patch: UserPatch): Record<string, unknown> {
  const wire: Record<string, unknown> = { uuid: patch.uuid };
  for (const [field, name] of Object.entries(wireNames)) {
    if (field in patch) wire[name] = patch[field as keyof typeof wireNames];
  }
  return wire;
}

function send(handler: ReturnType<typeof createProvisioningHandler>, op: Operation) {
  return op.kind === "delete"
    ? call(handler, "DELETE", `/v1/user/${encodeURIComponent(op.uuid)}`)
    : call(handler, "POST", `/v1/user/${op.kind}`, toWire(op.patch));
}

/** What the acknowledged operations imply, applied one by one. */
function model(operations: Operation[]): UserRecord[] {
  const users = new Map<string, UserRecord>();
  for (const op of operations) {
    if (op.kind === "delete") users.delete(op.uuid);
    else users.set(op.patch.uuid, mergeUser(users.get(op.patch.uuid), op.patch));
  }
  return [...users.values()].sort((a, b) => a.uuid.localeCompare(b.uuid));
}

const sorted = (users: UserRecord[]) => [...users].sort((a, b) => a.uuid.localeCompare(b.uuid));

/**
 * A store that reads, waits, then writes: without per-uuid ordering in the handler, two
 * operations on one user interleave and one update is lost.
 */
class SlowStore implements UserStore {
  readonly users = new Map<string, UserRecord>();
  hops = 0;

  async upsert(patch: UserPatch) {
    const existing = this.users.get(patch.uuid);
    for (let hop = 0; hop < this.hops; hop++) await Promise.resolve();
    const user = mergeUser(existing, patch);
    this.users.set(patch.uuid, user);
    return { created: existing === undefined, user };
  }

  async delete(uuid: string) {
    for (let hop = 0; hop < this.hops; hop++) await Promise.resolve();
    return { deleted: this.users.delete(uuid) };
  }
}

describe("concurrency", () => {
  it("interleaved operations on a few users end as the acknowledged ones imply", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 40 }), async (operations) => {
        const store = new SlowStore();
        const handler = createProvisioningHandler({ store });
        const responses = await Promise.all(
          operations.map((op) => {
            store.hops = op.hops;
            return send(handler, op);
          }),
        );
        expect(responses.every((response) => response.status < 300)).toBe(true);
        expect(sorted([...store.users.values()])).toEqual(model(operations));
      }),
      { numRuns: 300 },
    );
  });
});

describe("a store that fails part of the time", () => {
  /** Fails when the schedule says so: before the write, or after it (the reply was lost). */
  class FlakyStore implements UserStore {
    readonly inner = new MemoryUserStore();
    readonly schedule: ("ok" | "before" | "after")[];
    constructor(schedule: ("ok" | "before" | "after")[]) {
      this.schedule = schedule;
    }

    async #run<T>(write: () => Promise<T>): Promise<T> {
      const next = this.schedule.shift() ?? "ok";
      if (next === "before") throw new Error("connection reset before the write");
      const result = await write();
      if (next === "after") throw new Error("connection reset after the write");
      return result;
    }
    upsert(patch: UserPatch) {
      return this.#run(() => this.inner.upsert(patch));
    }
    delete(uuid: string) {
      return this.#run(() => this.inner.delete(uuid));
    }
  }

  it("loses nothing once the platform retries every message until it succeeds", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 1, maxLength: 80 }),
        fc.array(fc.constantFrom("ok", "ok", "before", "after"), { maxLength: 200 }),
        async (operations, schedule) => {
          const store = new FlakyStore(schedule);
          const handler = createProvisioningHandler({ store, onError: () => {} });
          for (const op of operations) {
            // The platform pauses on any non-2xx and resumes with the same message.
            let response = await send(handler, op);
            while (response.status >= 300) {
              expect(response.status).toBe(503);
              response = await send(handler, op);
            }
          }
          expect(sorted(await store.inner.list())).toEqual(model(operations));
        },
      ),
      { numRuns: 200 },
    );
  });
});
