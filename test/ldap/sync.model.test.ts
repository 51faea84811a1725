// The directory sync explored against a real slapd (fast-check `fc.commands`): random directory
// operations (add, modify, rename, move out of the base and back, delete, username swaps, entries
// without the mapped uuid) under a random uuid mapping (the default, an attribute, a function
// with a fallback, a binary attribute), with random faults in the cycles (503, a 409 or 422
// refusal, an answer lost, the LDAP connection cut mid-read, the sync stopped between messages
// and started again on its state file). The application keeps usernames unique (409), as real ones do.
// Invariant: after a fault-free cycle the application's users are the directory's mapped view:
// nothing acknowledged was lost, nothing is left over. Bounded and seeded here (the slapd suite);
// longer under `npm run explore`.
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { Attribute, Change, Client } from "ldapts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDirectorySync,
  type DirectoryMapping,
  type DirectorySync,
  fromAttributes,
  objectGuidToString,
} from "../../src/ldap/index.ts";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type UserRecord,
} from "../../src/provisioning/index.ts";
import { type FaultyClient, withFaults } from "../../src/testing/faults.ts";
import { exploration } from "../support/exploration.ts";
import { type RunningServer, serveFetchHandler } from "../support/serve-fetch-handler.ts";
import { type RunningSlapd, startSlapd } from "../support/slapd.ts";

const installed = existsSync("/usr/sbin/slapd");
const required = process.env.PLATFORM_INTEGRATION_REQUIRE_LDAP === "1";
const explore = exploration("directory sync against slapd", { numRuns: 10, maxCommands: 20 });

/** The uuid mappings a run draws from, and how the test itself maps an entry's uuid. */
const mappings = {
  // objectGUID where an entry has one (only the objectGUID runs give them one), else entryUUID.
  default: {
    mapping: {},
    uuid: (entry: Entry) => (entry.guid ? objectGuidToString(entry.guid) : entry.entryUUID),
  },
  employeeNumber: {
    mapping: { uuid: "employeeNumber" },
    uuid: (entry: Entry) => entry.employeeNumber,
  },
  fallback: {
    mapping: {
      uuid: fromAttributes(
        ["employeeNumber", "entryUUID"],
        (entry) => entry.first("employeeNumber") ?? entry.first("entryUUID"),
      ),
    },
    uuid: (entry: Entry) => entry.employeeNumber ?? entry.entryUUID,
  },
  objectGUID: {
    mapping: { uuid: "objectGUID" },
    uuid: (entry: Entry) => entry.guid && objectGuidToString(entry.guid),
  },
} satisfies Record<
  string,
  { mapping: Partial<DirectoryMapping>; uuid: (entry: Entry) => string | undefined }
>;
type MappingName = keyof typeof mappings;

/** An entry as the directory holds it, read back by the test. */
interface Entry {
  dn: string;
  entryUUID: string;
  uid: string;
  sn: string;
  employeeNumber?: string;
  guid?: Buffer;
}

/** What the model knows: the people it made, where they are, and their usernames. */
interface Model {
  people: { key: number; uid: string; inBase: boolean; deleted: boolean }[];
  next: number;
}

type Fault =
  | { type: "none" }
  | { type: "503" | "409" | "422" | "lost-answer" | "stop"; at: number }
  | { type: "cut-ldap"; afterBytes: number };

/** The sync under test and everything around it, for one run. */
interface Real {
  admin: Client;
  base: string;
  outside: string;
  mappingName: MappingName;
  app: MemoryUserStore;
  server: RunningServer;
  /** What the application does to the next user messages (a fault of the current cycle). */
  intercept: { count: number; fault: Fault; controller?: AbortController };
  proxy: LdapProxy;
  state: string;
  sync: DirectorySync;
  /** The fault injector around the open sync's client. */
  faults: FaultyClient;
  steps: string[];
}

