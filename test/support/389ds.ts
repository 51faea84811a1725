// A throwaway 389 Directory Server from Debian's 389-ds-base: an instance under a temporary
// folder, created by dscreate and run by ns-slapd in the foreground on free loopback ports, with
// the retro changelog and Content Sync enabled and generated people loaded with one `ldapadd -c`.
// Used by .ci/steps/389-ds.sh (through `run`, below) and by bench/directory-sync.bench.ts.
//
//   node test/support/389ds.ts run <people> -- <command...>
// starts the server, runs the command with PLATFORM_INTEGRATION_389DS_URL (and the rest of
// `env`) in its environment, stops the server and exits with the command's status.
//
// What it takes to run 389-DS in a container (shared/REAL-DIRECTORIES.md): lib389 finds its
// paths in a defaults.inf under $PREFIX, so a private copy moves every writable path into the
// folder and turns systemd off; the folders the server writes are made the dirsrv user's before
// dscreate runs (it would create them root-owned); dscreate starts the new server once, on every
// interface, so it runs inside `unshare -n`, a network namespace of its own; the listening
// addresses and the plugins are then set in the stopped server's dse.ldif, before it starts on
// 127.0.0.1 for good.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { peopleDn, peopleLdif, suffix } from "./directory-fixture.ts";

