// The SCIM server explored with replicas: two handlers, each with a store connection of its own,
// over one database (a SqliteUserStore file; a PostgreSQL table when PLATFORM_INTEGRATION_PG_URL is
// set), a seeded random delay before and after every store call, beside a model of what was
// acknowledged. Random creates, PATCHes (userName, email, displayName, active), PUTs and DELETEs,
// each to a random replica; and races, one request to each replica at once: two creates of one
// userName (the same case or another: "ann" and "Ann"), a create and a rename to one userName, two
// renames to one userName, two PATCHes of one user.
//
// After each command:
// M1 what a GET of each id returns (through either replica) is what was acknowledged for it last,
//    and a deleted id answers 404;
// M2 a filter by userName finds exactly the users the model holds with it, ignoring case;
// M3 no two active users of the store share a unique value (username, email);
// M4 two racing writes answer as one of their two orders would, one after the other: so of two
//    racing creates or renames to one userName (whatever its case), one is acknowledged and the
//    other answers 409, active or not;
// M5 of two racing PATCHes of one user (one to each replica, of different attributes), both are
//    acknowledged and the user then has both changes: no acknowledged change is lost;
// M6 no two SCIM users of the store (active or not; a deleted user whose row is kept aside) share a
//    userName ignoring case.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { UserRecord } from "../../src/provisioning/index.ts";
import { createScimHandler, type ScimHandler, type ScimUserStore } from "../../src/scim/index.ts";
import { deletedForScim } from "../../src/scim/mapping.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { asciiLowerCase } from "../../src/users/store-rules.ts";
import { exploration } from "../support/exploration.ts";
import { patchOp, token } from "./helpers.ts";
import { handlerClient } from "./sequences.ts";

// Empty means unset, as for the other PostgreSQL suites (test/support/skipped-suites.ts).
const pgUrl = process.env.PLATFORM_INTEGRATION_PG_URL || undefined;
// Two pairs that differ only in case: SCIM's userName is caseExact false (RFC 7643).
const names = ["ann", "Ann", "bob", "BOB", "cid", "dee"];
/** The names a filter looks for: one of each, ignoring case. */
const lookups = ["ANN", "bob", "cid", "dee"];
const sameName = (a: string, b: string) => asciiLowerCase(a) === asciiLowerCase(b);
const emails = ["a@x.io", "b@x.io", "c@x.io", "d@x.io"];
const unique = ["username", "email"] as const;

/** What was acknowledged for one id. */
interface Acknowledged {
  userName: string;
  email: string;
  displayName: string;
  active: boolean;
  /** Set only by racing PATCHes (below). */
  title?: string;
}
type Model = { users: Map<string, Acknowledged>; deleted: Set<string> };

interface Database {
  stores(seed: number): Promise<ScimUserStore[]>;
  users(): Promise<UserRecord[]>;
  close(): Promise<void>;
}

/** A store whose every call waits a seeded random time before and after it. */
function delayed(store: ScimUserStore, seed: number): ScimUserStore {
  let state = seed >>> 0 || 1;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pause = () => new Promise<void>((resolve) => setTimeout(resolve, Math.floor(random() * 3)));
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        await pause();
        try {
          return await value.apply(target, args);
        } finally {
          await pause();
        }
      };
    },
  });
}

type Call = ReturnType<typeof handlerClient>;

class World {
  readonly replicas: Call[];
  readonly database: Database;
  constructor(handlers: ScimHandler[], database: Database) {
    this.replicas = handlers.map((handler) => handlerClient(handler));
    this.database = database;
  }

