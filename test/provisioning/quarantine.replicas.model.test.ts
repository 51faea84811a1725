// The quarantine explored with replicas: two or three handler processes over one database (a
// SqliteUserStore file; a PostgreSQL table when PLATFORM_INTEGRATION_PG_URL is set), a random
// delay around every store call, beside a model of the directory. Random creates, modifies and
// deletes over two unique fields (username, email), swaps of one or both fields, rotations of
// three users over both, their messages sent one after the other or all at once to random
// replicas, and replicas killed (-9) while messages are in flight and started again. A message a
// killed replica never answered is sent again to another, as the platform does. A killed replica
// other than the first may come back at once, while the messages are still in flight, with the
// option turned the other way (off, or on again): pending records then meet a handler with the
// quarantine off, which must apply nothing of them over an acknowledged message.
//
// After each command, once every message is acknowledged (quiescence):
// I1 every acknowledged message is applied, in per-uuid order, unless a later acknowledged delete
//    supersedes it: the store equals the fold of the acknowledged messages, which is the
//    directory's last state (checked with I3, the directory being consistent after each command);
// I2 no two active users share a unique value;
// I3 the store equals the directory's last state except users waiting on a value another user
//    really holds, and quarantined() lists exactly those: the directory's values are unique after
//    every command, so no user may wait and the store must equal it. While a replica runs with
//    the option off, a user may also wait on a value nobody holds, which that replica freed by a
//    plain upsert (it wakes nobody, as documented); one retry pass of a replica with the option
//    on must release it;
// I4 a user acknowledged deleted never reappears without a later create;
// I5 the store calls one request makes are bounded, whatever is kept.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { QuarantinedUser, UserRecord } from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { exploration } from "../support/exploration.ts";

const worker = fileURLToPath(new URL("../support/quarantine-replica.ts", import.meta.url));
// Empty means unset, as for the other PostgreSQL suites (test/support/skipped-suites.ts).
const pgUrl = process.env.PLATFORM_INTEGRATION_PG_URL || undefined;

type Values = { username?: string; email?: string };
/** The directory: each user's unique values. */
type Model = Map<string, Values>;
type Field = keyof Values;
const fields: Field[] = ["username", "email"];

/** A message the platform sends, as the directory produced it. */
type Message = { uuid: string; method: "POST" | "DELETE"; path: string; body?: object };

interface Replica {
  child: ChildProcess;
  port: number;
}

/** The database the replicas share, and how to read it without them. */
interface Database {
  config(seed: number): object;
  users(): Promise<UserRecord[]>;
  close(): Promise<void>;
}

const uuids = ["u0", "u1", "u2", "u3", "u4"];
const usernames = ["ann", "bob", "cid", "dee", "eve", "fay"];
const emails = ["a@x.io", "B@x.io", "c@x.io", "d@x.io", "e@x.io", "f@x.io"];
const fold = (field: Field, value: string) => (field === "email" ? value.toLowerCase() : value);
/** Whether another user of the directory holds `value`. */
const taken = (model: Model, field: Field, value: string, except: readonly string[]) =>
  [...model].some(
    ([uuid, values]) =>
      !except.includes(uuid) &&
      values[field] !== undefined &&
      fold(field, values[field] as string) === fold(field, value),
  );

class World {
  readonly replicas: (Replica | undefined)[] = [];
  /** For I4: users whose last acknowledged message is a delete. */
  readonly deleted = new Set<string>();
  maxCalls = 0;
  /** Replicas started with the quarantine off; the first is never one (it keeps what conflicts). */
  readonly quarantineOff = new Set<number>();
  readonly database: Database;
  readonly count: number;
  readonly seed: number;
  constructor(database: Database, count: number, seed: number) {
    this.database = database;
    this.count = count;
    this.seed = seed;
  }

