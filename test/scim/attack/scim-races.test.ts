// Attack: interleavings of two writers. Each replica test pauses replica A right before a store
// call (a gate, no timers), lets replica B finish and be acknowledged, then lets A go on: what B
// was acknowledged for must still hold afterwards. Two replicas are two handlers, each with its own
// store connection, over one SQLite file or one PostgreSQL table (when PLATFORM_INTEGRATION_PG_URL
// is set). The one-process tests race two requests to one handler.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createProvisioningHandler, MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler, type ScimUserStore } from "../../../src/scim/index.ts";
import { SqliteUserStore } from "../../../src/stores/sqlite/index.ts";
import { asciiLowerCase } from "../../../src/users/store-rules.ts";
import type { UserRecord } from "../../../src/users/user-record.ts";
import type { ReplaceOptions } from "../../../src/users/user-store.ts";
import { clientOf, gated, patchOp, postgresStores, token } from "./support.ts";

// Empty means unset, as for the other PostgreSQL suites (test/support/skipped-suites.ts).
const pgUrl = process.env.PLATFORM_INTEGRATION_PG_URL || undefined;
const cleanups: (() => void | Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

type OnDelete = "delete" | "deactivate";

/** Two store connections over one new database. */
type Database = (onDelete: OnDelete) => Promise<[ScimUserStore, ScimUserStore]>;

const sqlite: Database = async (onDelete) => {
  const folder = mkdtempSync(join(tmpdir(), "scim-races-"));
  const file = join(folder, "users.db");
  const stores = [0, 1].map(
    () => new SqliteUserStore(file, { unique: ["username", "email"], onDelete }),
  );
  cleanups.push(() => {
    for (const store of stores) store.close();
    rmSync(folder, { recursive: true, force: true });
  });
  return stores as [SqliteUserStore, SqliteUserStore];
};

const memory: Database = async (onDelete) => {
  const store = new MemoryUserStore({ unique: ["username", "email"], onDelete });
  return [store, store];
};

const postgres: Database = async (onDelete) => {
  const { stores, drop } = await postgresStores(pgUrl as string, 2, onDelete);
  cleanups.push(drop);
  return [stores[0], stores[1]] as [ScimUserStore, ScimUserStore];
};

/** Two SCIM replicas over one database; replica A's store calls can be paused. */
async function replicas(database: Database, onDelete: OnDelete) {
  const [first, second] = await database(onDelete);
  const a = gated(first);
  return {
    a: clientOf(createScimHandler({ store: a.store, token })),
    b: clientOf(createScimHandler({ store: second, token })),
    holdA: a.hold,
  };
}

/** The non-deleted SCIM users whose userName is `name` ignoring ASCII case, through a filter. */
async function named(call: ReturnType<typeof clientOf>, name: string): Promise<number> {
  const found = await call("GET", `/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}`);
  return found.body.totalResults as number;
}

const alice = {
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  userName: "alice",
  externalId: "ext-alice",
  displayName: "Alice",
  emails: [{ value: "alice@example.com", type: "work", primary: true }],
};

const databases: [string, Database][] = [
  ["one MemoryUserStore", memory],
  ["one SQLite file", sqlite],
  ...(pgUrl === undefined ? [] : [["one PostgreSQL table", postgres] as [string, Database]]),
];

describe.each(databases)("two replicas over %s", (_name, database) => {
  describe.each(["delete", "deactivate"] as const)("onDelete %s", (onDelete) => {
    it("a DELETE acknowledged while a PATCH is in flight stays deleted (no revival)", async () => {
      const { a, b, holdA } = await replicas(database, onDelete);
      const created = await b("POST", "/Users", alice);
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const hold = holdA("replace");
      const patching = a("PATCH", `/Users/${id}`, {
        schemas: [patchOp],
        Operations: [{ op: "replace", path: "displayName", value: "Alice 2" }],
      });
      await hold.reached; // A has read the user and is about to write it whole
      expect((await b("DELETE", `/Users/${id}`)).status).toBe(204);
      hold.release();
      expect([200, 404]).toContain((await patching).status);
      expect((await b("GET", `/Users/${id}`)).status, "GET after the acknowledged DELETE").toBe(
        404,
      );
    });

    it("a deactivation acknowledged while another PATCH is in flight is not undone", async () => {
      const { a, b, holdA } = await replicas(database, onDelete);
      const id = (await b("POST", "/Users", alice)).body.id as string;
      const hold = holdA("replace");
      const renaming = a("PATCH", `/Users/${id}`, {
        schemas: [patchOp],
        Operations: [{ op: "Replace", path: "displayName", value: "Alice 2" }],
      });
      await hold.reached;
      const off = await b("PATCH", `/Users/${id}`, {
        schemas: [patchOp],
        Operations: [{ op: "Replace", path: "active", value: "False" }],
      });
      expect([off.status, off.body.active]).toEqual([200, false]);
      hold.release();
      expect((await renaming).status).toBe(200);
      expect((await b("GET", `/Users/${id}`)).body.active, "the acknowledged deactivation").toBe(
        false,
      );
    });

    it("If-Match holds across replicas: two writers with the same version, one gets 412", async () => {
      const { a, b, holdA } = await replicas(database, onDelete);
      const created = await b("POST", "/Users", alice);
      const id = created.body.id as string;
      const version = created.headers.get("etag") as string;
      const hold = holdA("replace");
      const first = a(
        "PUT",
        `/Users/${id}`,
        { ...alice, displayName: "From A" },
        { "if-match": version },
      );
      await hold.reached;
      const second = await b(
        "PUT",
        `/Users/${id}`,
        { ...alice, displayName: "From B" },
        { "if-match": version },
      );
      hold.release();
      expect([(await first).status, second.status].sort()).toEqual([200, 412]);
    });

    // H3: SCIM's userName is unique ignoring case (RFC 7643: caseExact false), among inactive
    // users too; the store's unique index compares exactly and leaves inactive users out, so only
    // the store's atomic check of who holds the name keeps two replicas from both creating it.
    it("Alice and alice created on two replicas at once: one is created, the other 409", async () => {
      const { a, b, holdA } = await replicas(database, onDelete);
      const hold = holdA("replace");
      const first = a("POST", "/Users", { ...alice, userName: "Alice", emails: [] });
      await hold.reached; // A found the name free and is about to write
      const second = await b("POST", "/Users", { ...alice, userName: "alice", emails: [] });
      hold.release();
      const answers = [await first, second];
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
      expect(answers.find((answer) => answer.status === 409)?.body.scimType).toBe("uniqueness");
      expect(await named(b, "ALICE"), "users named alice").toBe(1);
    });

    it("an inactive user created on two replicas at once is created once", async () => {
      const { a, b, holdA } = await replicas(database, onDelete);
      const inactive = { ...alice, active: false };
      const hold = holdA("replace");
      const first = a("POST", "/Users", inactive);
      await hold.reached;
      const second = await b("POST", "/Users", inactive);
      hold.release();
      expect([(await first).status, second.status].sort()).toEqual([201, 409]);
      expect(await named(b, "alice"), "users named alice").toBe(1);
    });

    it("a rename on one replica and a create of the name on the other: one wins", async () => {
      const { a, b, holdA } = await replicas(database, onDelete);
      const carol = (await b("POST", "/Users", { userName: "carol" })).body.id as string;
      const hold = holdA("replace");
      const renaming = a("PATCH", `/Users/${carol}`, {
        schemas: [patchOp],
        Operations: [{ op: "replace", path: "userName", value: "Bob" }],
      });
      await hold.reached;
      const creating = await b("POST", "/Users", { userName: "bob", active: false });
      hold.release();
      expect([(await renaming).status, creating.status].sort()).toEqual([201, 409]);
      expect(await named(b, "bob"), "users named bob").toBe(1);
    });

    it("two renames to one name on two replicas (PUT and PATCH): one wins", async () => {
      const { a, b, holdA } = await replicas(database, onDelete);
      const carol = (await b("POST", "/Users", { userName: "carol" })).body.id as string;
      const dave = (await b("POST", "/Users", { userName: "dave", active: false })).body
        .id as string;
      const hold = holdA("replace");
      const putting = a("PUT", `/Users/${carol}`, { userName: "Eve" });
      await hold.reached;
      const patched = await b("PATCH", `/Users/${dave}`, {
        schemas: [patchOp],
        Operations: [{ op: "replace", path: "userName", value: "eve" }],
      });
      hold.release();
      expect([(await putting).status, patched.status].sort()).toEqual([200, 409]);
      expect(await named(b, "eve"), "users named eve").toBe(1);
    });
  });
});

describe("one process, one store: SCIM's own userName check", () => {
  /** Lets every promise that can settle without I/O settle (the memory store does no I/O). */
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

  /**
   * A store written before `usernameHolders` (a custom one): its replace writes whatever the
   * holders. In one process, the name lock that a create and a rename both take still keeps
   * userName unique; across replicas only the store's condition can (docs/scim.md).
   */
  class Unaware extends MemoryUserStore {
    override replace(user: UserRecord): Promise<UserRecord>;
    override replace(user: UserRecord, options: ReplaceOptions): Promise<UserRecord | undefined>;
    override async replace(user: UserRecord, options?: ReplaceOptions) {
      return options?.expected === undefined
        ? super.replace(user)
        : super.replace(user, { expected: options.expected });
    }
  }

  it.each([
    ["PATCH", true, "MemoryUserStore"],
    ["PUT", true, "MemoryUserStore"],
    ["PATCH", false, "MemoryUserStore"],
    ["PATCH", true, "a store ignoring usernameHolders"],
    ["PUT", false, "a store ignoring usernameHolders"],
  ] as const)(
    "a POST and a %s renaming another user to the same userName (other case), active %s, on %s: one wins",
    async (method, active, kind) => {
      const options = { unique: ["username", "email"] } as const;
      const memory =
        kind === "MemoryUserStore" ? new MemoryUserStore(options) : new Unaware(options);
      const { store, hold } = gated(memory);
      const scim = clientOf(createScimHandler({ store, token }));
      const other = (await scim("POST", "/Users", { userName: "carol", active })).body.id as string;
      const held = hold("replace");
      const creating = scim("POST", "/Users", { userName: "Bob", active });
      await held.reached; // the POST found "Bob" free and is about to write
      const renaming =
        method === "PUT"
          ? scim("PUT", `/Users/${other}`, { userName: "bob", active })
          : scim("PATCH", `/Users/${other}`, {
              schemas: [patchOp],
              Operations: [{ op: "replace", path: "userName", value: "bob" }],
            });
      await settle(); // the rename runs as far as it can before the POST writes
      held.release();
      const statuses = [(await creating).status, (await renaming).status];
      expect(
        statuses.filter((status) => status === 409),
        `answers ${statuses}`,
      ).toHaveLength(1);
      const holders = (await memory.list({ includeDeactivated: true })).filter(
        (user) => asciiLowerCase(user.username ?? "") === "bob",
      );
      expect(holders, "users named bob").toHaveLength(1);
    },
  );
});

describe("both protocols on one store, one process", () => {
  function both() {
    const memory = new MemoryUserStore({ unique: ["username", "email"] });
    const { store, hold } = gated(memory);
    const scim = clientOf(createScimHandler({ store, token }));
    const provisioning = createProvisioningHandler({ store: memory });
    const send = (method: string, path: string, body?: unknown) =>
      provisioning.fetch(
        new Request(`http://127.0.0.1${path}`, {
          method,
          headers: { "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      );
    return { scim, send, hold, memory };
  }

  it("a Provisioning API delete acknowledged during a SCIM PATCH stays deleted", async () => {
    const { scim, send, hold } = both();
    const id = (await scim("POST", "/Users", alice)).body.id as string;
    const held = hold("replace");
    const patching = scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "replace", path: "displayName", value: "Alice 2" }],
    });
    await held.reached;
    expect((await send("DELETE", `/v1/user/${id}`)).status).toBe(204);
    held.release();
    await patching;
    expect((await scim("GET", `/Users/${id}`)).status, "revived by the SCIM write").toBe(404);
  });

  it("a Provisioning API modify acknowledged during a SCIM PATCH is not lost", async () => {
    const { scim, send, hold, memory } = both();
    const id = (await scim("POST", "/Users", alice)).body.id as string;
    const held = hold("replace");
    const patching = scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "replace", path: "displayName", value: "Alice 2" }],
    });
    await held.reached;
    const modified = await send("POST", "/v1/user/modify", { uuid: id, first_name: "Alicia" });
    expect(modified.status).toBe(204);
    held.release();
    expect((await patching).status).toBe(200);
    expect((await memory.get(id))?.firstName, "the acknowledged Provisioning API change").toBe(
      "Alicia",
    );
  });
});
