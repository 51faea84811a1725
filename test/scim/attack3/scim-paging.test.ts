// Attack 3: startIndex/count edge values through the stores' listPage (RFC 7644 §3.4.2.4: a
// startIndex past the end is an empty page; bad input is a clear 4xx or a clean 200, never 5xx).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler, type ScimUserStore } from "../../../src/scim/index.ts";
import { SqliteUserStore } from "../../../src/stores/sqlite/index.ts";
import { clientOf, token } from "../attack/support.ts";

const stores: [string, () => ScimUserStore][] = [
  ["memory", () => new MemoryUserStore({})],
  [
    "sqlite",
    () =>
      new SqliteUserStore(
        join(mkdtempSync(join(tmpdir(), "attack3-")), "u.db"),
        {},
      ) as ScimUserStore,
  ],
];

describe.each(stores)("paging on %s", (_name, make) => {
  it.each([["1e300"], ["9007199254740993"], ["1e20"], ["2.5"], ["-1e300"], ["0x10"], ["Infinity"]])(
    "startIndex=%s answers a clean 200 ListResponse (or 400), never 5xx",
    async (startIndex) => {
      const scim = clientOf(createScimHandler({ store: make(), token }));
      await scim("POST", "/Users", { userName: "a" });
      await scim("POST", "/Users", { userName: "b" });
      const answer = await scim("GET", `/Users?startIndex=${startIndex}&count=10`);
      expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(500);
      if (answer.status === 200) {
        expect(answer.body.totalResults).toBe(2);
        expect(Number.isSafeInteger(answer.body.startIndex)).toBe(true);
      }
    },
  );

  it.each([["1e300"], ["-5"], ["0"], ["abc"]])("count=%s never 5xx", async (count) => {
    const scim = clientOf(createScimHandler({ store: make(), token }));
    await scim("POST", "/Users", { userName: "a" });
    const answer = await scim("GET", `/Users?startIndex=1&count=${count}`);
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(500);
  });
});
