import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import {
  MemoryUserStore,
  type UserPageOptions,
  type UserPatch,
  type UserRecord,
  type UserStore,
} from "../../../src/provisioning/index.ts";
import {
  type TestContext,
  type TestRunner,
  testUserStore,
  type UserStoreContractOptions,
} from "../../../src/testing/index.ts";
import { usernameHoldersHold } from "../../../src/users/replace-conditions.ts";
import type { ReplaceOptions } from "../../../src/users/user-store.ts";

const conflict = {
  holder: { uuid: "holder", email: "held@x.io" },
  refused: { uuid: "refused", email: "HELD@x.io" },
};
testUserStore({
  describe,
  it,
  create: () => new MemoryUserStore({ unique: ["email"] }),
  read: (store, uuid) => store.get(uuid),
  conflict,
});
describe("with onDelete: deactivate", () => {
  testUserStore({
    describe,
    it,
    create: () => new MemoryUserStore({ unique: ["email"], onDelete: "deactivate" }),
    read: (store, uuid) => store.get(uuid),
    onDelete: "deactivate",
    conflict,
  });
});

/** What became of each check: its name, by outcome. */
interface Outcomes {
  passed: string[];
  failed: string[];
  skipped: string[];
  errors: Map<string, string>;
}

/**
 * Runs the contract against a store, as a runner whose context marks a test skipped (like
 * node:test's, whose skip() does not throw), or with no context at all.
 */
async function runContract<Store extends UserStore>(
  options: Pick<UserStoreContractOptions<Store>, "create" | "read" | "destroy" | "onDelete">,
  { withContext = true } = {},
): Promise<Outcomes> {
  const checks: { name: string; body: (context?: TestContext) => Promise<void> }[] = [];
  const runner: TestRunner = {
    describe: (_name, body) => body(),
    it: (name, body) => checks.push({ name, body }),
  };
  testUserStore({ ...runner, ...options, concurrency: 8 });
  const outcomes: Outcomes = { passed: [], failed: [], skipped: [], errors: new Map() };
  for (const { name, body } of checks) {
    let skipped = false;
    const context = {
      skip: () => {
        skipped = true;
      },
    };
    try {
      await (withContext ? body(context) : body());
      (skipped ? outcomes.skipped : outcomes.passed).push(name);
    } catch (error) {
      outcomes.failed.push(name);
      outcomes.errors.set(name, (error as Error).message);
    }
  }
  return outcomes;
}

async function failedChecks(create: () => UserStore): Promise<string[]> {
  return (await runContract({ create })).failed;
}

describe("testUserStore", () => {
  it("fails a store whose upsert replaces instead of merging", async () => {
    class ReplacingStore extends MemoryUserStore {
      override async upsert(patch: Parameters<UserStore["upsert"]>[0]) {
        const created = (await this.get(patch.uuid)) === undefined;
        await super.delete(patch.uuid);
        return { ...(await super.upsert(patch)), created };
      }
    }
    expect(await failedChecks(() => new ReplacingStore())).toContain(
      "merges: absent fields keep their value, null clears, empty string is kept",
    );
  });

  it("fails a store that merges extra values recursively", async () => {
    class DeepMergeStore extends MemoryUserStore {
      override async upsert(patch: Parameters<UserStore["upsert"]>[0]) {
        const extra = { ...(await this.get(patch.uuid))?.extra };
        for (const [key, value] of Object.entries(patch.extra ?? {})) {
          const stored = extra[key];
          extra[key] =
            isObject(stored) && isObject(value)
              ? Object.fromEntries(
                  Object.entries({ ...stored, ...value }).filter(([, inner]) => inner !== null),
                )
              : value;
        }
        return super.upsert({ ...patch, extra });
      }
    }
    expect(await failedChecks(() => new DeepMergeStore())).toContain(
      "replaces each extra value whole and keeps it exactly as sent",
    );
  });

  it("fails a store that throws on deleting a missing user", async () => {
    class StrictDeleteStore extends MemoryUserStore {
      override async delete(uuid: string) {
        const result = await super.delete(uuid);
        if (!result.deleted) throw new Error("no such user");
        return result;
      }
    }
    expect(await failedChecks(() => new StrictDeleteStore())).toEqual([
      "deletes a user, and succeeds for a user that does not exist",
    ]);
  });

  it("fails a store that loses concurrent updates", async () => {
    class RacyStore extends MemoryUserStore {
      override async upsert(patch: Parameters<UserStore["upsert"]>[0]) {
        const before = await this.get(patch.uuid);
        await new Promise((resolve) => setTimeout(resolve, 1));
        await super.delete(patch.uuid);
        if (before) await super.upsert(before);
        return super.upsert(patch);
      }
    }
    expect(await failedChecks(() => new RacyStore())).toContain(
      "loses no update when upserts of one user run concurrently",
    );
  });
});