  async start(index: number): Promise<void> {
    const child = spawn(
      process.execPath,
      [
        "--no-warnings",
        worker,
        JSON.stringify({
          ...this.database.config(this.seed + index * 7919),
          quarantine: !this.quarantineOff.has(index),
        }),
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const line = await new Promise<string>((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`replica ${index} exited (${code})`)));
      createInterface({ input: child.stdout as NonNullable<typeof child.stdout> }).once(
        "line",
        resolve,
      );
    });
    child.removeAllListeners("exit");
    this.replicas[index] = { child, port: Number(line) };
  }

  kill(index: number): void {
    this.replicas[index]?.child.kill("SIGKILL");
    this.replicas[index] = undefined;
  }

  async stop(): Promise<void> {
    for (const replica of this.replicas) replica?.child.kill("SIGKILL");
    await this.database.close();
  }

  /** Sends a message until a replica acknowledges it; `pick` chooses the replica. */
  async deliver(message: Message, pick: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const live = this.replicas.filter((replica): replica is Replica => replica !== undefined);
      const replica = live[(pick + attempt) % live.length] as Replica;
      let answer: Response;
      try {
        answer = await fetch(`http://127.0.0.1:${replica.port}${message.path}`, {
          method: message.method,
          headers: { "content-type": "application/json" },
          ...(message.body === undefined ? {} : { body: JSON.stringify(message.body) }),
        });
      } catch {
        continue; // killed: the platform sends it again
      }
      await answer.arrayBuffer();
      // A 503 is sent again, as the platform does; anything else but success is a defect.
      if (answer.status === 503) continue;
      expect(
        answer.status,
        `${message.method} ${message.path} ${JSON.stringify(message.body)}`,
      ).toBe(message.method === "DELETE" ? 204 : message.path.endsWith("create") ? 201 : 204);
      const calls = Number(answer.headers.get("x-store-calls"));
      this.maxCalls = Math.max(this.maxCalls, calls);
      // I5: one step, and one per user it woke (each user at most twice), whatever is kept; with
      // the option off, one read of the pending users at the replica's first message.
      expect(calls, "store calls of one request").toBeLessThanOrEqual(2 + 2 * uuids.length);
      if (message.method === "DELETE") this.deleted.add(message.uuid);
      else if (message.path.endsWith("create")) this.deleted.delete(message.uuid);
      return;
    }
  }

  /** What waits, as a replica with the quarantine on lists it (one with it off lists nothing). */
  async quarantined(): Promise<QuarantinedUser[]> {
    const live = this.replicas.find(
      (replica, index) => replica !== undefined && !this.quarantineOff.has(index),
    ) as Replica;
    return (await (
      await fetch(`http://127.0.0.1:${live.port}/quarantined`)
    ).json()) as QuarantinedUser[];
  }

  /** One retryQuarantined() pass, on a replica with the quarantine on. */
  async retry(): Promise<void> {
    const live = this.replicas.find(
      (replica, index) => replica !== undefined && !this.quarantineOff.has(index),
    ) as Replica;
    await (await fetch(`http://127.0.0.1:${live.port}/retry`, { method: "POST" })).arrayBuffer();
  }
}

/** The check after every command: I2, I3 (with I1) and I4. */
async function check(model: Model, world: World): Promise<void> {
  if (world.quarantineOff.size > 0) {
    // A replica with the option off writes by a plain upsert: a value it frees wakes nobody
    // (docs/provisioning.md, "Turning the option off"). A user waiting for such a value is
    // picked up by the next retry pass of a replica with the option on (each runs one when it
    // starts), or by its next message. So here a user may wait, but only on a value nobody holds,
    // and one pass releases it.
    const active = (await world.database.users()).filter((user) => !user.deactivatedAt);
    const holders = new Set(
      active.flatMap((user) =>
        fields.flatMap((field) =>
          user[field] === undefined ? [] : [`${field}:${fold(field, user[field] as string)}`],
        ),
      ),
    );
    for (const waiting of await world.quarantined()) {
      expect(
        waiting.awaits.filter(({ field, value }) => holders.has(`${field}:${value}`)),
        `I3: ${waiting.uuid} waits on a value another user holds`,
      ).toEqual([]);
    }
    await world.retry();
  }
  const users = await world.database.users();
  const active = users.filter((user) => user.deactivatedAt === undefined);
  for (const field of fields) {
    const held = active.flatMap((user) =>
      user[field] === undefined ? [] : [fold(field, user[field] as string)],
    );
    expect(new Set(held).size, `I2: two active users share a ${field}`).toBe(held.length);
  }
  expect(await world.quarantined(), "I3: nobody waits on a value nobody holds").toEqual([]);
  const stored = new Map(
    active.map((user) => [
      user.uuid,
      {
        ...(user.username === undefined ? {} : { username: user.username }),
        ...(user.email === undefined ? {} : { email: user.email }),
      },
    ]),
  );
  expect(stored, "I1/I3: the store is the directory").toEqual(model);
  for (const uuid of world.deleted) {
    expect(stored.has(uuid), `I4: ${uuid} came back after its delete`).toBe(false);
  }
}

/** The messages that take the directory to `next` for `uuid`. */
function messageOf(model: Model, uuid: string, next: Values | undefined): Message {
  if (next === undefined) return { uuid, method: "DELETE", path: `/v1/user/${uuid}` };
  const before = model.get(uuid);
  const body: Record<string, string | null> = { uuid };
  for (const field of fields) {
    if (before === undefined) {
      if (next[field] !== undefined) body[field] = next[field] as string;
    } else if (before[field] !== next[field]) body[field] = next[field] ?? null;
  }
  return {
    uuid,
    method: "POST",
    path: before === undefined ? "/v1/user/create" : "/v1/user/modify",
    body,
  };
}