  /** M1-M3, through both replicas. */
  async check(model: Model): Promise<void> {
    for (const [index, call] of this.replicas.entries()) {
      for (const [id, expected] of model.users) {
        const answer = await call("GET", `/Users/${id}`);
        expect(answer.status, `GET ${id} through replica ${index}`).toBe(200);
        expect(answer.body).toMatchObject({
          id,
          userName: expected.userName,
          displayName: expected.displayName,
          active: expected.active,
          emails: [{ value: expected.email }],
          ...(expected.title === undefined ? {} : { title: expected.title }),
        });
      }
      for (const id of model.deleted) {
        expect((await call("GET", `/Users/${id}`)).status, `GET deleted ${id}`).toBe(404);
      }
      for (const name of lookups) {
        const found = await call(
          "GET",
          `/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}`,
        );
        const ids = [...model.users]
          .filter(([, user]) => sameName(user.userName, name))
          .map(([id]) => id);
        expect(found.body.Resources.map((user: { id: string }) => user.id).sort()).toEqual(
          ids.sort(),
        );
      }
    }
    const users = await this.database.users();
    const active = users.filter((user) => user.deactivatedAt === undefined);
    for (const field of unique) {
      const values = active.map((user) => user[field]).filter((value) => value !== undefined);
      expect(new Set(values).size, `M3: active users sharing a ${field}`).toBe(values.length);
    }
    const scimNames = users
      .filter((user) => !deletedForScim(user))
      .map((user) => asciiLowerCase(user.username ?? ""));
    expect(new Set(scimNames).size, `M6: SCIM users sharing a userName: ${scimNames}`).toBe(
      scimNames.length,
    );
  }
}

/**
 * Whether another acknowledged user holds a value `next` takes: its userName, ignoring case, when
 * it is new to the user ignoring case (SCIM's check, against any user, active or not; a write
 * that keeps the userName is never refused for it), or its email while both are active (the
 * store's unique index).
 */
function takenBy(
  model: Model,
  self: string | undefined,
  next: Acknowledged,
  before?: Acknowledged,
): boolean {
  const newName = before === undefined || !sameName(before.userName, next.userName);
  for (const [id, user] of model.users) {
    if (id === self) continue;
    if (newName && sameName(user.userName, next.userName)) return true;
    if (next.active && user.active && user.email === next.email) return true;
  }
  return false;
}

/** One command: what it does to the world and the model, and its name in a failure's path. */
interface Step {
  /** Whether it applies to the model (a change needs a user). */
  applies(model: Model): boolean;
  run(model: Model, world: World): Promise<void>;
  name: string;
}

/** A step as a fast-check command that checks the invariants after it. */
function checked(step: Step): fc.AsyncCommand<Model, World> {
  return {
    check: (model) => step.applies(model as Model),
    run: async (model, world) => {
      await step.run(model, world);
      await world.check(model);
    },
    toString: () => step.name,
  };
}

/**
 * One request and what it does to the model: refused (409) when `refused(model)`, else
 * acknowledged with `status` and applied to the model by `apply`.
 */
interface Write {
  send(world: World): Promise<Answer>;
  status: 200 | 201;
  refused(model: Model): boolean;
  apply(model: Model, answer: Answer): void;
}

type Answer = Awaited<ReturnType<Call>>;

function createWrite(user: Acknowledged, replica: number): Write {
  return {
    send: (world) =>
      (world.replicas[replica] as Call)("POST", "/Users", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName: user.userName,
        displayName: user.displayName,
        active: user.active ? "True" : "False",
        emails: [{ value: user.email, type: "work", primary: true }],
      }),
    status: 201,
    refused: (model) => takenBy(model, undefined, user),
    apply: (model, answer) => void model.users.set(answer.body.id, user),
  };
}

