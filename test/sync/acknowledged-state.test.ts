import { execFile, execFileSync } from "node:child_process";
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openState, StateFileError } from "../../src/sync/acknowledged-state.ts";
import {
  inTransaction,
  onStateFile,
  restrictToOwner,
  stateFileFix,
} from "../../src/sync/state-database.ts";

const run = promisify(execFile);
const stateSource = fileURLToPath(new URL("../../src/sync/acknowledged-state.ts", import.meta.url));
const identity = { source: "ldap://directory dc=example", target: "http://app" };

let folder: string;
let path: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), "acknowledged-state-"));
  path = join(folder, "state.sqlite");
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const user = (index: number) => ({ uuid: `u${index}`, username: `user${index}` });

describe("the acknowledged state's journal", () => {
  it("keeps what a killed process acknowledged, though nothing was folded into the database", async () => {
    // Fewer acknowledgements than a fold takes, then SIGKILL: only the journal can hold them.
    const script = `import { openState } from ${JSON.stringify(stateSource)};
const state = openState(${JSON.stringify(path)}, ${JSON.stringify(identity)});
state.acknowledge({ uuid: "u1", username: "one" });
state.acknowledge({ uuid: "u2", username: "two" });
state.acknowledge({ uuid: "u1", username: "one again" });
state.forget("u2");
process.kill(process.pid, "SIGKILL");`;
    await expect(
      run(process.execPath, [
        "--disable-warning=ExperimentalWarning",
        "--input-type=module",
        "--eval",
        script,
      ]),
    ).rejects.toMatchObject({ signal: "SIGKILL" });

    const state = openState(path, identity);
    try {
      expect(state.get("u1")).toEqual({ uuid: "u1", username: "one again" });
      expect(state.get("u2")).toBeUndefined();
      expect(state.count()).toBe(1);
    } finally {
      state.close();
    }
    // Opening folded the journal into the database and emptied it.
    expect(readFileSync(`${path}-acks`, "utf8")).toBe("");
  });

  // A line it cannot read ends the journal: what came after it is sent again, never read wrong.
  it.each([
    ["cut short (the machine stopped mid-write)", `["u2",{"uuid":"u2","user`],
    ["whose record is not an object", `["u2",5]`],
    ["whose uuid is not a string", `[2,${JSON.stringify(user(2))}]`],
  ])("ends at a line %s", (_, line) => {
    openState(path, identity).close();
    appendFileSync(
      `${path}-acks`,
      `${JSON.stringify(["u1", user(1)])}\n${line}\n${JSON.stringify(["u3", user(3)])}\n`,
    );
    const state = openState(path, identity);
    try {
      expect(state.get("u1")).toEqual(user(1));
      expect(state.get("u2")).toBeUndefined();
      expect(state.get("u3")).toBeUndefined();
      expect(state.count()).toBe(1);
    } finally {
      state.close();
    }
  });

  // 2,500 stay in the journal until count() folds them; of 12,000, the first 10,000 are folded
  // while acknowledging, so that u3's forget lands on a row in the database.
  it.each([2_500, 12_000])(
    "reads its own acknowledgements and forgets, and keeps them once reopened (%i)",
    (total) => {
      const last = `u${total - 1}`;
      const inJournal = `u${total - 100}`;
      const check = (state: ReturnType<typeof openState>) => {
        expect(state.get("u3")).toBeUndefined();
        expect(state.get(inJournal)).toBeUndefined();
        expect(state.get("u5")).toEqual({ uuid: "u5", username: "renamed" });
        expect(state.get("u0")).toEqual(user(0));
        expect(state.get(last)).toEqual(user(total - 1));
        expect(state.count()).toBe(total - 2);
      };
      const state = openState(path, identity);
      for (let index = 0; index < total; index++) state.acknowledge(user(index));
      state.forget("u3");
      state.forget(inJournal);
      state.acknowledge({ uuid: "u5", username: "renamed" });
      check(state);
      state.changeCookie = { scope: "s", cookie: "c" };
      state.close();

      const reopened = openState(path, identity);
      try {
        check(reopened);
        expect(reopened.changeCookie).toEqual({ scope: "s", cookie: "c" });
      } finally {
        reopened.close();
      }
    },
  );

  it("folds at the 10,000th acknowledgement, emptying the journal", () => {
    const state = openState(path, identity);
    try {
      for (let index = 0; index < 9_999; index++) state.acknowledge(user(index));
      expect(readFileSync(`${path}-acks`, "utf8").split("\n")).toHaveLength(10_000);
      state.acknowledge(user(9_999));
      expect(readFileSync(`${path}-acks`, "utf8")).toBe("");
      state.acknowledge(user(10_000));
      expect(readFileSync(`${path}-acks`, "utf8")).toBe(
        `${JSON.stringify(["u10000", user(10_000)])}\n`,
      );
    } finally {
      state.close();
    }
  });

  it("lists every unseen user across pages of 500, whatever their uuids sort after", () => {
    const state = openState(path, identity);
    try {
      const uuids = [
        "0-first",
        "A-upper",
        ...Array.from({ length: 1_200 }, (_, index) => `u${index}`),
      ];
      for (const uuid of uuids) state.acknowledge({ uuid });
      state.beginScan();
      state.markSeen(["u5"]);
      const unseen = [...state.unseen()];
      expect(unseen).toHaveLength(uuids.length - 1);
      expect(new Set(unseen)).toEqual(new Set(uuids.filter((uuid) => uuid !== "u5")));
    } finally {
      state.close();
    }
  });

  it("lists as unseen the users acknowledged in this cycle that a scan did not see", () => {
    const state = openState(path, identity);
    try {
      state.acknowledge(user(1));
      state.acknowledge(user(2));
      state.beginScan();
      state.markSeen(["u1"]);
      expect([...state.unseen()]).toEqual(["u2"]);
    } finally {
      state.close();
    }
  });

  it("is readable by its owner only, and holds a password's digest, never the password", () => {
    const state = openState(path, identity);
    try {
      state.acknowledge({ uuid: "p1", password: "correct horse" });
      expect(statSync(`${path}-acks`).mode & 0o777).toBe(0o600);
      expect(readFileSync(`${path}-acks`, "utf8")).not.toContain("correct horse");
      expect(readFileSync(`${path}-acks`, "utf8")).toContain("sha256:");
    } finally {
      state.close();
    }
  });

  it("refuses a journal it cannot read rather than starting from nothing, and lets go of the file", () => {
    openState(path, identity).close();
    rmSync(`${path}-acks`);
    mkdirSync(`${path}-acks`);
    expect(() => openState(path, identity)).toThrow(/EISDIR/);
    rmSync(`${path}-acks`, { recursive: true });
    // Not locked by the failed open.
    openState(path, identity).close();
  });
});