/** Changes of several users at once: their messages, and how they are sent. */
abstract class Changes implements fc.AsyncCommand<Model, World> {
  /** Together: all messages at once (distinct uuids), else one after the other. */
  readonly together: boolean;
  readonly picks: number[];
  /** A replica killed (-9) once the messages are sent, started again after. */
  readonly crash: number | undefined;
  /**
   * The killed replica (not the first) comes back at once, messages still in flight, with the
   * quarantine option turned the other way.
   */
  readonly toggle: boolean;
  constructor(together: boolean, picks: number[], crash: number | undefined, toggle = false) {
    this.together = together;
    this.picks = picks;
    this.crash = crash;
    this.toggle = toggle;
  }
  abstract check(model: Readonly<Model>): boolean;
  abstract next(model: Readonly<Model>): [string, Values | undefined][];
  async run(model: Model, world: World): Promise<void> {
    const changes = this.next(model);
    const messages = changes.map(([uuid, next]) => messageOf(model, uuid, next));
    for (const [uuid, next] of changes) {
      if (next === undefined) model.delete(uuid);
      else model.set(uuid, next);
    }
    const crash = this.crash === undefined ? undefined : this.crash % world.count;
    const toggle = this.toggle && crash !== undefined && crash !== 0;
    let back: Promise<void> | undefined;
    const kill = (index: number) => {
      world.kill(index);
      if (toggle) {
        if (world.quarantineOff.has(index)) world.quarantineOff.delete(index);
        else world.quarantineOff.add(index);
        back = world.start(index);
      } else if (
        !world.replicas.some(
          (replica, other) => replica !== undefined && !world.quarantineOff.has(other),
        )
      ) {
        // It was the last live replica with the option on: those left answer a conflict with 503
        // for ever, so it comes back at once (as the platform's retries would find it, once up).
        back = world.start(index);
      }
    };
    if (this.together) {
      const sent = messages.map((message, index) => world.deliver(message, this.picks[index] ?? 0));
      if (crash !== undefined) kill(crash);
      await Promise.all(sent);
    } else {
      for (const [index, message] of messages.entries()) {
        const sent = world.deliver(message, this.picks[index] ?? 0);
        if (crash !== undefined && index === 0) kill(crash);
        await sent;
      }
    }
    if (back !== undefined) await back;
    else if (crash !== undefined) await world.start(crash);
    await check(model, world);
  }
  abstract label(): string;
  toString = () =>
    `${this.label()}${this.together ? " together" : ""} via ${this.picks.join(",")}${this.crash === undefined ? "" : ` crash ${this.crash}${this.toggle ? " toggling the option" : ""}`}`;
}

class Change extends Changes {
  readonly uuid: string;
  readonly values: Values | undefined;
  constructor(
    uuid: string,
    values: Values | undefined,
    picks: number[],
    crash: number | undefined,
    toggle = false,
  ) {
    super(false, picks, crash, toggle);
    this.uuid = uuid;
    this.values = values;
  }
  check(model: Readonly<Model>): boolean {
    if (this.values === undefined) return model.has(this.uuid);
    return fields.every(
      (field) =>
        this.values?.[field] === undefined ||
        !taken(model as Model, field, this.values[field] as string, [this.uuid]),
    );
  }
  next = (): [string, Values | undefined][] => [[this.uuid, this.values]];
  label = () =>
    this.values === undefined
      ? `delete ${this.uuid}`
      : `set ${this.uuid} ${JSON.stringify(this.values)}`;
}

/** Each user takes the next one's values of `swapped` (two users: a swap; three: a rotation). */
class Rotation extends Changes {
  readonly users: string[];
  readonly swapped: Field[];
  constructor(
    users: string[],
    swapped: Field[],
    together: boolean,
    picks: number[],
    crash: number | undefined,
    toggle = false,
  ) {
    super(together, picks, crash, toggle);
    this.users = users;
    this.swapped = swapped;
  }
  check(model: Readonly<Model>): boolean {
    return (
      new Set(this.users).size === this.users.length && this.users.every((uuid) => model.has(uuid))
    );
  }
  next(model: Readonly<Model>): [string, Values | undefined][] {
    return this.users.map((uuid, index) => {
      const from = model.get(this.users[(index + 1) % this.users.length] as string) as Values;
      const next: Values = { ...model.get(uuid) };
      for (const field of this.swapped) {
        if (from[field] === undefined) delete next[field];
        else next[field] = from[field];
      }
      return [uuid, next];
    });
  }
  label = () => `rotate ${this.users.join(">")} ${this.swapped.join("+")}`;
}

