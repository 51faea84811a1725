// A throwaway Samba Active Directory domain controller from Debian's packages: provisioned into a
// temporary folder (with an empty config passed by -s, so that /etc/samba/smb.conf is not merged
// in), a private CA and a server certificate made with openssl, the generated people loaded through
// Samba's own Python bindings (samba.samdb.SamDB on private/sam.ldb with system_session(): about
// a hundred times faster than a `samba-tool user create` per user), then `samba` in the
// foreground, serving LDAP only, on 127.0.0.1. Used by .ci/steps/samba-ad.sh (through `run`,
// below) and by bench/active-directory.bench.ts.
//
// Samba's LDAP server has no port option: it listens on 389 (LDAP, StartTLS), 636 (LDAPS) and
// the global catalog's 3268/3269 of the addresses in `interfaces`, here 127.0.0.1 only. So one
// runs at a time on a machine; a start while those ports are taken fails at once and says so.
//
//   node test/support/samba-ad.ts run <people> -- <command...>
// starts the DC, runs the command with PLATFORM_INTEGRATION_AD_URL (and the rest of `env`, below)
// in its environment, stops the DC and exits with the command's status.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

export const adRealm = "EXAMPLE.TEST";
export const adBaseDn = "DC=example,DC=test";
/** Where the generated people, contacts and computers live. */
export const adStaffDn = `OU=Staff,${adBaseDn}`;
export const adAdminDn = `CN=Administrator,CN=Users,${adBaseDn}`;
/** Samba's password policy wants three kinds of characters. */
export const adAdminPassword = "Throwaway-Admin-1";
/** A plain user with no right beyond a user's: may read, may not ask for DirSync. */
export const adReaderDn = `CN=svc-reader,CN=Users,${adBaseDn}`;
/**
 * A user granted what DirSync needs: "Replicating Directory Changes" on the domain, and List
 * Contents and Read Property on the Deleted Objects container (without which AD leaves deletions
 * out of DirSync's answers).
 */
export const adDirSyncDn = `CN=svc-dirsync,CN=Users,${adBaseDn}`;
/** A user with "Replicating Directory Changes" but no access to the Deleted Objects container. */
export const adBlindDirSyncDn = `CN=svc-blind,CN=Users,${adBaseDn}`;
export const adServicePassword = "Throwaway-Reader-1";

/** One generated object, as the loader created it, with the objectGUID Samba gave it. */
export interface AdObject {
  kind: "user" | "contact" | "computer" | "builtin";
  dn: string;
  /** The GUID's string form, as Samba (and PowerShell) print it: from Samba, not from the SDK. */
  guid: string;
  cn: string;
  sAMAccountName?: string;
  givenName?: string;
  sn?: string;
  displayName?: string;
  mail?: string;
  employeeID?: string;
  userAccountControl?: number;
}

const givenNames = ["Anna", "José", "Zoë", "Łukasz", "Ærøskøbing", "李", "Ömer", "Noël", "Bob"];
const surnames = ["Müller", "Ångström", "O'Brien", "Dvořák", "王", "Smith", "Nuñez", "Ñandú"];

/** userAccountControl: a normal account that needs no password (none is set: it is not used). */
export const normalAccount = 0x200 | 0x20;
/** ACCOUNTDISABLE. */
export const accountDisabled = 0x2;

/**
 * The i-th generated user: non-ASCII names, every 7th without mail, every 5th without a
 * displayName, every 40th disabled.
 */
export function adUser(index: number): Omit<AdObject, "guid"> {
  const givenName = givenNames[index % givenNames.length] as string;
  const sn = surnames[Math.floor(index / givenNames.length) % surnames.length] as string;
  const cn = `${givenName} ${sn} ${index}`;
  return {
    kind: "user",
    dn: `CN=${cn.replaceAll(",", "\\,")},${adStaffDn}`,
    cn,
    sAMAccountName: `user${index}`,
    givenName,
    sn,
    ...(index % 5 !== 2 && { displayName: `${givenName} ${sn}` }),
    ...(index % 7 !== 0 && { mail: `user${index}@example.test` }),
    employeeID: `E${100_000 + index}`,
    userAccountControl: index % 40 === 39 ? normalAccount | accountDisabled : normalAccount,
  };
}