/** A PATCH (or PUT) of the user `id` setting `values`, from what the model holds for it now. */
function changeWrite(
  model: Model,
  id: string,
  values: Partial<Acknowledged>,
  byPut: boolean,
  replica: number,
): Write {
  const before = model.users.get(id) as Acknowledged;
  const next = { ...before, ...values };
  // A PUT replaces the whole user: the title a racing PATCH set is not in its body.
  if (byPut) delete next.title;
  return {
    send: (world) => {
      const call = world.replicas[replica] as Call;
      return byPut
        ? call("PUT", `/Users/${id}`, {
            userName: next.userName,
            displayName: next.displayName,
            active: next.active,
            emails: [{ value: next.email, type: "work", primary: true }],
          })
        : call("PATCH", `/Users/${id}`, {
            schemas: [patchOp],
            Operations: Object.entries(values).map(([key, value]) =>
              key === "email"
                ? { op: "Replace", path: 'emails[type eq "work"].value', value }
                : {
                    op: "Replace",
                    path: key,
                    value: key === "active" ? (value ? "True" : "False") : value,
                  },
            ),
          });
    },
    status: 200,
    // What the model holds for the user when the write applies (a racing write may have
    // changed it since): a PUT writes `next` whole, a PATCH sets `values` over it.
    refused: (now) => takenBy(now, id, nextOf(now), now.users.get(id)),
    apply: (now) => void now.users.set(id, nextOf(now)),
  };
  function nextOf(now: Model): Acknowledged {
    return byPut ? next : { ...(now.users.get(id) as Acknowledged), ...values };
  }
}

/** Runs `write` alone: M1-M3 after it say the rest. */
function alone(
  name: string,
  applies: (model: Model) => boolean,
  make: (model: Model) => Write,
): Step {
  return {
    applies,
    name,
    async run(model, world) {
      const write = make(model);
      const answer = await write.send(world);
      const refused = write.refused(model);
      expect(answer.status, JSON.stringify(answer.body)).toBe(refused ? 409 : write.status);
      if (!refused) write.apply(model, answer);
    },
  };
}

/**
 * Sends two writes at once, one to each replica (M4): their answers must be those of one of the
 * two orders, one after the other; the model takes that order's changes.
 */
function racing(
  name: string,
  applies: (model: Model) => boolean,
  make: (model: Model) => [Write, Write],
): Step {
  return {
    applies,
    name,
    async run(model, world) {
      const writes = make(model);
      const answers = await Promise.all(writes.map((write) => write.send(world)));
      const statuses = answers.map((answer) => answer.status);
      const orders = [
        [0, 1],
        [1, 0],
      ].map((order) => {
        const trial: Model = { users: new Map(model.users), deleted: new Set(model.deleted) };
        const expected: number[] = [];
        for (const index of order) {
          const write = writes[index] as Write;
          const refused = write.refused(trial);
          expected[index] = refused ? 409 : write.status;
          if (!refused) write.apply(trial, answers[index] as Answer);
        }
        return { expected, trial };
      });
      const matching = orders.find(({ expected }) => expected.join() === statuses.join());
      expect(
        statuses,
        `M4: ${JSON.stringify(answers.map((answer) => answer.body))} is no order's`,
      ).toEqual(matching?.expected ?? orders[0]?.expected);
      const trial = (matching as (typeof orders)[number]).trial;
      model.users = trial.users;
    },
  };
}

/** The id of the model's user at `which` (modulo their number), and its record. */
function userAt(model: Model, which: number): [string, Acknowledged] {
  return [...model.users][which % model.users.size] as [string, Acknowledged];
}

function create(
  name: number,
  email: number,
  active: boolean,
  replica: number,
  racingCase: number | undefined,
): Step {
  const user: Acknowledged = {
    userName: names[name] as string,
    email: emails[email] as string,
    displayName: `${names[name]} ${email}`,
    active,
  };
  const state = active ? "active" : "inactive";
  if (racingCase === undefined) {
    return alone(
      `Create(${user.userName}, ${user.email}, ${state}, replica ${replica})`,
      () => true,
      () => createWrite(user, replica),
    );
  }
  // The other replica's create of the same user, its userName in the same case or another.
  const other = { ...user, userName: caseOf(user.userName, racingCase) };
  return racing(
    `RacingCreates(${user.userName}, ${other.userName}, ${user.email}, ${state})`,
    () => true,
    () => [createWrite(user, 0), createWrite(other, 1)],
  );
}

