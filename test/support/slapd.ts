// A throwaway OpenLDAP slapd from Debian's package: a config and an MDB database in a temporary
// folder, the generated people loaded with slapadd (far faster than ldapadd for 100,000 entries),
// listening on a free loopback port. Used by .ci/steps/slapd.sh (through `run`, below) and by
// bench/directory-sync.bench.ts.
//
//   node test/support/slapd.ts run <people> -- <command...>
// starts slapd, runs the command with PLATFORM_INTEGRATION_LDAP_URL (and the bind DN, password
// and base DN) in its environment, stops slapd and exits with the command's status.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { createSelfSignedCertificate } from "../../src/cli/self-signed-certificate.ts";
import { adminDn, peopleDn, peopleLdif, suffix } from "./directory-fixture.ts";

/** Where a running slapd is and how to reach it. */
export interface RunningSlapd {
  url: string;
  /** With `tls`: the LDAPS URL, on a port of its own. */
  ldapsUrl?: string;
  /**
   * With `tls`: the PEM certificate slapd serves (for localhost, 127.0.0.1 and ::1), its own CA,
   * for clients to trust. StartTLS is offered on `url`.
   */
  ca?: string;
  bindDn: string;
  password: string;
  suffix: string;
  peopleDn: string;
  /** The server's process id (benchmarks read its CPU time). */
  pid: number;
  /** The environment variables the LDAP suite reads. */
  env: Record<string, string>;
  stop(): void;
}

const slapd = "/usr/sbin/slapd";
const slapadd = "/usr/sbin/slapadd";
const password = "throwaway-admin-secret";

/**
 * A recorded Active Directory user (the values of an ldapsearch against AD), kept with its
 * binary objectGUID. slapd knows objectGUID and sAMAccountName from Debian's msuser.schema; the
 * entry is an inetOrgPerson made extensible, as slapd lacks AD's `user` class.
 */
export const activeDirectoryEntry = {
  dn: `cn=Jane Doe,ou=ad,${suffix}`,
  objectGUIDBase64: "BpazOkLGm0iEtljAONPvOQ==",
  // What PowerShell's [GUID] shows for these bytes: the first three groups are little-endian.
  guid: "3ab39606-c642-489b-84b6-58c038d3ef39",
  ldif: `dn: ou=ad,${suffix}
objectClass: organizationalUnit
ou: ad

dn: cn=Jane Doe,ou=ad,${suffix}
objectClass: inetOrgPerson
objectClass: extensibleObject
cn: Jane Doe
sn: Doe
givenName: Jane
displayName: Jane Doe
sAMAccountName: jdoe
mail: jane.doe@corp.example
objectGUID:: BpazOkLGm0iEtljAONPvOQ==
`,
};

/**
 * How the database offers Content Sync (RFC 4533): the syncprov overlay, with a session log of
 * that many changes (a cookie it covers is answered with a delete phase, an older one with a
 * present phase), without one (always a present phase), or not at all.
 */
export type Syncprov = { sessionLog?: number } | false;

/**
 * Starts slapd with `people` generated entries under {@link peopleDn}. `sizeLimit` holds every
 * account but the root DN to that many entries a search, paged searches excepted, as deployments
 * commonly configure a sync account; without it there is no limit.
 */