/** The people of a directory of `people` users: the users, 20 contacts and 5 computers. */
export function adDirectory(people: number): Omit<AdObject, "guid">[] {
  const objects: Omit<AdObject, "guid">[] = [];
  for (let index = 0; index < people; index++) objects.push(adUser(index));
  for (let index = 0; index < 20; index++) {
    objects.push({
      kind: "contact",
      dn: `CN=Contact ${index},${adStaffDn}`,
      cn: `Contact ${index}`,
      givenName: "Contact",
      sn: String(index),
      mail: `contact${index}@partner.example`,
    });
  }
  for (let index = 0; index < 5; index++) {
    objects.push({
      kind: "computer",
      dn: `CN=WS${index},${adStaffDn}`,
      cn: `WS${index}`,
      sAMAccountName: `WS${index}$`,
      userAccountControl: 0x1000, // WORKSTATION_TRUST_ACCOUNT
    });
  }
  return objects;
}

// The loader: adds every object in one transaction, creates the two service accounts, grants one
// "Replicating Directory Changes" (DS-Replication-Get-Changes) on the domain, and writes back
// every object under the domain with the objectGUID Samba gave it (the built-in accounts too).
const loader = `
import json, sys
import ldb
from samba.auth import system_session
from samba.dcerpc import misc, security
from samba.ndr import ndr_unpack
from samba.param import LoadParm
from samba.samdb import SamDB
from samba.sd_utils import SDUtils

conf, source, target, staff, reader, dirsync, blind, password = sys.argv[1:9]
lp = LoadParm()
lp.load(conf)
db = SamDB(url=lp.private_path("sam.ldb"), session_info=system_session(), lp=lp,
           flags=ldb.FLG_NOSYNC)
base = str(db.domain_dn())
objects = json.load(open(source, encoding="utf-8"))
classes = {"user": "user", "contact": "contact", "computer": "computer"}
db.transaction_start()
try:
    db.add({"dn": staff, "objectClass": "organizationalUnit"})
    for o in objects:
        message = {"dn": o["dn"], "objectClass": classes[o["kind"]]}
        for name in ("sAMAccountName", "givenName", "sn", "displayName", "mail", "employeeID"):
            if name in o:
                message[name] = o[name]
        if "userAccountControl" in o:
            message["userAccountControl"] = str(o["userAccountControl"])
        db.add(message)
    db.transaction_commit()
except BaseException:
    db.transaction_cancel()
    raise
for dn in (reader, dirsync, blind):
    name = dn.split(",")[0][3:]
    db.newuser(name, password, userou="CN=Users", setpassword=True)
def sid_of(dn):
    sid = db.search(base=dn, scope=ldb.SCOPE_BASE, attrs=["objectSid"])[0]["objectSid"][0]
    return str(ndr_unpack(security.dom_sid, sid))
# "Replicating Directory Changes" on the domain for both; List Contents and Read Property on the
# Deleted Objects container (as Microsoft documents for DirSync by non-administrators) for one.
for dn in (dirsync, blind):
    SDUtils(db).dacl_add_ace(base, "(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;%s)" % sid_of(dn))
SDUtils(db).dacl_add_ace("CN=Deleted Objects," + base, "(A;;LCRP;;;%s)" % sid_of(dirsync))
out = []
for m in db.search(base=base, scope=ldb.SCOPE_SUBTREE,
                   expression="(|(objectClass=user)(objectClass=contact))",
                   attrs=["objectGUID", "cn", "userAccountControl"]):
    out.append({"dn": str(m.dn), "cn": str(m["cn"][0]),
                "guid": str(ndr_unpack(misc.GUID, m["objectGUID"][0])),
                "userAccountControl": int(m["userAccountControl"][0]) if "userAccountControl" in m else None})
json.dump(out, open(target, "w", encoding="utf-8"), ensure_ascii=False)
`;