describe("testUserStore's checks of replace with usernameHolders", () => {
  const sequential =
    "replace with usernameHolders writes only while the other holders of the username (ASCII case ignored) are the ones given";
  const concurrent =
    "concurrent creates of one username in several cases, each with the holders it read, store it once";

  it("fails a store whose replace ignores usernameHolders", async () => {
    class Ignoring extends MemoryUserStore {
      override replace(user: UserRecord): Promise<UserRecord>;
      override replace(user: UserRecord, options: ReplaceOptions): Promise<UserRecord | undefined>;
      override async replace(user: UserRecord, options?: ReplaceOptions) {
        return options?.expected === undefined
          ? super.replace(user)
          : super.replace(user, { expected: options.expected });
      }
    }
    const failed = await failedChecks(() => new Ignoring());
    expect(failed).toContain(sequential);
    expect(failed).toContain(concurrent);
  });

  it("fails a store that reads the holders and writes in two steps others can come between", async () => {
    class TwoSteps extends MemoryUserStore {
      override replace(user: UserRecord): Promise<UserRecord>;
      override replace(user: UserRecord, options: ReplaceOptions): Promise<UserRecord | undefined>;
      override async replace(user: UserRecord, options?: ReplaceOptions) {
        if (options?.usernameHolders === undefined) return super.replace(user, options ?? {});
        const holders = await this.findUsers({
          field: "username",
          value: user.username ?? "",
          ignoreCase: true,
        });
        if (!usernameHoldersHold(user.uuid, holders, options)) return undefined;
        await new Promise((resolve) => setImmediate(resolve));
        return super.replace(user, { expected: options.expected });
      }
    }
    const failed = await failedChecks(() => new TwoSteps());
    expect(failed).toEqual([concurrent]);
  });
});