/** Where a running 389 Directory Server is and how to reach it. */
export interface Running389 {
  /** ldap:// on 127.0.0.1 (StartTLS is offered there). */
  url: string;
  /** ldaps:// on `localhost`: the server's certificate names localhost only. */
  ldapsUrl: string;
  /** The PEM of the CA that signed the server's certificate. */
  caFile: string;
  /** The Directory Manager: no size limit, no access control. */
  rootDn: string;
  /** A service account that may read people, with `nsSizeLimit: -1`. */
  bindDn: string;
  /** A service account that may read people, held to the server's size limit (2,000). */
  limitedBindDn: string;
  /** The password of all three accounts. */
  password: string;
  suffix: string;
  peopleDn: string;
  /** The server's process id (benchmarks read its CPU time). */
  pid: number;
  /** The environment variables test/ldap/389-ds.test.ts reads. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

const password = "throwaway-admin-secret";
const rootDn = "cn=Directory Manager";
const servicesDn = `ou=services,${suffix}`;
const instance = "ci";

/**
 * Creates and starts a 389 Directory Server with `people` generated entries under
 * {@link peopleDn}. Needs root (dscreate, `unshare -n`, the dirsrv user) and 389-ds-base.
 * `allowOpenLdap: false` leaves Content Sync with 389-DS's own cookies only (its default).
 */
export async function start389(
  people: number,
  { allowOpenLdap = true }: { allowOpenLdap?: boolean } = {},
): Promise<Running389> {
  const folder = mkdtempSync(join(tmpdir(), "389ds-"));
  // The server drops to the dirsrv user, which must reach its folders under this one.
  chmodSync(folder, 0o755);
  let server: ChildProcess | undefined;
  try {
    const root = join(folder, "root");
    const { uid, gid } = dirsrvUser();
    for (const path of [
      "var/log/dirsrv",
      "var/lib/dirsrv",
      "run/lock/dirsrv",
      "run/dirsrv",
      "dev/shm",
      "tmp",
    ]) {
      mkdirSync(join(root, path), { recursive: true });
    }
    mkdirSync(join(root, "share/dirsrv/inf"), { recursive: true });
    cpSync("/etc/dirsrv", join(root, "etc/dirsrv"), { recursive: true });
    writeFileSync(
      join(root, "share/dirsrv/inf/defaults.inf"),
      privateDefaults(readFileSync("/usr/share/dirsrv/inf/defaults.inf", "utf8"), root),
    );
    for (const path of ["var", "run", "dev", "etc/dirsrv"]) chownTree(join(root, path), uid, gid);

    const [port, securePort] = [await freePort(), await freePort()];
    const inf = join(folder, "instance.inf");
    writeFileSync(
      inf,
      `[general]
full_machine_name = localhost
start = False
strict_host_checking = False
[slapd]
instance_name = ${instance}
port = ${port}
secure_port = ${securePort}
root_password = ${password}
self_sign_cert = True
[backend-userroot]
suffix = ${suffix}
create_suffix_entry = True
`,
    );
    run("unshare", ["-n", "dscreate", "from-file", inf], { PREFIX: root });

    const config = join(root, `etc/dirsrv/slapd-${instance}`);
    const dse = join(config, "dse.ldif");
    writeFileSync(dse, configure(readFileSync(dse, "utf8"), allowOpenLdap));
    const caFile = join(folder, "ca.crt");
    cpSync(join(config, "ca.crt"), caFile);

    const pidFile = join(root, `run/dirsrv/slapd-${instance}.pid`);
    // In the foreground (-d 0), so that it is this process's child and stops with it.
    server = spawn("/usr/sbin/ns-slapd", ["-D", config, "-i", pidFile, "-d", "0"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let errors = "";
    server.stderr?.on("data", (chunk) => {
      errors = (errors + chunk).slice(-4000);
    });
    const exited = new Promise<void>((resolve) => server?.once("exit", () => resolve()));
    await Promise.race([
      listening(port),
      exited.then(() => {
        throw new Error(`ns-slapd exited before listening:\n${errors}`);
      }),
    ]);
    const url = `ldap://127.0.0.1:${port}`;
    const ldif = join(folder, "people.ldif");
    writeFileSync(ldif, `${accountsLdif()}\n${peopleLdif(people, peopleDn)}`);
    // -c goes on past an entry the server refuses; the count below says whether any was.
    run("ldapadd", ["-c", "-x", "-H", url, "-D", rootDn, "-w", password, "-f", ldif], {}, [0]);

    const child = server;
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(folder, { recursive: true, force: true });
    };
    return {
      url,
      ldapsUrl: `ldaps://localhost:${securePort}`,
      caFile,
      rootDn,
      bindDn: `uid=sync,${servicesDn}`,
      limitedBindDn: `uid=limited,${servicesDn}`,
      password,
      suffix,
      peopleDn,
      pid: child.pid as number,
      env: {
        PLATFORM_INTEGRATION_389DS_URL: url,
        PLATFORM_INTEGRATION_389DS_LDAPS_URL: `ldaps://localhost:${securePort}`,
        PLATFORM_INTEGRATION_389DS_CA: caFile,
        PLATFORM_INTEGRATION_389DS_ROOT_DN: rootDn,
        PLATFORM_INTEGRATION_389DS_BIND_DN: `uid=sync,${servicesDn}`,
        PLATFORM_INTEGRATION_389DS_LIMITED_BIND_DN: `uid=limited,${servicesDn}`,
        PLATFORM_INTEGRATION_389DS_PASSWORD: password,
        PLATFORM_INTEGRATION_389DS_PEOPLE: String(people),
      },
      stop,
    };
  } catch (error) {
    server?.kill("SIGKILL");
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

/** Debian's defaults.inf with every path the server writes moved under `root`, without systemd. */
function privateDefaults(defaults: string, root: string): string {
  return defaults
    .split("\n")
    .map((line) => {
      const match = /^(\w+) = (.*)$/.exec(line);
      if (!match) return line;
      const [, key, value] = match as unknown as [string, string, string];
      if (key === "with_systemd") return "with_systemd = 0";
      if (key === "prefix") return `prefix = ${root}`;
      if (key === "inst_dir") return `inst_dir = ${root}/lib/dirsrv/slapd-{instance_name}`;
      if (key === "tmp_dir") return `tmp_dir = ${root}/tmp`;
      const moved = /^\/(etc|var|run|dev\/shm)(\/|$)/.test(value);
      return moved ? `${key} = ${root}${value}` : line;
    })
    .join("\n");
}

/**
 * The instance's dse.ldif with the server on loopback only, and the retro changelog and Content
 * Sync on. The changelog records each entry's nsUniqueId and entryUUID, which Content Sync needs
 * to name entries by entryUUID for a client whose first cookie is OpenLDAP's (`rid=NNN`), which
 * syncrepl-allow-openldap permits.
 */
function configure(dse: string, allowOpenLdap: boolean): string {
  const changes: [string, Record<string, string[]>][] = [
    [
      "cn=config",
      { "nsslapd-listenhost": ["127.0.0.1"], "nsslapd-securelistenhost": ["127.0.0.1"] },
    ],
    [
      "cn=Retro Changelog Plugin,cn=plugins,cn=config",
      {
        "nsslapd-pluginEnabled": ["on"],
        "nsslapd-attribute": ["nsuniqueid:targetUniqueId", "entryuuid:targetEntryUUID"],
      },
    ],
    [
      "cn=Content Synchronization,cn=plugins,cn=config",
      {
        "nsslapd-pluginEnabled": ["on"],
        "syncrepl-allow-openldap": [allowOpenLdap ? "on" : "off"],
      },
    ],
    // A throwaway server: a commit need not reach the disk before the next add.
    [
      "cn=config,cn=ldbm database,cn=plugins,cn=config",
      { "nsslapd-db-durable-transaction": ["off"] },
    ],
  ];
  return changes.reduce((ldif, [dn, attributes]) => setAttributes(ldif, dn, attributes), dse);
}

/** Replaces the attributes of one entry of an LDIF file (folded lines included). */
function setAttributes(ldif: string, dn: string, attributes: Record<string, string[]>): string {
  const blocks = ldif.split(/\n\n/);
  const index = blocks.findIndex(
    (block) => block.split("\n")[0]?.toLowerCase() === `dn: ${dn.toLowerCase()}`,
  );
  if (index < 0) throw new Error(`dse.ldif has no entry ${dn}`);
  const names = new Set(Object.keys(attributes).map((name) => name.toLowerCase()));
  const kept: string[] = [];
  let skipping = false;
  for (const line of (blocks[index] as string).split("\n")) {
    if (line.startsWith(" ")) {
      if (!skipping) kept.push(line);
      continue;
    }
    skipping = names.has(line.slice(0, line.indexOf(":")).toLowerCase());
    if (!skipping) kept.push(line);
  }
  for (const [name, values] of Object.entries(attributes)) {
    for (const value of values) kept.push(`${name}: ${value}`);
  }
  blocks[index] = kept.join("\n");
  return blocks.join("\n\n");
}

/**
 * The service accounts and their right to read people (389-DS denies what no ACI allows;
 * `targetattr="*"` covers entryUUID): `sync` without a size limit, `limited` held to the server's
 * default of 2,000 entries a search.
 */
function accountsLdif(): string {
  const account = (uid: string, extra: string[]) =>
    [
      `dn: uid=${uid},${servicesDn}`,
      "objectClass: account",
      "objectClass: simpleSecurityObject",
      `uid: ${uid}`,
      `userPassword: ${password}`,
      ...extra,
    ].join("\n");
  return `${[
    `dn: ${servicesDn}\nobjectClass: organizationalUnit\nou: services`,
    account("sync", ["nsSizeLimit: -1"]),
    account("limited", []),
    [
      `dn: ${suffix}`,
      "changetype: modify",
      "add: aci",
      `aci: (targetattr="*")(version 3.0; acl "directory sync reads people"; allow (read, search, compare) (userdn = "ldap:///uid=sync,${servicesDn}" or userdn = "ldap:///uid=limited,${servicesDn}");)`,
    ].join("\n"),
  ].join("\n\n")}\n`;
}

function dirsrvUser(): { uid: number; gid: number } {
  const [uid, gid] = ["-u", "-g"].map((flag) => Number(run("id", [flag, "dirsrv"]).trim()));
  return { uid: uid as number, gid: gid as number };
}

function chownTree(path: string, uid: number, gid: number): void {
  run("chown", ["-R", `${uid}:${gid}`, path]);
}

function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  accepted: number[] = [0],
): string {
  const result = spawnSync(command, args, {
    encoding: "utf8",
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  if (!accepted.includes(result.status as number)) {
    throw new Error(
      `${command} ${args.join(" ")} failed (${result.status}):\n${result.stderr}${result.stdout.slice(-4000)}`,
    );
  }
  return result.stdout;
}

/** Waits until the server accepts connections. */
async function listening(port: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1")
        .once("connect", () => resolve(true))
        .once("error", () => resolve(false));
      socket.once("close", () => socket.destroy());
      socket.once("connect", () => socket.end());
    });
    if (accepted) return;
    if (attempt === 1200) throw new Error(`389-DS is not listening on port ${port}`);
    await sleep(50);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(),
      );
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "run") {
  const people = Number(process.argv[3]);
  const command = process.argv.slice(process.argv.indexOf("--") + 1);
  const started = performance.now();
  const server = await start389(people);
  console.log(
    `389-DS up with ${people} people in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const child = spawn(command[0] as string, command.slice(1), {
    stdio: "inherit",
    env: { ...process.env, ...server.env },
  });
  const finish = async (status: number) => {
    await server.stop();
    process.exit(status);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => child.kill(signal));
  }
  child.on("exit", (code, signal) => void finish(code ?? (signal ? 1 : 0)));
}