describe("the sync's own files are regular files", () => {
  // Catches: a chmod through whatever the path leads to. An -acks linked to /dev/null made the
  // device readable by root alone, for every program on the machine (seen in an attack).
  it("refuses a path that leads to anything but a regular file, and changes no mode there", () => {
    const fifo = join(folder, "fifo");
    execFileSync("mkfifo", ["-m", "644", fifo]);
    const linked = `${path}-acks`;
    symlinkSync(fifo, linked);
    expect(() => restrictToOwner(linked)).toThrow(/not a regular file/);
    expect(statSync(fifo).mode & 0o777).toBe(0o644);
    expect(() =>
      onStateFile("journal of acknowledgements", linked, "fix", () => restrictToOwner(linked)),
    ).toThrow(StateFileError);
  });

  it("makes a regular file, or one a link leads to, readable by its owner alone", () => {
    const target = join(folder, "target");
    writeFileSync(target, "", { mode: 0o644 });
    symlinkSync(target, `${path}-key`);
    restrictToOwner(`${path}-key`);
    expect(statSync(target).mode & 0o777).toBe(0o600);
  });
});

describe("a full disk", () => {
  // Catches: an explicit ROLLBACK after SQLite's own, whose "cannot rollback - no transaction is
  // active" replaced the real failure.
  it("tells SQLITE_FULL itself, not the ROLLBACK SQLite already did", () => {
    const db = new DatabaseSync(path);
    db.exec("CREATE TABLE t (x TEXT)");
    const pages = (db.prepare("PRAGMA page_count").get() as { page_count: number }).page_count;
    db.exec(`PRAGMA max_page_count = ${pages + 2}`);
    const insert = db.prepare("INSERT INTO t VALUES (?)");
    const fill = () =>
      inTransaction(db, () => {
        for (let index = 0; index < 100; index++) insert.run("x".repeat(5000));
      });
    expect(fill).toThrow(/database or disk is full/);
    let error: unknown;
    try {
      onStateFile("state file", path, stateFileFix, fill);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(StateFileError);
    expect((error as StateFileError).path).toBe(path);
    expect((error as Error).message).toMatch(
      new RegExp(
        `state file ${path} failed: disk full \\(database or disk is full\\)\\. Make room on the disk`,
      ),
    );
    db.close();
  });

  it("tells ENOSPC from the journal as a full disk", () => {
    const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), {
      code: "ENOSPC",
    });
    expect(() =>
      onStateFile("journal of acknowledgements", `${path}-acks`, "fix", () => {
        throw enospc;
      }),
    ).toThrow(/journal of acknowledgements .*-acks failed: disk full \(ENOSPC/);
  });

  // On a real full disk (a tmpfs of 600 KiB, root only): every failure, the journal's fold when
  // the file is opened again included, is a StateFileError that says "disk full"; once there is
  // room the next run resumes.
  it.runIf(process.getuid?.() === 0)(
    "reports a full disk as the state file's, at open too, and resumes once there is room",
    async () => {
      const mount = join(folder, "full");
      mkdirSync(mount);
      try {
        await run("mount", ["-t", "tmpfs", "-o", "size=600k", "tmpfs", mount]);
      } catch {
        return; // no mount here (a container without the capability)
      }
      try {
        const statePath = join(mount, "state.sqlite");
        writeFileSync(join(mount, "filler"), Buffer.alloc(200 * 1024));
        const fill = () => {
          const state = openState(statePath, identity);
          try {
            for (let index = 0; index < 5000; index++) {
              state.acknowledge({ ...user(index), note: "x".repeat(100) });
            }
            state.count();
          } finally {
            state.close();
          }
        };
        expect(fill).toThrow(/disk full/);
        // Opened again, the journal left behind is folded in first: the same full disk, told so.
        expect(() => openState(statePath, identity)).toThrow(
          new RegExp(`state file ${statePath} failed: disk full`),
        );
        rmSync(join(mount, "filler"));
        await run("mount", ["-o", "remount,size=8m", mount]);
        const state = openState(statePath, identity);
        expect(state.count()).toBeGreaterThan(0);
        state.close();
      } finally {
        await run("umount", [mount]).catch(() => undefined);
      }
    },
  );
});