/** `name` with the letters that `mask`'s bits name in upper case. */
function caseOf(name: string, mask: number): string {
  return [...name].map((letter, at) => (mask & (1 << at) ? letter.toUpperCase() : letter)).join("");
}

function change(
  which: number,
  values: Partial<Acknowledged>,
  byPut: boolean,
  replica: number,
): Step {
  return alone(
    `${byPut ? "Put" : "Patch"}(#${which}, ${JSON.stringify(values)}, replica ${replica})`,
    (model) => model.users.size > 0,
    (model) => changeWrite(model, userAt(model, which)[0], values, byPut, replica),
  );
}

/**
 * A rename on replica 1 racing, on replica 0, a create (`which` undefined) or the rename of
 * another user, to the same userName in another case.
 */
function racingRename(
  which: number,
  other: number | undefined,
  name: number,
  mask: number,
  byPut: boolean,
): Step {
  const userName = names[name] as string;
  const second = caseOf(userName, mask);
  return racing(
    `RacingRename(#${which} to ${second} on replica 1${byPut ? " by PUT" : ""}, ${other === undefined ? "a create" : `#${other}'s rename`} to ${userName} on replica 0)`,
    (model) => model.users.size > (other === undefined ? 0 : 1),
    (model) => {
      const [id] = userAt(model, which);
      const renamed = changeWrite(model, id, { userName: second }, byPut, 1);
      if (other === undefined) {
        const user = { userName, email: "new@x.io", displayName: "New", active: false };
        return [createWrite(user, 0), renamed];
      }
      const ids = [...model.users.keys()].filter((key) => key !== id);
      const first = changeWrite(model, ids[other % ids.length] as string, { userName }, false, 0);
      return [first, renamed];
    },
  );
}

/**
 * Two PATCHes of one user sent at once, one to each replica, of attributes no other user can hold
 * (displayName and title): both are acknowledged, so the user must then have both (M5: no
 * acknowledged change is lost to the other replica's write).
 */
function racingPatches(which: number, displayName: string, title: string): Step {
  return {
    applies: (model) => model.users.size > 0,
    name: `RacingPatches(#${which}, ${displayName}, ${title})`,
    async run(model, world) {
      const [id, before] = [...model.users][which % model.users.size] as [string, Acknowledged];
      const patch = (path: string, value: string) => ({
        schemas: [patchOp],
        Operations: [{ op: "replace", path, value }],
      });
      const answers = await Promise.all([
        (world.replicas[0] as Call)("PATCH", `/Users/${id}`, patch("displayName", displayName)),
        (world.replicas[1] as Call)("PATCH", `/Users/${id}`, patch("title", title)),
      ]);
      for (const answer of answers) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }
      model.users.set(id, { ...before, displayName, title });
    },
  };
}

function remove(which: number, replica: number): Step {
  return {
    applies: (model) => model.users.size > 0,
    name: `Delete(#${which}, replica ${replica})`,
    async run(model, world) {
      const [id] = [...model.users][which % model.users.size] as [string, Acknowledged];
      expect((await (world.replicas[replica] as Call)("DELETE", `/Users/${id}`)).status).toBe(204);
      model.users.delete(id);
      model.deleted.add(id);
    },
  };
}

const run = exploration("SCIM with replicas", { numRuns: 3, maxCommands: 14 });
const replica = fc.nat(1);
const changes = fc
  .record(
    {
      userName: fc.constantFrom(...names),
      email: fc.constantFrom(...emails),
      displayName: fc.constantFrom("One", "Two"),
      active: fc.boolean(),
    },
    { requiredKeys: [] },
  )
  .filter((value) => Object.keys(value).length > 0);