describe("testUserStore's checks of the reads", () => {
  const reads = [
    "reads users back through get, list and count, each a promise",
    "leaves a deleted user out of get, list and count",
    "hands out copies: changing a user read changes nothing stored",
  ];

  it("passes the bundled MemoryUserStore's reads, and skips them for a store without reads", async () => {
    expect((await runContract({ create: () => new MemoryUserStore() })).passed).toEqual(
      expect.arrayContaining(reads),
    );
    const inner = new MemoryUserStore();
    const writesOnly = await runContract({
      create: () => ({ upsert: inner.upsert.bind(inner), delete: inner.delete.bind(inner) }),
    });
    expect(writesOnly.skipped).toEqual(expect.arrayContaining(reads));
  });

  // Catches: synchronous reads (MemoryUserStore's and SqliteUserStore's before 0.2), which a
  // caller swapping stores would serialize as {}.
  it("fails a store whose reads are synchronous, saying they must return promises", async () => {
    const syncReads = () => {
      const inner = new MemoryUserStore();
      const users = new Map<string, UserRecord>();
      return {
        upsert: async (patch: UserPatch) => {
          const result = await inner.upsert(patch);
          users.set(patch.uuid, result.user);
          return result;
        },
        delete: async (uuid: string) => {
          users.delete(uuid);
          return inner.delete(uuid);
        },
        get: (uuid: string) => users.get(uuid),
        list: () => [...users.values()],
        count: () => users.size,
      };
    };
    const outcomes = await runContract({ create: syncReads });
    expect(outcomes.failed).toContain(reads[0]);
    expect(outcomes.errors.get(reads[0] as string)).toMatch(
      /^get\(uuid\) must return a promise \(UserStoreReads\), not \{"uuid":"u2"/,
    );
  });

  // Catches: a get or list that hands out the stored object itself.
  it("fails a store whose reads hand out the stored objects", async () => {
    const sharing = () => {
      const users = new Map<string, UserRecord>();
      const inner = new MemoryUserStore();
      return {
        upsert: async (patch: UserPatch) => {
          const result = await inner.upsert(patch);
          const kept = users.get(patch.uuid);
          if (kept) Object.assign(kept, result.user);
          else users.set(patch.uuid, result.user);
          return { ...result, user: structuredClone(result.user) };
        },
        delete: async (uuid: string) => {
          users.delete(uuid);
          return inner.delete(uuid);
        },
        get: async (uuid: string) => users.get(uuid),
      };
    };
    const outcomes = await runContract({ create: sharing });
    expect(outcomes.failed).toEqual([reads[2]]);
  });

  // Catches: a list or count that takes deactivated users in by default.
  it("fails a store whose list takes deactivated users in unless asked", async () => {
    class ListsAllStore extends MemoryUserStore {
      override list() {
        return super.list({ includeDeactivated: true });
      }
    }
    const outcomes = await runContract({
      create: () => new ListsAllStore({ onDelete: "deactivate" }),
      onDelete: "deactivate",
    });
    expect(outcomes.failed).toEqual([
      "leaves a deactivated user out of list and count unless asked, and get shows it",
      "replace deactivates without deleting, and reactivates with the record",
      "listPage reads any slice of list's order, with count's total on every page, as copies",
    ]);
  });
});

describe("testUserStore's checks of listPage", () => {
  it("fails a store whose listPage counts the page, not every user it takes in", async () => {
    class PageCountStore extends MemoryUserStore {
      override async listPage(options: UserPageOptions) {
        const page = await super.listPage(options);
        return { ...page, total: page.users.length };
      }
    }
    expect(await failedChecks(() => new PageCountStore())).toEqual([
      "listPage reads any slice of list's order, with count's total on every page, as copies",
      "listPage takes in the deactivated users whose extra matches, exactly as JSON data",
    ]);
  });

  it("fails a store whose listPage passes over one user too many, or too few", async () => {
    for (const shift of [1, -1]) {
      class ShiftedStore extends MemoryUserStore {
        override listPage(options: UserPageOptions) {
          return super.listPage({ ...options, offset: Math.max(0, (options.offset ?? 0) + shift) });
        }
      }
      expect(await failedChecks(() => new ShiftedStore())).toContain(
        "listPage reads any slice of list's order, with count's total on every page, as copies",
      );
    }
  });

  it("fails a store whose listPage takes in every deactivated user for an extra match, or none", async () => {
    for (const taken of [true, false]) {
      class LooseMatchStore extends MemoryUserStore {
        override listPage(options: UserPageOptions) {
          const { includeDeactivated } = options;
          const loose = typeof includeDeactivated === "object" ? taken : includeDeactivated;
          return super.listPage({ ...options, includeDeactivated: loose });
        }
      }
      expect(await failedChecks(() => new LooseMatchStore())).toEqual([
        "listPage takes in the deactivated users whose extra matches, exactly as JSON data",
      ]);
    }
  });

  it("fails a store whose listPage matches a boolean by its text, or a string loosely", async () => {
    class TextMatchStore extends MemoryUserStore {
      override async listPage(options: UserPageOptions) {
        const { includeDeactivated } = options;
        if (typeof includeDeactivated !== "object") return super.listPage(options);
        const all = await super.list({ includeDeactivated: true });
        const [outer, inner] = includeDeactivated.extra;
        const taken = all.filter((user) => {
          if (user.deactivatedAt === undefined) return true;
          const container = user.extra?.[outer] as Record<string, unknown> | undefined;
          const value = container?.[inner];
          return value !== undefined && String(value) === String(includeDeactivated.value);
        });
        const offset = options.offset ?? 0;
        return { users: taken.slice(offset, offset + options.limit), total: taken.length };
      }
    }
    expect(await failedChecks(() => new TextMatchStore())).toEqual([
      "listPage takes in the deactivated users whose extra matches, exactly as JSON data",
    ]);
  });
});

describe("testUserStore's reporting", () => {
  /** A store with upsert and delete only. */
  const minimal = () => {
    const inner = new MemoryUserStore();
    return {
      upsert: inner.upsert.bind(inner),
      delete: inner.delete.bind(inner),
      get: inner.get.bind(inner),
    };
  };

  it("marks skipped, not passed, the checks of reset and ready for a store without them", async () => {
    const outcomes = await runContract({ create: minimal, read: (store, uuid) => store.get(uuid) });
    expect(outcomes.skipped.sort()).toEqual([
      "a user replace deactivated holds no unique value; reactivating into a taken one is refused",
      "concurrent creates of one username in several cases, each with the holders it read, store it once",
      "concurrent read-and-replace loops with expected lose no change",
      "delete removes a user replace deactivated",
      "deletes a user and discards its pending record in one step",
      "findUsers finds by a field (ASCII case ignored when asked) and by an extra path, deactivated users too",
      "keeps a conflict as one pending record per uuid, merging every later message into it",
      "listPage reads any slice of list's order, with count's total on every page, as copies",
      "listPage takes in the deactivated users whose extra matches, exactly as JSON data",
      "removes every user on reset",
      "replace deactivates without deleting, and reactivates with the record",
      "replace with expected writes only over the user as it was read, else resolves undefined",
      "replace with usernameHolders writes only while the other holders of the username (ASCII case ignored) are the ones given",
      "replace writes a user whole: it creates, and clears what a later record omits",
      "reports ready once created",
      "stays atomic per uuid under concurrent writes, releases and deletes",
      "wakes a pending uuid when its value is freed, and releases it in one step",
      "writes through the quarantine: applied at once when nothing is pending",
    ]);
    expect(outcomes.failed).toEqual([]);
    expect(outcomes.passed).not.toContain("removes every user on reset");
  });

  it("fails a store that is not ready once created", async () => {
    class NeverReadyStore extends MemoryUserStore {
      ready = () => false;
    }
    expect(await failedChecks(() => new NeverReadyStore())).toEqual(["reports ready once created"]);
  });

  it("runs the reset and ready checks for a store that has them", async () => {
    class ReadyStore extends MemoryUserStore {
      ready = () => true;
    }
    const outcomes = await runContract({ create: () => new ReadyStore() });
    expect(outcomes.passed).toContain("removes every user on reset");
    expect(outcomes.passed).toContain("reports ready once created");
  });

  it("marks skipped the checks that need an independent read when there is none", async () => {
    const outcomes = await runContract({ create: () => new MemoryUserStore() });
    expect(outcomes.skipped).toContain("leaves nothing of a deleted user in the database");
    expect(outcomes.passed).toContain("removes every user on reset");
  });

  it("fails, saying why, a check that does not apply when the runner cannot skip", async () => {
    const outcomes = await runContract({ create: minimal }, { withContext: false });
    expect(outcomes.failed).toContain("removes every user on reset");
    expect(outcomes.errors.get("removes every user on reset")).toMatch(
      /does not apply \(the store has no reset\(\)\).*no way to mark it skipped/,
    );
  });

  it("reads users through read, so a store that answers without storing fails", async () => {
    class ForgetfulStore extends MemoryUserStore {
      override async upsert(patch: Parameters<UserStore["upsert"]>[0]) {
        const result = await super.upsert(patch);
        if (patch.username === "bob") await super.delete(patch.uuid);
        return result;
      }
    }
    const outcomes = await runContract({
      create: () => new ForgetfulStore(),
      read: (store, uuid) => store.get(uuid),
    });
    expect(outcomes.failed).toContain("creates a user and reports that it created it");
    expect(outcomes.errors.get("creates a user and reports that it created it")).toMatch(
      /^the stored user: got undefined, expected \{"uuid"/,
    );
  });

  it("fails a store that keeps a deleted user's row, when read can see it", async () => {
    class SoftDeleteStore extends MemoryUserStore {
      override async delete(uuid: string) {
        return { deleted: (await this.get(uuid)) !== undefined };
      }
    }
    const outcomes = await runContract({
      create: () => new SoftDeleteStore(),
      read: (store, uuid) => store.get(uuid),
    });
    expect(outcomes.failed).toContain("leaves nothing of a deleted user in the database");
  });

  // That destroy and read get create's own store type: user-store-contract.test-d.ts.
  it("closes each store it made with destroy, after the check, whatever its outcome", async () => {
    const made: MemoryUserStore[] = [];
    const destroyed: MemoryUserStore[] = [];
    await runContract({
      create: () => {
        const store = new MemoryUserStore();
        made.push(store);
        return store;
      },
      destroy: (store) => void destroyed.push(store),
    });
    expect(destroyed).toEqual(made);
    expect(made.length).toBeGreaterThan(10);
  });
});

describe("the ./testing entry", () => {
  /** The modules a source file loads at run time: type-only imports and exports left out. */
  const runtimeImports = (url: URL): string[] => {
    const source = ts.createSourceFile(
      url.pathname,
      readFileSync(url, "utf8"),
      ts.ScriptTarget.Latest,
    );
    const found: string[] = [];
    const visit = (node: ts.Node) => {
      if (
        (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) ||
        (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier)
      ) {
        found.push((node.moduleSpecifier as ts.StringLiteral).text);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        found.push(node.arguments[0].text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  };

  it("loads no node: module, so that it runs on every runtime", () => {
    const seen = new Set<string>();
    const visit = (url: URL) => {
      if (seen.has(url.href)) return;
      seen.add(url.href);
      for (const specifier of runtimeImports(url)) {
        expect(specifier, `imported by ${url.pathname}`).not.toMatch(/^node:/);
        if (specifier.startsWith(".")) visit(new URL(specifier, url));
      }
    };
    visit(new URL("../../../src/testing/index.ts", import.meta.url));
    expect(seen.size).toBeGreaterThan(5);
  });

  it("would see a node: import in a module it loads", () => {
    const sqlite = new URL("../../../src/stores/sqlite/sqlite-user-store.ts", import.meta.url);
    // A type-only import of node:sqlite there, which is not loaded at run time.
    expect(runtimeImports(sqlite).some((specifier) => specifier.startsWith("node:"))).toBe(false);
    const demo = new URL("../../../src/cli/demo.ts", import.meta.url);
    expect(runtimeImports(demo)).toContain("node:http");
  });
});

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
