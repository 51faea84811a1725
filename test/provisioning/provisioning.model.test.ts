// The provisioning core explored against a model (issue 26): random create, modify and delete
// messages, each delivered as the platform does (sent again after any answer but a 2xx, until
// it is acknowledged) and sometimes delivered again after its 2xx (an answer lost on the way
// back), against the real handler over a store and an onChange hook that fail at random points.
// After every acknowledged message: the store holds what the model holds, no legitimate message
// got a 4xx, and the hook has accepted the message's change with its true type (`created` when
// the user was missing at the message's first write, even if the hook failed then).
//
// Out of the model, as the docs say: a store that fails after its write committed, and a restart
// between a hook failure and the redelivery (the handler remembers unreported creations in
// memory).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningChange,
  type ProvisioningHandler,
  type UpsertResult,
  type UserRecord,
  type UserStore,
  type UserStoreReads,
} from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { exploration } from "../support/exploration.ts";

const explore = exploration("provisioning.model", { numRuns: 25, maxCommands: 25 });
/** What an exploration ran, printed under `npm run explore`. */
const ran = { commands: 0, attempts: 0, faults: 0 };

/** Which call of an attempt fails: the n-th store call, or the n-th hook call. */
type Fault = { readonly kind: "store" | "hook"; readonly at: number } | undefined;

/** A readable store: the bundled ones all list their users. */
type ListingStore = UserStore & UserStoreReads;

/** The real handler, over a store and a hook that fail where the current attempt's fault says. */
class Real {
  fault: Fault;
  storeCalls = 0;
  hookCalls = 0;
  /** The changes the hook accepted (a failing call accepts nothing), in order. */
  readonly accepted: ProvisioningChange[] = [];
  readonly handler: ProvisioningHandler;
  readonly store: ListingStore;

  /** `wrote` is told of each write the store made, before the handler learns of it. */
  constructor(store: ListingStore, wrote: (operation: "upsert" | "delete", uuid: string) => void) {
    this.store = store;
    const faulty: UserStore = {
      upsert: async (patch): Promise<UpsertResult> => {
        this.failIf("store", this.storeCalls++);
        const result = await store.upsert(patch);
        wrote("upsert", patch.uuid);
        return result;
      },
      delete: async (uuid) => {
        this.failIf("store", this.storeCalls++);
        const result = await store.delete(uuid);
        wrote("delete", uuid);
        return result;
      },
    };
    this.handler = createProvisioningHandler({
      store: faulty,
      onChange: (change) => {
        this.failIf("hook", this.hookCalls++);
        this.accepted.push(change);
      },
      onError: () => {},
    });
  }

  failIf(kind: "store" | "hook", call: number): void {
    if (this.fault?.kind === kind && this.fault.at === call) throw new Error(`${kind} failed`);
  }

  /** One attempt of a message, with its fault. */
  async attempt(message: Message, fault: Fault): Promise<number> {
    this.fault = fault;
    this.storeCalls = 0;
    this.hookCalls = 0;
    const { path, method, body } = requestOf(message);
    if (message.via === "fetch") {
      const response = await this.handler.fetch(
        new Request(`http://app.internal${path}`, { method, body: body ?? null }),
      );
      return response.status;
    }
    if (message.via === "parser" && body !== undefined) {
      // As behind express.json(): the body arrives parsed, its numbers' text gone.
      return (await this.handler.handle({ method, path, headers: {}, json: JSON.parse(body) }))
        .status;
    }
    const bytes = body === undefined ? undefined : new TextEncoder().encode(body);
    return (await this.handler.handle({ method, path, headers: {}, body: bytes })).status;
  }
}

type Fields = Partial<Record<"username" | "email" | "user_id", string | number | null>>;

