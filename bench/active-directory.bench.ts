// The directory sync against a real Active Directory (a throwaway Samba AD DC, test/support/
// samba-ad.ts, with 2,000 generated users): an update cycle after 10 users changed, read with
// DirSync, against the same update cycle reading the whole directory (`contentSync: false`, what
// every AD cycle did before DirSync), in the same run. Each round changes 10 users (their sn),
// then runs both cycles, in alternating order; both send the same 10 modifies to an application of their own
// (toNodeHandler over MemoryUserStore on node:http), bound as the DirSync account (Replicating
// Directory Changes, Deleted Objects readable). The figure is the median of the per-round ratios
// of the DirSync cycle's time to the full cycle's. Goal: at most 0.1.
//
// It uses the DC at PLATFORM_INTEGRATION_AD_URL (as .ci/steps/samba-ad.sh sets it) when there is
// one, else provisions its own (a few minutes; it needs 389/636 free on 127.0.0.1). `--rounds N`.
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Attribute, Change, Client } from "ldapts";
import { toNodeHandler } from "../src/adapters/node/index.ts";
import { createDirectorySync, type DirectorySyncReport } from "../src/ldap/index.ts";
import { createProvisioningHandler, MemoryUserStore } from "../src/provisioning/index.ts";
import {
  adDirSyncDn,
  adServicePassword,
  adUser,
  type RunningSambaAd,
  startSambaAd,
} from "../test/support/samba-ad.ts";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "5" }, users: { type: "string", default: "2000" } },
});
const rounds = Number(values.rounds);
const people = Number(values.users);
const changesPerCycle = 10;

let started: RunningSambaAd | undefined;
const env = process.env;
if (!env.PLATFORM_INTEGRATION_AD_URL) started = await startSambaAd(people);
const url = env.PLATFORM_INTEGRATION_AD_URL ?? (started as RunningSambaAd).url;
const ca = started?.ca ?? readFileSync(env.PLATFORM_INTEGRATION_AD_CA as string, "utf8");
const adminDn = started?.bindDn ?? (env.PLATFORM_INTEGRATION_AD_BIND_DN as string);
const adminPassword = started?.password ?? (env.PLATFORM_INTEGRATION_AD_PASSWORD as string);
const folder = mkdtempSync(join(tmpdir(), "ad-bench-"));
const servers: ReturnType<typeof createServer>[] = [];

try {
  const admin = new Client({ url, tlsOptions: { ca } });
  await admin.bind(adminDn, adminPassword);
  const ldap = { url, bindDn: adDirSyncDn, password: adServicePassword, tls: { ca } };

  const openSync = async (name: string, contentSync: "auto" | false) => {
    const store = new MemoryUserStore();
    const server = createServer(toNodeHandler(createProvisioningHandler({ store })));
    servers.push(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    return createDirectorySync({
      ldap,
      baseDn: "DC=example,DC=test",
      target: `http://127.0.0.1:${port}`,
      state: join(folder, `${name}.sqlite`),
      contentSync,
    });
  };
  const dirSync = await openSync("dirsync", "auto");
  const full = await openSync("full", false);
  for (const sync of [dirSync, full]) {
    const initial = await sync.syncOnce();
    console.log(`initial sync: ${initial.created} users in ${initial.durationMs} ms`);
  }
  // The update after the initial sync reads in full and takes the DirSync cookie.
  console.log(`cookie: ${JSON.stringify(summary(await dirSync.syncOnce()))}`);

  // The changed users' sn, put back at the end: the test suite may run against this DC again.
  const original = new Map<string, string>();
  let stamp = 0;
  // Values no earlier run against the same DC wrote.
  const run = Date.now().toString(36);
  const changeUsers = async () => {
    for (let count = 0; count < changesPerCycle; count++) {
      let index = (stamp * 37 + count * 101) % people;
      // A disabled account is kept as it was (disabledAccounts "keep"): change an enabled one.
      if (adUser(index).userAccountControl !== 0x220) index = (index + 1) % people;
      const user = adUser(index);
      if (!original.has(user.dn)) original.set(user.dn, user.sn as string);
      await admin.modify(adUser(index).dn, [
        new Change({
          operation: "replace",
          modification: new Attribute({ type: "sn", values: [`Changed ${run}-${stamp}-${count}`] }),
        }),
      ]);
    }
    stamp++;
  };
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // The same 10 changes for both; which cycle runs first alternates.
    await changeUsers();
    let incremental: DirectorySyncReport;
    let whole: DirectorySyncReport;
    if (round % 2 === 0) {
      incremental = await dirSync.syncOnce();
      whole = await full.syncOnce();
    } else {
      whole = await full.syncOnce();
      incremental = await dirSync.syncOnce();
    }
    if (incremental.read !== "dirsync" || whole.read !== "full") {
      throw new Error(`unexpected reads: ${incremental.read}, ${whole.read}`);
    }
    if (incremental.modified !== changesPerCycle || whole.modified !== changesPerCycle) {
      throw new Error(
        `expected ${changesPerCycle} modifies: ${incremental.modified}, ${whole.modified}`,
      );
    }
    const ratio = incremental.durationMs / whole.durationMs;
    ratios.push(ratio);
    console.log(
      `round ${round + 1}: DirSync ${incremental.durationMs} ms, full read ${whole.durationMs} ms, ratio ${ratio.toFixed(3)}`,
    );
  }
  ratios.sort((a, b) => a - b);
  const median = ratios[Math.floor(ratios.length / 2)] as number;
  console.log(
    `\n${changesPerCycle} changes among ${people} users: DirSync cycle / full-read cycle = ${median.toFixed(3)} (median of ${rounds}; goal at most 0.1)`,
  );
  for (const [dn, sn] of original) {
    await admin.modify(dn, [
      new Change({
        operation: "replace",
        modification: new Attribute({ type: "sn", values: [sn] }),
      }),
    ]);
  }
  await dirSync.close();
  await full.close();
  await admin.unbind();
  if (median > 0.1) process.exitCode = 1;
} finally {
  for (const server of servers) server.close();
  rmSync(folder, { recursive: true, force: true });
  await started?.stop();
}

function summary(report: DirectorySyncReport) {
  const { read, readNote, durationMs, unchanged } = report;
  return { read, readNote, durationMs, unchanged };
}
