// The quarantine explored: random creates, modifies, swaps and deletes of users with unique
// emails, delivered in order as the platform does, against the real handler over a MemoryUserStore
// and a SqliteUserStore, beside a model of the directory. After every message: it was
// acknowledged, every acknowledged change is either applied or kept, and no two active users
// share an email. At the end, once nothing is left to free: nothing is kept and the store equals
// the directory.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type UserStore,
  type UserStoreReads,
} from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { exploration } from "../support/exploration.ts";
import { call } from "./helpers.ts";

interface Real {
  store: UserStore & UserStoreReads;
  handler: ReturnType<typeof createProvisioningHandler>;
}
/** The directory: each user's email (undefined: none). */
type Model = Map<string, string | undefined>;

const uuids = ["u0", "u1", "u2", "u3", "u4"];
const emails = ["a@x.io", "B@x.io", "c@x.io", "d@x.io", "e@x.io", "f@x.io"];
const fold = (email: string) => email.toLowerCase();
const taken = (model: Model, email: string, except?: string) =>
  [...model].some(
    ([uuid, held]) => uuid !== except && held !== undefined && fold(held) === fold(email),
  );

async function check(model: Model, real: Real): Promise<void> {
  const users = await real.store.list();
  const held = users.flatMap((user) => (user.email === undefined ? [] : [fold(user.email)]));
  expect(new Set(held).size, "two active users share an email").toBe(held.length);
  const kept = new Set((await real.handler.quarantined()).map((entry) => entry.uuid));
  for (const [uuid, email] of model) {
    if (kept.has(uuid)) continue;
    const user = users.find((stored) => stored.uuid === uuid);
    expect(user?.email, `user ${uuid}, nothing kept for it`).toBe(email);
  }
  for (const user of users) {
    expect(model.has(user.uuid) || kept.has(user.uuid), `user ${user.uuid} deleted`).toBe(true);
  }
}

async function send(real: Real, method: string, path: string, body: unknown, status: number) {
  const answer = await call(real.handler, method, path, body);
  expect(answer.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
}

class Create implements fc.AsyncCommand<Model, Real> {
  readonly uuid: string;
  readonly email: string;
  constructor(uuid: string, email: string) {
    this.uuid = uuid;
    this.email = email;
  }
  check = (model: Readonly<Model>) => !model.has(this.uuid) && !taken(model, this.email);
  async run(model: Model, real: Real) {
    model.set(this.uuid, this.email);
    await send(real, "POST", "/v1/user/create", { uuid: this.uuid, email: this.email }, 201);
    await check(model, real);
  }
  toString = () => `create ${this.uuid} ${this.email}`;
}

class Modify implements fc.AsyncCommand<Model, Real> {
  readonly uuid: string;
  readonly email: string | null;
  constructor(uuid: string, email: string | null) {
    this.uuid = uuid;
    this.email = email;
  }
  check = (model: Readonly<Model>) =>
    model.has(this.uuid) && (this.email === null || !taken(model, this.email, this.uuid));
  async run(model: Model, real: Real) {
    model.set(this.uuid, this.email ?? undefined);
    await send(real, "POST", "/v1/user/modify", { uuid: this.uuid, email: this.email }, 204);
    await check(model, real);
  }
  toString = () => `modify ${this.uuid} ${this.email}`;
}

/** Two users exchange their emails: two modifies, the first of which takes a held value. */
class Swap implements fc.AsyncCommand<Model, Real> {
  readonly first: string;
  readonly second: string;
  constructor(first: string, second: string) {
    this.first = first;
    this.second = second;
  }
  check = (model: Readonly<Model>) =>
    this.first !== this.second && model.has(this.first) && model.has(this.second);
  async run(model: Model, real: Real) {
    const one = model.get(this.first);
    const two = model.get(this.second);
    model.set(this.first, two);
    await send(real, "POST", "/v1/user/modify", { uuid: this.first, email: two ?? null }, 204);
    model.set(this.second, one);
    await send(real, "POST", "/v1/user/modify", { uuid: this.second, email: one ?? null }, 204);
    await check(model, real);
  }
  toString = () => `swap ${this.first} ${this.second}`;
}

class Delete implements fc.AsyncCommand<Model, Real> {
  readonly uuid: string;
  constructor(uuid: string) {
    this.uuid = uuid;
  }
  check = (model: Readonly<Model>) => model.has(this.uuid);
  async run(model: Model, real: Real) {
    model.delete(this.uuid);
    await send(real, "DELETE", `/v1/user/${this.uuid}`, undefined, 204);
    await check(model, real);
  }
  toString = () => `delete ${this.uuid}`;
}

const run = exploration("quarantine", { numRuns: 40, maxCommands: 30 });
const uuid = fc.constantFrom(...uuids);
const email = fc.constantFrom(...emails);
const commands = fc.commands(
  [
    fc.tuple(uuid, email).map(([id, value]) => new Create(id, value)),
    fc.tuple(uuid, fc.option(email, { freq: 5 })).map(([id, value]) => new Modify(id, value)),
    fc.tuple(uuid, uuid).map(([one, two]) => new Swap(one, two)),
    uuid.map((id) => new Delete(id)),
  ],
  { maxCommands: run.maxCommands },
);

describe.each([
  ["MemoryUserStore", () => new MemoryUserStore({ unique: ["email"] })],
  ["SqliteUserStore", () => new SqliteUserStore(":memory:", { unique: ["email"] })],
])("the quarantine over %s, explored", (_name, createStore) => {
  it(
    "acknowledges every message, applies or keeps each, never breaks uniqueness, and catches up",
    async () => {
      await fc.assert(
        fc.asyncProperty(commands, async (sequence) => {
          const store = createStore() as Real["store"];
          const handler = createProvisioningHandler({
            store,
            quarantine: true,
            logger: { debug() {}, info() {}, warn() {}, error() {} },
          });
          const model: Model = new Map();
          await fc.asyncModelRun(() => ({ model, real: { store, handler } }), sequence);
          // The directory's emails are unique now: every value a kept message waits for is free.
          await handler.retryQuarantined();
          expect(await handler.quarantined()).toEqual([]);
          const stored = new Map((await store.list()).map((user) => [user.uuid, user.email]));
          expect(stored).toEqual(model);
        }),
        run.parameters,
      );
    },
    run.timeoutMs,
  );
});