describe.runIf(installed || required)("directory sync explored against slapd (model)", () => {
  let slapd: RunningSlapd;
  let folder: string;
  beforeAll(async () => {
    slapd = await startSlapd(0);
    folder = mkdtempSync(join(tmpdir(), "sync-model-"));
  });
  afterAll(() => {
    slapd?.stop();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  const dnOf = (real: Real, key: number, inBase: boolean) =>
    `cn=p${key},${inBase ? real.base : real.outside}`;

  const openSync = (real: Real) =>
    createDirectorySync({
      ldap: {
        url: real.proxy.url,
        bindDn: slapd.bindDn,
        password: slapd.password,
        timeoutMs: 5_000,
      },
      baseDn: real.base,
      filter: "(objectClass=inetOrgPerson)",
      mapping: mappings[real.mappingName].mapping,
      target: real.server.url,
      state: real.state,
      deleteGuard: false,
      timeoutMs: 5_000,
      wrapClient: (client) => {
        real.faults = withFaults(client);
        return real.faults;
      },
    });

  /** The directory's users under the base, mapped as the run's mapping says. */
  async function mappedView(real: Real): Promise<UserRecord[]> {
    const { searchEntries } = await real.admin.search(real.base, {
      filter: "(objectClass=inetOrgPerson)",
      attributes: ["uid", "sn", "cn", "employeeNumber", "objectGUID", "entryUUID"],
      explicitBufferAttributes: ["objectGUID"],
    });
    const users: UserRecord[] = [];
    for (const raw of searchEntries) {
      const entry: Entry = {
        dn: raw.dn,
        entryUUID: raw.entryUUID as string,
        uid: raw.uid as string,
        sn: raw.sn as string,
        ...(typeof raw.employeeNumber === "string" && { employeeNumber: raw.employeeNumber }),
        ...(Buffer.isBuffer(raw.objectGUID) && { guid: raw.objectGUID }),
      };
      const uuid = mappings[real.mappingName].uuid(entry);
      if (uuid === undefined) continue;
      users.push({ uuid, username: entry.uid, lastName: entry.sn, fullName: raw.cn as string });
    }
    return users.sort(byUuid);
  }

  /** One cycle with `fault`; a stopped sync is closed and opened again on its state file. */
  async function cycle(real: Real, fault: Fault) {
    real.intercept = { count: 0, fault };
    if (fault.type === "lost-answer") {
      real.faults.injectFault({ type: "drop-response", on: fault.at % 2 ? "create" : "modify" });
    }
    if (fault.type === "cut-ldap") real.proxy.cutAfter(fault.afterBytes);
    const controller = new AbortController();
    real.intercept.controller = controller;
    const report = await real.sync.syncOnce({ signal: controller.signal });
    real.proxy.cutAfter(undefined);
    real.intercept = { count: 0, fault: { type: "none" } };
    if (fault.type === "stop" || fault.type === "lost-answer") {
      // Stopped between messages: what it acknowledged is in the state file.
      await real.sync.close();
      real.sync = openSync(real);
    }
    return report;
  }

  class Operation implements fc.AsyncCommand<Model, Real> {
    readonly label: string;
    readonly apply: (model: Model, real: Real) => Promise<void>;
    readonly can: (model: Model) => boolean;
    constructor(
      label: string,
      can: (model: Model) => boolean,
      apply: (model: Model, real: Real) => Promise<void>,
    ) {
      this.label = label;
      this.can = can;
      this.apply = apply;
    }
    check(model: Readonly<Model>) {
      return this.can(model as Model);
    }
    async run(model: Model, real: Real) {
      real.steps.push(this.label);
      await this.apply(model, real);
    }
    toString() {
      return this.label;
    }
  }

  const living = (model: Model) => model.people.filter((someone) => !someone.deleted);

  const add = (withoutUuid: boolean) =>
    new Operation(
      `add${withoutUuid ? " (without employeeNumber and objectGUID)" : ""}`,
      () => true,
      async (model, real) => {
        const key = model.next++;
        const uid = `user${key}`;
        await real.admin.add(dnOf(real, key, true), [
          new Attribute({ type: "objectClass", values: ["inetOrgPerson", "extensibleObject"] }),
          new Attribute({ type: "cn", values: [`p${key}`] }),
          new Attribute({ type: "sn", values: [`Surname ${key}`] }),
          new Attribute({ type: "uid", values: [uid] }),
          ...(withoutUuid ? [] : [new Attribute({ type: "employeeNumber", values: [`E${key}`] })]),
          // Binary GUIDs only where they are the uuid: elsewhere entryUUID, which Content Sync serves.
          ...(withoutUuid || real.mappingName !== "objectGUID"
            ? []
            : [new Attribute({ type: "objectGUID", values: [randomBytes(16)] })]),
        ]);
        model.people.push({ key, uid, inBase: true, deleted: false });
      },
    );

  const pick = (index: number, predicate: (someone: Model["people"][number]) => boolean) => ({
    can: (model: Model) => living(model).filter(predicate).length > 0,
    of: (model: Model) => {
      const candidates = living(model).filter(predicate);
      return candidates[index % candidates.length] as Model["people"][number];
    },
  });

  const modify = (index: number, surname: string) => {
    const target = pick(index, () => true);
    return new Operation(`modify sn=${surname}`, target.can, async (model, real) => {
      const someone = target.of(model);
      await real.admin.modify(dnOf(real, someone.key, someone.inBase), [
        new Change({
          operation: "replace",
          modification: new Attribute({ type: "sn", values: [surname] }),
        }),
      ]);
    });
  };

  const rename = (index: number) => {
    const target = pick(index, () => true);
    return new Operation("rename (modrdn, new uid)", target.can, async (model, real) => {
      const someone = target.of(model);
      const dn = dnOf(real, someone.key, someone.inBase);
      // A new RDN keeps the entryUUID; the uid changes with it.
      const key = model.next++;
      await real.admin.modifyDN(dn, `cn=p${key}`);
      const uid = `renamed${key}`;
      await real.admin.modify(dnOf(real, key, someone.inBase), [
        new Change({
          operation: "replace",
          modification: new Attribute({ type: "uid", values: [uid] }),
        }),
      ]);
      Object.assign(someone, { key, uid });
    });
  };

  const move = (index: number, into: boolean) => {
    const target = pick(index, (someone) => someone.inBase !== into);
    return new Operation(
      into ? "move back into the base" : "move out of the base",
      target.can,
      async (model, real) => {
        const someone = target.of(model);
        await real.admin.modifyDN(
          dnOf(real, someone.key, someone.inBase),
          `cn=p${someone.key},${into ? real.base : real.outside}`,
        );
        someone.inBase = into;
      },
    );
  };

  const remove = (index: number) => {
    const target = pick(index, () => true);
    return new Operation("delete", target.can, async (model, real) => {
      const someone = target.of(model);
      await real.admin.del(dnOf(real, someone.key, someone.inBase));
      someone.deleted = true;
    });
  };

  const swap = (first: number, second: number) =>
    new Operation(
      "swap two usernames",
      (model) => living(model).length >= 2,
      async (model, real) => {
        const people = living(model);
        const a = people[first % people.length] as Model["people"][number];
        const others = people.filter((someone) => someone !== a);
        const b = others[second % others.length] as Model["people"][number];
        for (const [someone, uid] of [
          [a, b.uid],
          [b, a.uid],
        ] as const) {
          await real.admin.modify(dnOf(real, someone.key, someone.inBase), [
            new Change({
              operation: "replace",
              modification: new Attribute({ type: "uid", values: [uid] }),
            }),
          ]);
        }
        [a.uid, b.uid] = [b.uid, a.uid];
      },
    );

  /** A cycle with a fault, then fault-free cycles until one completes: the invariant's check. */
  const sync = (fault: Fault) =>
    new Operation(
      `sync (${fault.type}${"at" in fault ? ` at ${fault.at}` : ""}${"afterBytes" in fault ? ` after ${fault.afterBytes} bytes` : ""})`,
      () => true,
      async (_model, real) => {
        await cycle(real, fault);
        // A fault-free cycle: every held message goes (a 409 a swap explains is staged).
        const report = await cycle(real, { type: "none" });
        real.steps.push(`  -> ${JSON.stringify({ ...report, skippedEntries: undefined })}`);
        expect(report, real.steps.join("\n")).toMatchObject({ completed: true, failed: 0 });
        const users = (await real.app.list()).map(({ uuid, username, lastName, fullName }) => ({
          uuid,
          username,
          lastName,
          fullName,
        }));
        expect(users.sort(byUuid), real.steps.join("\n")).toEqual(await mappedView(real));
      },
    );

  const faults: fc.Arbitrary<Fault> = fc.oneof(
    fc.constant({ type: "none" as const }),
    fc.record({
      type: fc.constantFrom(
        "503" as const,
        "409" as const,
        "lost-answer" as const,
        "stop" as const,
      ),
      at: fc.integer({ min: 1, max: 6 }),
    }),
    fc.record({
      type: fc.constant("cut-ldap" as const),
      afterBytes: fc.integer({ min: 50, max: 4000 }),
    }),
  );

  const commands = fc.commands(
    [
      fc.boolean().map((withoutUuid) => add(withoutUuid)),
      fc.constant(add(false)),
      fc
        .tuple(fc.nat(), fc.constantFrom("Ñandú", "Smith", "Ångström"))
        .map(([i, s]) => modify(i, s)),
      fc.nat().map(rename),
      fc.tuple(fc.nat(), fc.boolean()).map(([i, into]) => move(i, into)),
      fc.nat().map(remove),
      // Weighted by repetition: swaps and cycles are where orders and faults meet.
      fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => swap(a, b)),
      fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => swap(a, b)),
      faults.map(sync),
      faults.map(sync),
      faults.map(sync),
    ],
    { maxCommands: explore.maxCommands, size: "max" },
  );

  it(
    "keeps the application equal to the directory's mapped view after every fault-free cycle",
    async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...(Object.keys(mappings) as MappingName[])),
          commands,
          async (mappingName, operations) => {
            run++;
            const base = `ou=run${run}-${randomUUID().slice(0, 8)},${slapd.suffix}`;
            const outside = `ou=outside${run}-${randomUUID().slice(0, 8)},${slapd.suffix}`;
            const admin = new Client({ url: slapd.url });
            await admin.bind(slapd.bindDn, slapd.password);
            for (const dn of [base, outside]) {
              await admin.add(dn, {
                objectClass: ["organizationalUnit"],
                ou: [dn.slice(3, dn.indexOf(","))],
              });
            }
            const app = new MemoryUserStore();
            const proxy = await ldapProxy(slapd.url);
            const real = { admin, base, outside, mappingName, app, proxy } as Real;
            real.steps = [`mapping: ${mappingName}`];
            real.intercept = { count: 0, fault: { type: "none" } };
            real.server = await applicationServer(app, real);
            real.state = join(folder, `state-${run}.sqlite`);
            real.sync = openSync(real);
            try {
              // Three people synced before the commands: swaps and renames have users to act on.
              const model: Model = { people: [], next: 0 };
              for (let index = 0; index < 3; index++) await add(false).run(model, real);
              expect(await cycle(real, { type: "none" })).toMatchObject({
                completed: true,
                created: 3,
              });
              await fc.asyncModelRun(() => ({ model, real }), operations);
            } finally {
              await real.sync.close();
              await real.server.close();
              await proxy.close();
              await admin.unbind();
            }
          },
        ),
        explore.parameters,
      );
    },
    explore.timeoutMs,
  );
});