describe("the state file's identity", () => {
  // Catches: an LDAP URL's password or query, kept raw by an earlier version, repeated by the
  // StateMismatchError and kept in the file.
  it("keeps and shows the directory's URL without credentials or query, and takes over a raw value of before", () => {
    const raw = {
      source: "ldap://admin:S3cret@h:389/?x-bindpw=S3cret dc=example",
      target: "http://app",
    };
    const state = openState(path, raw);
    state.acknowledge(user(1));
    state.close();
    const stored = () => {
      const db = new DatabaseSync(path);
      const value = (
        db.prepare("SELECT value FROM meta WHERE key = 'source'").get() as { value: string }
      ).value;
      db.close();
      return value;
    };
    expect(stored()).toBe("ldap://h:389/?… dc=example");
    // As an earlier version kept it: raw.
    const db = new DatabaseSync(path);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'source'").run(
      "ldap://admin:S3cret@h:389 dc=example",
    );
    db.close();
    expect(() => openState(path, { ...identity, source: "ldap://h:389 dc=other" })).toThrow(
      /belongs to the source ldap:\/\/h:389 dc=example, not ldap:\/\/h:389 dc=other/,
    );
    expect(() => openState(path, { ...identity, source: "ldap://h:389 dc=other" })).not.toThrow(
      /S3cret|admin/,
    );
    openState(path, { source: "ldap://h:389 dc=example", target: "http://app" }).close();
    expect(stored()).toBe("ldap://h:389 dc=example");
  });
});
