// Attack 3: every PUT/PATCH is a conditional replace on the user "as read" (expected). A value
// the store gives back in another form than it compares would fail the condition at every
// attempt: 503 for ever for a legitimate request. Odd-but-valid JSON numbers and strings in an
// extension, on each store.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler, type ScimUserStore } from "../../../src/scim/index.ts";
import { SqliteUserStore } from "../../../src/stores/sqlite/index.ts";
import { clientOf, patchOp, postgresStores, token } from "../attack/support.ts";

const pgUrl = process.env.PLATFORM_INTEGRATION_PG_URL || undefined;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const makers: [string, () => Promise<ScimUserStore>][] = [
  ["memory", async () => new MemoryUserStore({ onDelete: "deactivate" })],
  [
    "sqlite",
    async () =>
      new SqliteUserStore(join(mkdtempSync(join(tmpdir(), "attack3-")), "u.db"), {
        onDelete: "deactivate",
      }) as ScimUserStore,
  ],
  ...(pgUrl === undefined
    ? []
    : ([
        [
          "postgres",
          async () => {
            const { stores, drop } = await postgresStores(pgUrl, 1, "deactivate");
            cleanups.push(drop);
            return stores[0] as ScimUserStore;
          },
        ],
      ] as [string, () => Promise<ScimUserStore>][])),
];

describe.each(makers)("round trip on %s", (_name, make) => {
  it.each([
    ["-0", "-0"],
    ["1.50", "1.50"],
    ["1e21", "1e21"],
    ["2^70", "1180591620717411303424"],
    ["1e-7", "1e-7"],
    ["30 digits", "123456789012345678901234567890"],
    ["u2028", '"a\\u2028b"'],
    ["big-key order", '{"b":1,"a":2,"B":3}'],
    ["empty object", "{}"],
    ["nested empty list", "[[]]"],
  ])("a PATCH after a POST carrying %s in an extension answers 200", async (_label, json) => {
    const scim = clientOf(createScimHandler({ store: await make(), token }));
    const body = `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:example:ext"],"userName":"r${Math.random()}","urn:example:ext":{"v":${json}}}`;
    const created = await scim("POST", "/Users", body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    for (const active of [false, true]) {
      const answer = await scim("PATCH", `/Users/${created.body.id}`, {
        schemas: [patchOp],
        Operations: [
          { op: "replace", path: "active", value: active },
          { op: "replace", path: "title", value: "t" },
        ],
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
  });
});
