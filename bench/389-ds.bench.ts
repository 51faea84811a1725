// The directory sync's update cycle against a real 389 Directory Server: through Content Sync
// against a full read of every entry. A throwaway 389-DS (test/support/389ds.ts: root and Debian's
// 389-ds-base; without them the bench says so and exits 0) holds 2,010 generated people
// (`--users N`); the sync (from the sources, in this process) delivers them into the SDK's handler
// over MemoryUserStore, then each round (`--rounds N`, default 5) changes 10 entries and times an
// update cycle through Content Sync, changes 10 more and times one with `contentSync: false`, on
// the same state file. Prints each round and the median of the ratio Content Sync / full read.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Attribute, Change, Client } from "ldapts";
import { toNodeHandler } from "../src/adapters/node/index.ts";
import { createDirectorySync, type DirectorySyncReport } from "../src/ldap/index.ts";
import { createProvisioningHandler, MemoryUserStore } from "../src/provisioning/index.ts";
import { start389 } from "../test/support/389ds.ts";
import { person } from "../test/support/directory-fixture.ts";

const { values } = parseArgs({
  options: { users: { type: "string", default: "2010" }, rounds: { type: "string", default: "5" } },
  allowPositionals: true,
});
const users = Number(values.users);
const rounds = Number(values.rounds);

if (process.getuid?.() !== 0 || !existsSync("/usr/sbin/dscreate")) {
  console.log("skipped: needs root and 389-ds-base (apt-get install 389-ds-base ldap-utils)");
  process.exit(0);
}

const server = await start389(users);
const folder = mkdtempSync(join(tmpdir(), "389ds-bench-"));
const app = createServer(
  toNodeHandler(createProvisioningHandler({ store: new MemoryUserStore() })),
).listen(0, "127.0.0.1");
await new Promise((resolve) => app.once("listening", resolve));
const target = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
const admin = new Client({ url: server.url });
try {
  await admin.bind(server.rootDn, server.password);
  const state = join(folder, "state.sqlite");
  const cycle = async (contentSync: boolean): Promise<DirectorySyncReport> => {
    const sync = createDirectorySync({
      ldap: { url: server.url, bindDn: server.bindDn, password: server.password },
      baseDn: server.peopleDn,
      target,
      state,
      ...(contentSync ? {} : { contentSync: false as const }),
    });
    try {
      return await sync.syncOnce();
    } finally {
      await sync.close();
    }
  };
  let changed = 0;
  const changeTen = async () => {
    for (let count = 0; count < 10; count++, changed++) {
      const someone = person((changed * 197) % users, server.peopleDn);
      await admin.modify(someone.dn, [
        new Change({
          operation: "replace",
          modification: new Attribute({ type: "sn", values: [`Changed ${changed}`] }),
        }),
      ]);
    }
  };
  const timed = async (contentSync: boolean) => {
    const started = performance.now();
    const report = await cycle(contentSync);
    const seconds = (performance.now() - started) / 1000;
    const expected = contentSync ? "content-sync" : "full";
    if (!report.completed || report.read !== expected || report.modified !== 10) {
      throw new Error(`unexpected cycle: ${JSON.stringify(report)}`);
    }
    return seconds;
  };

  const initial = performance.now();
  const first = await cycle(true);
  console.log(
    `389-DS ${users} users: initial sync ${((performance.now() - initial) / 1000).toFixed(2)} s (${first.created} created)`,
  );
  // The update cycle after the initial sync reads everything and takes the Content Sync cookie.
  await cycle(true);
  const ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    await changeTen();
    const contentSync = await timed(true);
    await changeTen();
    const full = await timed(false);
    ratios.push(contentSync / full);
    console.log(
      `round ${round}: 10 changes, Content Sync ${contentSync.toFixed(3)} s, full read ${full.toFixed(3)} s (${(contentSync / full).toFixed(3)})`,
    );
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(
    `median Content Sync / full read: ${(sorted[Math.floor(sorted.length / 2)] as number).toFixed(3)}`,
  );
} finally {
  await admin.unbind().catch(() => undefined);
  app.close();
  await server.stop();
  rmSync(folder, { recursive: true, force: true });
}