export async function startSlapd(
  people: number,
  {
    syncprov = {},
    sizeLimit,
    pagedSizeLimit,
    tls = false,
    access,
  }: {
    syncprov?: Syncprov;
    sizeLimit?: number;
    /** Holds paged searches too to `sizeLimit` entries (size.prtotal), as some deployments do. */
    pagedSizeLimit?: boolean;
    /** Serves StartTLS on `url` and LDAPS on `ldapsUrl` with a fresh certificate (`ca`). */
    tls?: boolean;
    /** The database's access directives (slapd.access(5)); without them, everyone reads. */
    access?: string;
  } = {},
): Promise<RunningSlapd> {
  const folder = mkdtempSync(join(tmpdir(), "slapd-"));
  try {
    const config = join(folder, "slapd.conf");
    let certificate: string | undefined;
    if (tls) {
      const { key, cert } = await createSelfSignedCertificate();
      writeFileSync(join(folder, "server.key"), key, { mode: 0o600 });
      writeFileSync(join(folder, "server.crt"), cert);
      certificate = cert;
    }
    writeFileSync(
      config,
      slapdConfig(folder, syncprov, sizeLimit, {
        pagedSizeLimit,
        tls: certificate !== undefined,
        access,
      }),
    );
    const ldif = join(folder, "data.ldif");
    writeFileSync(
      ldif,
      `${peopleLdif(people, peopleDn, { withRoot: true })}\n${activeDirectoryEntry.ldif}`,
    );
    run(slapadd, ["-q", "-f", config, "-l", ldif]);
    const port = await freePort();
    const url = `ldap://127.0.0.1:${port}`;
    const ldapsPort = tls ? await freePort() : undefined;
    const ldapsUrl = ldapsPort === undefined ? undefined : `ldaps://127.0.0.1:${ldapsPort}`;
    // slapd forks into the background once it listens; the pid file is how it is stopped.
    run(slapd, ["-f", config, "-h", `${[url, ldapsUrl].filter(Boolean).join("/ ")}/`]);
    await listening(port);
    if (ldapsPort !== undefined) await listening(ldapsPort);
    const pid = Number(readFileSync(join(folder, "slapd.pid"), "utf8"));
    const stop = () => {
      try {
        process.kill(pid, "SIGTERM");
      } catch {}
      rmSync(folder, { recursive: true, force: true });
    };
    return {
      url,
      ...(ldapsUrl && { ldapsUrl }),
      ...(certificate && { ca: certificate }),
      pid,
      bindDn: adminDn,
      password,
      suffix,
      peopleDn,
      env: {
        PLATFORM_INTEGRATION_LDAP_URL: url,
        PLATFORM_INTEGRATION_LDAP_BIND_DN: adminDn,
        PLATFORM_INTEGRATION_LDAP_PASSWORD: password,
        PLATFORM_INTEGRATION_LDAP_PEOPLE: String(people),
      },
      stop,
    };
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

function slapdConfig(
  folder: string,
  syncprov: Syncprov,
  sizeLimit: number | undefined,
  {
    pagedSizeLimit = false,
    tls = false,
    access = "",
  }: { pagedSizeLimit?: boolean | undefined; tls?: boolean; access?: string | undefined },
): string {
  const schemas = ["core", "cosine", "nis", "inetorgperson", "msuser"];
  const prtotal = pagedSizeLimit ? "" : " size.prtotal=unlimited";
  return `${schemas.map((name) => `include /etc/ldap/schema/${name}.schema`).join("\n")}
modulepath /usr/lib/ldap
moduleload back_mdb
${syncprov ? "moduleload syncprov\n" : ""}pidfile ${folder}/slapd.pid
${tls ? `TLSCertificateFile ${folder}/server.crt\nTLSCertificateKeyFile ${folder}/server.key\n` : ""}sizelimit ${sizeLimit === undefined ? "unlimited" : `size.soft=${sizeLimit} size.hard=${sizeLimit}${prtotal}`}
database mdb
maxsize 4294967296
suffix "${suffix}"
rootdn "${adminDn}"
rootpw ${password}
directory ${folder}
index objectClass eq
index entryUUID eq
${access}
${syncprov ? "overlay syncprov\n" : ""}${syncprov && syncprov.sessionLog !== undefined ? `syncprov-sessionlog ${syncprov.sessionLog}\n` : ""}`;
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed:\n${result.stderr}${result.stdout}`);
  }
}

/** Waits until slapd accepts connections: it may fork into the background a moment before. */
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
    if (attempt === 200) throw new Error(`slapd is not listening on port ${port}`);
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
  const server = await startSlapd(people);
  const child = spawn(command[0] as string, command.slice(1), {
    stdio: "inherit",
    env: { ...process.env, ...server.env },
  });
  child.on("exit", (code, signal) => {
    server.stop();
    process.exit(code ?? (signal ? 1 : 0));
  });
}