interface Message {
  readonly operation: "create" | "modify" | "delete";
  /** One record, or an array of them (create and modify); the user of a delete. */
  readonly records: readonly ({ uuid: string } & Fields)[];
  readonly asArray: boolean;
  /** The plain-data core with the raw body, handler.fetch, or the core behind a JSON parser. */
  readonly via: "handle" | "fetch" | "parser";
}

function requestOf(message: Message): { path: string; method: string; body?: string } {
  const [first] = message.records as [{ uuid: string }];
  if (message.operation === "delete") {
    return { path: `/v1/user/${encodeURIComponent(first.uuid)}`, method: "DELETE" };
  }
  const body = JSON.stringify(message.asArray ? message.records : first);
  return { path: `/v1/user/${message.operation}`, method: "POST", body };
}

/** What the model expects each write to leave: the documented fields as strings. */
type Expected = Record<string, string>;

class Model {
  readonly users = new Map<string, Expected>();
  lastAcknowledged: Message | undefined;
  /** The message under delivery. */
  current: Message | undefined;
  /** The true type of each change of the message under delivery, set at its first write. */
  trueTypes: ("created" | "updated" | "deleted" | undefined)[] = [];
  /** Which change of the message the store's next write belongs to, in this attempt. */
  writeIndex = 0;

  /** A write the store made: the model applies the message's record it belongs to. */
  write(operation: "upsert" | "delete", uuid: string): void {
    const index = this.writeIndex++;
    const record = this.current?.records[index];
    expect(record?.uuid, "the store wrote another user than the message's").toBe(uuid);
    if (operation === "delete") {
      this.users.delete(uuid);
      this.trueTypes[index] ??= "deleted";
      return;
    }
    const existing = this.users.get(uuid);
    this.trueTypes[index] ??= existing === undefined ? "created" : "updated";
    const user: Expected = { ...existing, uuid };
    for (const [wire, value] of Object.entries(record ?? {})) {
      if (wire === "uuid") continue;
      const field = fieldNames[wire as keyof typeof fieldNames];
      // A number is stored as its text (these are all written in their shortest form).
      if (value === null) delete user[field];
      else user[field] = String(value);
    }
    this.users.set(uuid, user);
  }
}

const fieldNames = { username: "username", email: "email", user_id: "userId" } as const;

/** The user the model expects the store to read back. */
function expectedRecord(user: Expected): UserRecord {
  return Object.fromEntries(Object.entries(user).sort()) as unknown as UserRecord;
}

async function storedUsers(store: ListingStore): Promise<UserRecord[]> {
  const users = await store.list();
  return users
    .map((user) => expectedRecord(user as unknown as Expected))
    .sort((a, b) => (a.uuid < b.uuid ? -1 : 1));
}

/** Delivers a message as the platform does: again after any answer but a 2xx. */
async function deliver(model: Model, real: Real, message: Message, faults: readonly Fault[]) {
  model.current = message;
  model.trueTypes = [];
  ran.commands++;
  const acceptedBefore = real.accepted.length;
  for (let attempt = 0; ; attempt++) {
    model.writeIndex = 0;
    const fault = faults[attempt];
    ran.attempts++;
    if (fault !== undefined) ran.faults++;
    const status = await real.attempt(message, fault);
    // Never a 4xx for a legitimate message; a 5xx only when a fault was injected.
    expect(status < 400 || status >= 500, `status ${status}`).toBe(true);
    if (status < 300) break;
    expect(fault, `status ${status} without a fault`).toBeDefined();
  }
  const expected = [...model.users.values()]
    .map(expectedRecord)
    .sort((a, b) => (a.uuid < b.uuid ? -1 : 1));
  expect(await storedUsers(real.store)).toEqual(expected);
  return real.accepted.slice(acceptedBefore);
}

