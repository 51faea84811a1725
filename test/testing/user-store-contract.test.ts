import { describe, expect, it } from "vitest";
import { MemoryUserStore, type UserStore } from "../../src/provisioning/index.ts";
import { type TestRunner, testUserStore } from "../../src/testing/index.ts";

testUserStore({ describe, it, create: () => new MemoryUserStore() });

/** Runs the contract against a store and returns the names of the checks that failed. */
async function failedChecks(create: () => UserStore): Promise<string[]> {
  const checks: { name: string; body: () => Promise<void> }[] = [];
  const runner: TestRunner = {
    describe: (_name, body) => body(),
    it: (name, body) => checks.push({ name, body }),
  };
  testUserStore({ ...runner, create, concurrency: 8 });
  const failed: string[] = [];
  for (const { name, body } of checks) await body().catch(() => failed.push(name));
  return failed;
}

describe("testUserStore", () => {
  it("fails a store whose upsert replaces instead of merging", async () => {
    class ReplacingStore extends MemoryUserStore {
      override async upsert(patch: Parameters<UserStore["upsert"]>[0]) {
        const created = this.get(patch.uuid) === undefined;
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
        const extra = { ...this.get(patch.uuid)?.extra };
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
        const before = this.get(patch.uuid);
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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