const byUuid = (a: { uuid: string }, b: { uuid: string }) =>
  a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0;

/**
 * The application: the SDK's handler over a memory store, behind a unique constraint on
 * usernames (409) and the current cycle's fault, on the n-th user message.
 */
async function applicationServer(store: MemoryUserStore, real: Real): Promise<RunningServer> {
  const handler = createProvisioningHandler({ store });
  return serveFetchHandler(async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/v1/ping") return handler.fetch(request);
    const { intercept } = real;
    const index = ++intercept.count;
    const { fault } = intercept;
    if ("at" in fault && index === fault.at) {
      if (fault.type === "503") return Response.json({ error: "restarting" }, { status: 503 });
      if (fault.type === "409") return Response.json({ error: "busy, refused" }, { status: 409 });
      // Held for the next cycle, which is fault-free.
      if (fault.type === "422") return Response.json({ error: "not now" }, { status: 422 });
      if (fault.type === "stop") intercept.controller?.abort(new Error("stopped between messages"));
    }
    if (request.method === "POST") {
      const body = (await request.clone().json()) as { uuid?: string; username?: string };
      const taken =
        typeof body.username === "string" &&
        (await store.list()).some(
          (user) => user.username === body.username && user.uuid !== body.uuid,
        );
      if (taken)
        return Response.json({ error: `username ${body.username} is taken` }, { status: 409 });
    }
    return handler.fetch(request);
  });
}

interface LdapProxy {
  url: string;
  /** Cuts every connection once this many bytes came from the server; undefined disarms it. */
  cutAfter(bytes: number | undefined): void;
  close(): Promise<void>;
}

/** A TCP proxy in front of slapd that can drop the connection mid-read. */
async function ldapProxy(target: string): Promise<LdapProxy> {
  const { hostname, port } = new URL(target);
  let limit: number | undefined;
  // Bytes from the server since the cut was armed, over every connection.
  let received = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    upstream.on("data", (chunk: Buffer) => {
      received += chunk.length;
      if (limit !== undefined && received > limit) {
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    client.on("data", (chunk: Buffer) => upstream.write(chunk));
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `ldap://127.0.0.1:${address.port}`,
    cutAfter(bytes) {
      limit = bytes;
      received = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