/** Where a running DC is and how to reach it. */
export interface RunningSambaAd {
  /** `ldaps://127.0.0.1:636`. */
  url: string;
  /** `ldap://127.0.0.1:389`, for StartTLS (plain simple binds are refused: strong auth). */
  startTlsUrl: string;
  bindDn: string;
  password: string;
  baseDn: string;
  staffDn: string;
  /** The private CA's certificate (PEM), which signed the server's. */
  ca: string;
  caFile: string;
  /** Every generated object and built-in account, with its objectGUID as Samba prints it. */
  objects: AdObject[];
  /** The DC's root process id (benchmarks read its CPU time). */
  pid: number;
  /** The environment variables the Active Directory suite reads. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

const python = "/usr/bin/python3"; // Debian's, which has Samba's bindings (not a pyenv shim)
const ports = [389, 636, 3268, 3269];

/** Provisions a domain, loads `people` generated users (with contacts and computers) and starts it. */
export async function startSambaAd(people: number): Promise<RunningSambaAd> {
  for (const port of ports) await ensureFree(port);
  const folder = mkdtempSync(join(tmpdir(), "samba-ad-"));
  let child: ChildProcess | undefined;
  try {
    const dc = join(folder, "dc");
    const empty = join(folder, "empty.conf");
    writeFileSync(empty, "");
    run("samba-tool", [
      "domain",
      "provision",
      "-s",
      empty,
      `--realm=${adRealm}`,
      "--domain=EXAMPLE",
      "--server-role=dc",
      "--dns-backend=NONE",
      `--adminpass=${adAdminPassword}`,
      `--targetdir=${dc}`,
      "--use-rfc2307",
      "--host-name=dc1",
      "--host-ip=127.0.0.1",
    ]);
    const tls = certificates(folder);
    const config = join(folder, "samba.conf");
    writeFileSync(config, sambaConfig(dc, tls));

    const generated = adDirectory(people);
    const source = join(folder, "objects.json");
    const target = join(folder, "created.json");
    writeFileSync(source, JSON.stringify(generated));
    writeFileSync(join(folder, "load.py"), loader);
    run(python, [
      join(folder, "load.py"),
      config,
      source,
      target,
      adStaffDn,
      adReaderDn,
      adDirSyncDn,
      adBlindDirSyncDn,
      adServicePassword,
    ]);
    const objects = describeObjects(generated, JSON.parse(readFileSync(target, "utf8")));
    const objectsFile = join(folder, "objects-with-guids.json");
    writeFileSync(objectsFile, JSON.stringify(objects));

    // detached: its own session and process group, so that stopping it stops its workers too.
    child = spawn("samba", ["--foreground", "--no-process-group", "-s", config], {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let errors = "";
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      errors = (errors + text).slice(-4000);
    });
    const started = child;
    const exited = new Promise<never>((_, reject) =>
      started.once("exit", (code) => reject(new Error(`samba exited (${code}):\n${errors}`))),
    );
    exited.catch(() => undefined);
    await Promise.race([Promise.all([listening(636), listening(389)]), exited]);
    const pid = child.pid as number;
    const stop = async () => {
      if (started.exitCode === null && started.signalCode === null) {
        const gone = new Promise((resolve) => started.once("exit", resolve));
        try {
          process.kill(-pid, "SIGTERM");
        } catch {}
        await Promise.race([gone, sleep(10_000)]);
        try {
          process.kill(-pid, "SIGKILL");
        } catch {}
      }
      rmSync(folder, { recursive: true, force: true });
    };
    const url = "ldaps://127.0.0.1:636";
    return {
      url,
      startTlsUrl: "ldap://127.0.0.1:389",
      bindDn: adAdminDn,
      password: adAdminPassword,
      baseDn: adBaseDn,
      staffDn: adStaffDn,
      ca: readFileSync(tls.ca, "utf8"),
      caFile: tls.ca,
      objects,
      pid,
      env: {
        PLATFORM_INTEGRATION_AD_URL: url,
        PLATFORM_INTEGRATION_AD_START_TLS_URL: "ldap://127.0.0.1:389",
        PLATFORM_INTEGRATION_AD_BIND_DN: adAdminDn,
        PLATFORM_INTEGRATION_AD_PASSWORD: adAdminPassword,
        PLATFORM_INTEGRATION_AD_CA: tls.ca,
        PLATFORM_INTEGRATION_AD_OBJECTS: objectsFile,
      },
      stop,
    };
  } catch (error) {
    if (child?.pid) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

/** Joins what the loader generated with what Samba says it created (the GUIDs, the built-ins). */
function describeObjects(
  generated: Omit<AdObject, "guid">[],
  created: { dn: string; cn: string; guid: string; userAccountControl: number | null }[],
): AdObject[] {
  const byDn = new Map(generated.map((object) => [object.dn.toLowerCase(), object]));
  return created.map((entry) => {
    const known = byDn.get(entry.dn.toLowerCase());
    if (known) return { ...known, guid: entry.guid };
    return {
      kind: "builtin",
      dn: entry.dn,
      cn: entry.cn,
      guid: entry.guid,
      ...(entry.userAccountControl !== null && { userAccountControl: entry.userAccountControl }),
    };
  });
}

/** A private CA and a server certificate for dc1.example.test, localhost and 127.0.0.1. */
function certificates(folder: string): { ca: string; cert: string; key: string } {
  const dir = join(folder, "tls");
  run("mkdir", ["-p", dir]);
  const file = (name: string) => join(dir, name);
  run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=Throwaway Samba AD CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.pem"),
  ]);
  run("openssl", [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=dc1.example.test",
    "-keyout",
    file("key.pem"),
    "-out",
    file("server.csr"),
  ]);
  writeFileSync(
    file("server.ext"),
    "subjectAltName=DNS:dc1.example.test,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
  );
  run("openssl", [
    "x509",
    "-req",
    "-in",
    file("server.csr"),
    "-CA",
    file("ca.pem"),
    "-CAkey",
    file("ca.key"),
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    file("server.ext"),
    "-out",
    file("cert.pem"),
  ]);
  // Samba refuses a key file that others may read.
  chmodSync(file("key.pem"), 0o600);
  return { ca: file("ca.pem"), cert: file("cert.pem"), key: file("key.pem") };
}

function sambaConfig(dc: string, tls: { ca: string; cert: string; key: string }): string {
  return `[global]
	netbios name = DC1
	realm = ${adRealm}
	workgroup = EXAMPLE
	server role = active directory domain controller
	server services = ldap
	interfaces = 127.0.0.1
	bind interfaces only = yes
	disable netbios = yes
	private dir = ${dc}/private
	state directory = ${dc}/state
	cache directory = ${dc}/cache
	lock directory = ${dc}
	pid directory = ${dc}
	binddns dir = ${dc}/bind-dns
	idmap_ldb:use rfc2307 = yes
	tls enabled = yes
	tls keyfile = ${tls.key}
	tls certfile = ${tls.cert}
	tls cafile = ${tls.ca}
`;
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.filter((arg) => !arg.includes(adAdminPassword)).join(" ")} failed (${result.error?.message ?? result.status}):\n${result.stderr}${result.stdout}`.slice(
        0,
        8000,
      ),
    );
  }
}

async function ensureFree(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = createServer()
      .once("error", (error: NodeJS.ErrnoException) =>
        reject(
          new Error(
            `Port ${port} on 127.0.0.1 is taken (${error.code}): Samba cannot choose its ports, so only one throwaway DC runs at a time. Stop what holds it (ss -ltnp 'sport = :${port}').`,
          ),
        ),
      )
      .listen(port, "127.0.0.1", () => server.close(() => resolve()));
  });
}

/** Waits until the DC accepts connections on `port` (it listens a few seconds after it starts). */
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
    if (attempt === 1200) throw new Error(`samba is not listening on port ${port} after 2 minutes`);
    await sleep(100);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "run") {
  const people = Number(process.argv[3]);
  const command = process.argv.slice(process.argv.indexOf("--") + 1);
  const started = Date.now();
  const server = await startSambaAd(people);
  console.log(
    `Samba AD DC with ${people} users up in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  const child = spawn(command[0] as string, command.slice(1), {
    stdio: "inherit",
    env: { ...process.env, ...server.env },
  });
  const stopAndExit = async (code: number) => {
    await server.stop();
    process.exit(code);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      child.kill(signal);
    });
  }
  child.on("exit", (code, signal) => void stopAndExit(code ?? (signal ? 1 : 0)));
  child.on("error", () => void stopAndExit(1));
}
