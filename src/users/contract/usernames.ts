// The contract's `replace(user, { usernameHolders })`: the write that keeps a username unique by
// the caller's own rule (the SCIM server's userName, unique ignoring case, inactive users too),
// atomically with the read of who holds it, across every connection.
import { asciiLowerCase } from "../store-rules.ts";
import type { UserRecord } from "../user-record.ts";
import type { UserStore, UserStoreReads } from "../user-store.ts";
import type { ContractKit, Skip } from "./kit.ts";

type Replacing = UserStore & Required<Pick<UserStore, "replace">>;

/** The store with `replace` and `get`, or undefined after skipping the check. */
function usable(
  store: UserStore,
  skip: Skip,
): (Replacing & Pick<UserStoreReads, "get">) | undefined {
  if (typeof store.replace !== "function") return void skip("the store has no replace()");
  if (typeof (store as Partial<UserStoreReads>).get !== "function") {
    return void skip("the store has no reads (get)");
  }
  return store as Replacing & Pick<UserStoreReads, "get">;
}

/** The users holding `username` ignoring ASCII case, deactivated ones too, as the store reads them. */
async function holdersOf(store: UserStore, username: string): Promise<UserRecord[]> {
  const reads = store as unknown as Partial<UserStoreReads>;
  if (typeof reads.findUsers === "function") {
    return reads.findUsers({ field: "username", value: username, ignoreCase: true });
  }
  const everyone = (await reads.list?.({ includeDeactivated: true })) ?? [];
  const lower = asciiLowerCase(username);
  return everyone.filter(
    (user) => user.username !== undefined && asciiLowerCase(user.username) === lower,
  );
}

/** The checks of `replace` with `usernameHolders`, skipped where the store has no replace. */
export function usernameHoldersChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal, concurrency } = kit;

  check(
    "replace with usernameHolders writes only while the other holders of the username (ASCII case ignored) are the ones given",
    async (store, skip) => {
      const s = usable(store, skip);
      if (!s) return;
      const ann: UserRecord = { uuid: "u1", username: "Ann" };
      await s.replace(ann);
      const refused = { uuid: "u2", username: "ann" };
      equal(await s.replace(refused, { usernameHolders: [] }), undefined, "a taken username");
      equal(await s.get("u2"), undefined, "stores nothing");
      const second = { uuid: "u2", username: "ANN" };
      equal(
        await s.replace(second, { usernameHolders: [ann] }),
        second,
        "the holders as read: written",
      );
      equal(
        await s.replace({ uuid: "u3", username: "ann" }, { usernameHolders: [ann] }),
        undefined,
        "a holder left out",
      );
      await s.replace({ ...ann, firstName: "Ann" });
      equal(
        await s.replace({ uuid: "u3", username: "ann" }, { usernameHolders: [ann, second] }),
        undefined,
        "a holder that changed since it was read",
      );
      const at = "2026-01-02T03:04:05.000Z";
      const kept = { uuid: "u4", username: "aNN", deactivatedAt: at };
      await s.replace(kept);
      const ann2 = { ...ann, firstName: "Ann" };
      equal(
        await s.replace({ uuid: "u5", username: "ann" }, { usernameHolders: [ann2, second] }),
        undefined,
        "a deactivated holder left out",
      );
      const renamed = { uuid: "u2", username: "ann" };
      equal(
        await s.replace(renamed, { expected: second, usernameHolders: [ann2, kept] }),
        renamed,
        "the written user's own record is not a holder",
      );
      equal(
        await s.replace(
          { uuid: "u2", username: "ann", firstName: "X" },
          {
            expected: second,
            usernameHolders: [ann2, kept],
          },
        ),
        undefined,
        "expected failing, the holders right",
      );
      const elise = { uuid: "u6", username: "élise" };
      await s.replace({ uuid: "u7", username: "Élise" });
      equal(
        await s.replace(elise, { usernameHolders: [] }),
        elise,
        "only ASCII letters are folded",
      );
      const nameless = { uuid: "u8", firstName: "N" };
      equal(await s.replace(nameless, { usernameHolders: [] }), nameless, "no username");
    },
  );

  check(
    "concurrent creates of one username in several cases, each with the holders it read, store it once",
    async (store, skip) => {
      const s = usable(store, skip);
      if (!s) return;
      const cases = ["ann", "Ann", "ANN", "aNN", "AnN", "anN"];
      const outcomes = await Promise.all(
        Array.from({ length: concurrency }, async (_, index) => {
          const user = { uuid: `u${index}`, username: cases[index % cases.length] as string };
          for (let attempt = 1; attempt <= concurrency; attempt++) {
            const holders = await holdersOf(s, user.username);
            if (holders.length > 0) return "refused";
            const written = await s.replace(user, { usernameHolders: holders });
            if (written !== undefined) return "written";
          }
          return "never decided";
        }),
      );
      equal(
        outcomes.filter((outcome) => outcome === "written").length,
        1,
        "callers that wrote the username",
      );
      equal(outcomes.includes("never decided"), false, "every caller decided");
      equal((await holdersOf(s, "ANN")).length, 1, "users holding the username");
    },
  );
}
