// The SCIM server explored with replicas: two handlers, each with a store connection of its own,
// over one database (a SqliteUserStore file; a PostgreSQL table when PLATFORM_INTEGRATION_PG_URL is
// set), a seeded random delay before and after every store call, beside a model of what was
// acknowledged. Random creates (some racing: the same userName and email sent to both replicas at
// once), PATCHes (userName, email, displayName, active), PUTs and DELETEs, each to a random replica.
//
// After each command:
// M1 what a GET of each id returns (through either replica) is what was acknowledged for it last,
//    and a deleted id answers 404;
// M2 a filter by userName finds exactly the users the model holds with it;
// M3 no two active users of the store share a unique value (username, email);
// M4 of two racing creates of one active user, exactly one is acknowledged (of an inactive one,
//    which holds no unique value, both may be);
// M5 of two racing PATCHes of one user (one to each replica, of different attributes), both are
//    acknowledged and the user then has both changes: no acknowledged change is lost.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { UserRecord } from "../../src/provisioning/index.ts";
import { createScimHandler, type ScimHandler, type ScimUserStore } from "../../src/scim/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { exploration } from "../support/exploration.ts";
import { patchOp, token } from "./helpers.ts";
import { handlerClient } from "./sequences.ts";

// Empty means unset, as for the other PostgreSQL suites (test/support/skipped-suites.ts).
const pgUrl = process.env.PLATFORM_INTEGRATION_PG_URL || undefined;
const names = ["ann", "bob", "cid", "dee"];
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
      for (const name of names) {
        const found = await call(
          "GET",
          `/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}`,
        );
        const ids = [...model.users].filter(([, user]) => user.userName === name).map(([id]) => id);
        expect(found.body.Resources.map((user: { id: string }) => user.id).sort()).toEqual(
          ids.sort(),
        );
      }
    }
    const active = (await this.database.users()).filter((user) => user.deactivatedAt === undefined);
    for (const field of unique) {
      const values = active.map((user) => user[field]).filter((value) => value !== undefined);
      expect(new Set(values).size, `M3: active users sharing a ${field}`).toBe(values.length);
    }
  }
}

/**
 * Whether another acknowledged user holds a value `next` takes: its userName when it is new to the
 * user (SCIM's check, against any user, active or not; a write that keeps the userName is never
 * refused for it), or its email while both are active (the store's unique index).
 */
function takenBy(
  model: Model,
  self: string | undefined,
  next: Acknowledged,
  before?: Acknowledged,
): boolean {
  const newName = before === undefined || before.userName !== next.userName;
  for (const [id, user] of model.users) {
    if (id === self) continue;
    if (newName && user.userName === next.userName) return true;
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

function create(
  name: number,
  email: number,
  active: boolean,
  replica: number,
  racing: boolean,
): Step {
  const user: Acknowledged = {
    userName: names[name] as string,
    email: emails[email] as string,
    displayName: `${names[name]} ${email}`,
    active,
  };
  return {
    applies: () => true,
    name: `Create(${user.userName}, ${user.email}, ${active ? "active" : "inactive"}${racing ? ", racing" : `, replica ${replica}`})`,
    async run(model, world) {
      const body = {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName: user.userName,
        displayName: user.displayName,
        active: active ? "True" : "False",
        emails: [{ value: user.email, type: "work", primary: true }],
      };
      const sends = racing ? [0, 1] : [replica];
      const answers = await Promise.all(
        sends.map((index) => (world.replicas[index] as Call)("POST", "/Users", body)),
      );
      const won = answers.filter((answer) => answer.status === 201);
      // M4: of two racing creates of an active user, one is acknowledged (unless another user
      // holds a value, then none). An inactive user holds no value of the store's unique
      // indexes, so two replicas racing on one may both create it: SCIM's userName check is per
      // process (docs/scim.md, "Uniqueness"); both are then acknowledged users.
      const taken = takenBy(model, undefined, user);
      if (taken) expect(won.length, "creations acknowledged").toBe(0);
      else if (active || !racing) expect(won.length, "creations acknowledged").toBe(1);
      else expect(won.length, "creations acknowledged").toBeGreaterThan(0);
      for (const answer of answers) {
        if (answer.status !== 201) expect(answer.status, JSON.stringify(answer.body)).toBe(409);
      }
      for (const answer of won) model.users.set(answer.body.id, user);
    },
  };
}

function change(
  which: number,
  values: Partial<Acknowledged>,
  byPut: boolean,
  replica: number,
): Step {
  return {
    applies: (model) => model.users.size > 0,
    name: `${byPut ? "Put" : "Patch"}(#${which}, ${JSON.stringify(values)}, replica ${replica})`,
    async run(model, world) {
      const [id, before] = [...model.users][which % model.users.size] as [string, Acknowledged];
      const next = { ...before, ...values };
      // A PUT replaces the whole user: the title a racing PATCH set is not in its body.
      if (byPut) delete next.title;
      const call = world.replicas[replica] as Call;
      const answer = byPut
        ? await call("PUT", `/Users/${id}`, {
            userName: next.userName,
            displayName: next.displayName,
            active: next.active,
            emails: [{ value: next.email, type: "work", primary: true }],
          })
        : await call("PATCH", `/Users/${id}`, {
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
      const refused = takenBy(model, id, next, before);
      expect(answer.status, JSON.stringify(answer.body)).toBe(refused ? 409 : 200);
      if (!refused) model.users.set(id, next);
    },
  };
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
      .tuple(fc.nat(3), fc.nat(3), fc.boolean(), replica, fc.boolean())
      .map(([name, email, active, where, racing]) =>
        checked(create(name, email, active, where, racing)),
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
      "answers each GET with what was acknowledged, and no two active users share a unique value, nor is an acknowledged change lost (M1-M5)",
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