const run = exploration("quarantine with replicas", { numRuns: 2, maxCommands: 12 });
const uuid = fc.constantFrom(...uuids);
const picks = fc.array(fc.nat(5), { minLength: 3, maxLength: 3 });
const crash = fc.option(fc.nat(2), { freq: 4 });
const toggle = fc.boolean();
const values = fc.record(
  { username: fc.constantFrom(...usernames), email: fc.constantFrom(...emails) },
  { requiredKeys: [] },
);
const commands = fc.commands(
  [
    fc
      .tuple(uuid, values, picks, crash, toggle)
      .map(([id, next, where, dies, flip]) => new Change(id, next, where, dies ?? undefined, flip)),
    fc.tuple(uuid, picks).map(([id, where]) => new Change(id, undefined, where, undefined)),
    fc
      .tuple(
        fc.uniqueArray(uuid, { minLength: 2, maxLength: 2 }),
        fc.subarray(fields, { minLength: 1 }),
        fc.boolean(),
        picks,
        crash,
        toggle,
      )
      .map(
        ([users, swapped, together, where, dies, flip]) =>
          new Rotation(users, swapped, together, where, dies ?? undefined, flip),
      ),
    fc
      .tuple(
        fc.uniqueArray(uuid, { minLength: 3, maxLength: 3 }),
        fc.boolean(),
        picks,
        crash,
        toggle,
      )
      .map(
        ([users, together, where, dies, flip]) =>
          new Rotation(users, fields, together, where, dies ?? undefined, flip),
      ),
  ],
  { maxCommands: run.maxCommands },
);

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function sqliteDatabase(): Database {
  const folder = mkdtempSync(join(tmpdir(), "pi-replicas-"));
  folders.push(folder);
  const file = join(folder, "users.db");
  // Created (and switched to WAL) before the replicas start together.
  const reader = new SqliteUserStore(file, { unique: ["username", "email"] });
  return {
    config: (seed) => ({ kind: "sqlite", file, seed, delayMs: 3 }),
    users: () => reader.list(),
    close: async () => reader.close(),
  };
}

async function postgresDatabase(): Promise<Database> {
  const { default: pg } = await import("pg");
  const { PostgresUserStore } = await import("../../src/stores/postgres/index.ts");
  const pool = new pg.Pool({ connectionString: pgUrl, max: 2 });
  const table = `replicas_${randomUUID().slice(0, 8)}`;
  const reader = new PostgresUserStore({ pool, table, unique: ["username", "email"] });
  await reader.migrate();
  return {
    config: (seed) => ({ kind: "postgres", url: pgUrl, table, seed, delayMs: 3 }),
    users: () => reader.list(),
    close: () => pool.end(),
  };
}

describe.each([
  ["a SqliteUserStore file, three replicas", 3, sqliteDatabase],
  ...(pgUrl === undefined ? [] : [["PostgreSQL, two replicas", 2, postgresDatabase] as const]),
] as [string, number, () => Database | Promise<Database>][])(
  "the quarantine over %s, explored",
  (_name, count, createDatabase) => {
    /** Starts the replicas over a fresh database with every user created, and runs `commands`. */
    async function runWorld(seed: number, sequence: Iterable<fc.AsyncCommand<Model, World>>) {
      const world = new World(await createDatabase(), count, seed);
      try {
        for (let index = 0; index < count; index++) await world.start(index);
        // Every user exists with both fields, so that swaps and rotations apply from the start.
        const model: Model = new Map();
        for (const [index, id] of uuids.entries()) {
          const values = { username: usernames[index], email: emails[index] } as Values;
          await world.deliver(messageOf(model, id, values), index);
          model.set(id, values);
        }
        await fc.asyncModelRun(() => ({ model, real: world }), sequence);
      } finally {
        await world.stop();
      }
    }

    it(
      "acknowledges every message and converges to the directory (I1-I5), through crashes",
      async () => {
        await fc.assert(
          fc.asyncProperty(commands, fc.nat(), (sequence, seed) => runWorld(seed, sequence)),
          run.parameters,
        );
      },
      run.timeoutMs,
    );

    // Found by exploration (seed 1, 240 steps): replica 1 comes back with the option off, and the
    // last message of a rotation reaches it. Its plain upsert frees the values u2's record (kept
    // by a replica with the option on) awaits, and wakes nobody: u2 waits until a retry pass.
    // Catches: a model whose I3 demands wakes a replica with the option off never sends (it
    // failed here), as much as a retry pass that would leave u2 waiting.
    it("lets a replica with the option off free a value, and a retry pass release its waiter", async () => {
      await runWorld(2_147_483_628, [
        new Rotation(["u0", "u1"], fields, false, [5, 2, 1], 1, true),
        new Rotation(["u1", "u2", "u4"], fields, false, [0, 5, 1], undefined),
      ]);
    }, 60_000);
  },
);