const commands = fc.commands(
  [
    fc
      .tuple(fc.nat(names.length - 1), fc.nat(3), fc.boolean(), replica, fc.option(fc.nat(7)))
      .map(([name, email, active, where, racingCase]) =>
        checked(create(name, email, active, where, racingCase ?? undefined)),
      ),
    fc
      .tuple(fc.nat(7), fc.option(fc.nat(7)), fc.nat(names.length - 1), fc.nat(7), fc.boolean())
      .map(([which, other, name, mask, byPut]) =>
        checked(racingRename(which, other ?? undefined, name, mask, byPut)),
      ),
    fc
      .tuple(fc.nat(7), changes, fc.boolean(), replica)
      .map(([which, values, byPut, where]) => checked(change(which, values, byPut, where))),
    fc.tuple(fc.nat(7), replica).map(([which, where]) => checked(remove(which, where))),
    fc
      .tuple(fc.nat(7), fc.constantFrom("Three", "Four"), fc.constantFrom("Boss", "Chief"))
      .map(([which, displayName, title]) => checked(racingPatches(which, displayName, title))),
  ],
  { maxCommands: run.maxCommands },
);

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function sqliteDatabase(): Database {
  const folder = mkdtempSync(join(tmpdir(), "pi-scim-replicas-"));
  folders.push(folder);
  const file = join(folder, "users.db");
  const opened: SqliteUserStore[] = [];
  const open = () => {
    const store = new SqliteUserStore(file, { unique: [...unique], onDelete: "deactivate" });
    opened.push(store);
    return store;
  };
  const reader = open();
  return {
    stores: async (seed) => [delayed(open(), seed), delayed(open(), seed + 1)],
    users: () => reader.list({ includeDeactivated: true }),
    close: async () => {
      for (const store of opened) store.close();
    },
  };
}

async function postgresDatabase(): Promise<Database> {
  const { default: pg } = await import("pg");
  const { PostgresUserStore } = await import("../../src/stores/postgres/index.ts");
  const pools = [0, 1, 2].map(() => new pg.Pool({ connectionString: pgUrl, max: 2 }));
  const table = `scim_replicas_${randomUUID().slice(0, 8)}`;
  const open = (pool: (typeof pools)[number]) =>
    new PostgresUserStore({ pool, table, unique: [...unique], onDelete: "delete" });
  const reader = open(pools[0] as (typeof pools)[number]);
  await reader.migrate();
  return {
    stores: async (seed) => [
      delayed(open(pools[1] as never), seed),
      delayed(open(pools[2] as never), seed + 1),
    ],
    users: () => reader.list({ includeDeactivated: true }),
    close: async () => {
      for (const table_ of [table, `${table}_quarantine`, `${table}_quarantine_awaits`]) {
        await (pools[0] as (typeof pools)[number]).query(`DROP TABLE IF EXISTS "${table_}"`);
      }
      await Promise.all(pools.map((pool) => pool.end()));
    },
  };
}

describe.each([
  ["a SqliteUserStore file (onDelete: deactivate)", sqliteDatabase],
  ...(pgUrl === undefined ? [] : [["PostgreSQL (onDelete: delete)", postgresDatabase] as const]),
] as [string, () => Database | Promise<Database>][])(
  "SCIM on two replicas over %s, explored",
  (_name, createDatabase) => {
    it(
      "answers each GET with what was acknowledged, answers races as one of their orders, and no two users share a userName (ignoring case) or active users a unique value (M1-M6)",
      async () => {
        await fc.assert(
          fc.asyncProperty(commands, fc.nat(), async (sequence, seed) => {
            const database = await createDatabase();
            try {
              const stores = await database.stores(seed);
              const handlers = stores.map((store) => createScimHandler({ store, token }));
              const model: Model = { users: new Map(), deleted: new Set() };
              await fc.asyncModelRun(
                () => ({ model, real: new World(handlers, database) }),
                sequence,
              );
            } finally {
              await database.close();
            }
          }),
          run.parameters,
        );
      },
      run.timeoutMs,
    );
  },
);