class Send implements fc.AsyncCommand<Model, Real> {
  readonly message: Message;
  readonly faults: readonly Fault[];
  constructor(message: Message, faults: readonly Fault[]) {
    this.message = message;
    this.faults = faults;
  }
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const accepted = await deliver(model, real, this.message, this.faults);
    // Each change reached the hook with its true type, in one of this message's attempts.
    this.message.records.forEach(({ uuid }, index) => {
      const type = model.trueTypes[index];
      expect(type, `change ${index} was never written`).toBeDefined();
      expect(accepted.some((change) => change.uuid === uuid && change.type === type)).toBe(true);
    });
    model.lastAcknowledged = this.message;
  }
  toString = () => `send ${JSON.stringify(this.message)} faults ${JSON.stringify(this.faults)}`;
}

/** The last acknowledged message again: its answer was lost on the way back. */
class Redeliver implements fc.AsyncCommand<Model, Real> {
  readonly faults: readonly Fault[];
  constructor(faults: readonly Fault[]) {
    this.faults = faults;
  }
  check = (model: Readonly<Model>) => model.lastAcknowledged !== undefined;
  async run(model: Model, real: Real): Promise<void> {
    await deliver(model, real, model.lastAcknowledged as Message, this.faults);
  }
  toString = () => `redeliver faults ${JSON.stringify(this.faults)}`;
}

const uuid = fc.constantFrom("u1", "u2", "u3", ".", "a/b");
const value = (values: readonly (string | number)[]) =>
  fc.option(fc.constantFrom<string | number | null>(...values, null), { nil: undefined });
const record = fc
  .record({
    uuid,
    username: value(["ann", "bob"]),
    email: value(["a@example.com"]),
    user_id: value(["7", 12345, 2.5]),
  })
  .map((fields) =>
    Object.fromEntries(Object.entries(fields).filter(([, field]) => field !== undefined)),
  ) as fc.Arbitrary<{ uuid: string } & Fields>;
const fault: fc.Arbitrary<Fault> = fc.option(
  fc.record({ kind: fc.constantFrom("store" as const, "hook" as const), at: fc.nat(2) }),
  { nil: undefined },
);
const faults = fc.array(fault, { maxLength: 4 });
const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({
    operation: fc.constantFrom("create" as const, "modify" as const),
    records: fc.array(record, { minLength: 1, maxLength: 3 }),
    asArray: fc.boolean(),
    via: fc.constantFrom("handle" as const, "fetch" as const, "parser" as const),
  }),
  fc.record({
    operation: fc.constant("delete" as const),
    records: uuid.map((id) => [{ uuid: id }]),
    asArray: fc.constant(false),
    via: fc.constantFrom("handle" as const, "fetch" as const, "parser" as const),
  }),
);
// A single record sent as an object carries only its first record.
const commands = fc.commands(
  [
    fc
      .tuple(message, faults)
      .map(
        ([sent, planned]) =>
          new Send(sent.asArray ? sent : { ...sent, records: sent.records.slice(0, 1) }, planned),
      ),
    faults.map((planned) => new Redeliver(planned)),
  ],
  { maxCommands: explore.maxCommands, size: "max" },
);

describe("the provisioning core, explored against a model", () => {
  const stores: [string, () => ListingStore][] = [
    ["MemoryUserStore", () => new MemoryUserStore()],
    ["SqliteUserStore", () => new SqliteUserStore(":memory:")],
  ];
  it.each(stores)(
    "keeps every acknowledged change and reports it with its true type (%s)",
    async (name, createStore) => {
      await fc.assert(
        fc.asyncProperty(commands, async (sequence) => {
          const model = new Model();
          const store = createStore();
          const real = new Real(store, (operation, id) => model.write(operation, id));
          try {
            await fc.asyncModelRun(() => ({ model, real }), sequence);
          } finally {
            (store as { close?: () => void }).close?.();
          }
        }),
        explore.parameters,
      );
      if (explore.exploring) {
        console.log(
          `provisioning.model (${name}): ${ran.commands} commands, ${ran.attempts} requests, ${ran.faults} with a fault planned`,
        );
      }
      ran.commands = ran.attempts = ran.faults = 0;
    },
    explore.timeoutMs,
  );
});
