// Attack: U+0000 (and a lone surrogate) where a request names a user rather than writes one: an
// id in the path, a value compared with `eq` in a filter. No store holds such a value (every
// write refuses it), and PostgreSQL text cannot even be compared with one: the answer is the one
// for a user that is not there (404, an empty list), never a 5xx an identity provider retries for
// ever. On the three bundled stores (PostgreSQL when PLATFORM_INTEGRATION_PG_URL is set).
import { afterAll, describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler, type ScimUserStore } from "../../../src/scim/index.ts";
import { SqliteUserStore } from "../../../src/stores/sqlite/index.ts";
import { clientOf, patchOp, postgresStores, token } from "./support.ts";

// Empty means unset, as for the other PostgreSQL suites (test/support/skipped-suites.ts).
const pgUrl = process.env.PLATFORM_INTEGRATION_PG_URL || undefined;
const cleanups: (() => void | Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const stores: [string, () => Promise<ScimUserStore>][] = [
  ["MemoryUserStore", async () => new MemoryUserStore({ unique: ["username", "email"] })],
  [
    "SqliteUserStore",
    async () => {
      const store = new SqliteUserStore(":memory:", { unique: ["username", "email"] });
      cleanups.push(() => store.close());
      return store;
    },
  ],
  ...(pgUrl === undefined
    ? []
    : [
        [
          "PostgresUserStore",
          async () => {
            const { stores, drop } = await postgresStores(pgUrl, 1);
            cleanups.push(drop);
            return stores[0] as ScimUserStore;
          },
        ] as [string, () => Promise<ScimUserStore>],
      ]),
];

const q = (filter: string) => `/Users?filter=${encodeURIComponent(filter)}`;

describe.each(stores)("U+0000 in what names a user, on %s", (_name, open) => {
  it("an id with U+0000 in the path answers 404 to every method", async () => {
    const errors: unknown[] = [];
    const scim = clientOf(
      createScimHandler({ store: await open(), token, onError: (error) => errors.push(error) }),
    );
    const id = (await scim("POST", "/Users", { userName: "bob" })).body.id as string;
    for (const [method, body] of [
      ["GET"],
      ["PUT", { userName: "bob", title: "t" }],
      ["PATCH", { schemas: [patchOp], Operations: [{ op: "replace", path: "title", value: "t" }] }],
      ["DELETE"],
    ] as [string, unknown?][]) {
      for (const path of [`/Users/${id}%00`, "/Users/%00", `/Users/a%00${id}`]) {
        const answer = await scim(method, path, body);
        expect([answer.status, answer.body?.scimType], `${method} ${path}`).toEqual([
          404,
          undefined,
        ]);
      }
    }
    expect(errors, "nothing reached onError (no 5xx)").toEqual([]);
    expect((await scim("GET", `/Users/${id}`)).body.title, "the user is untouched").toBe(undefined);
  });

  it.each([
    ['userName eq "bob\\u0000"'],
    ['userName eq "\\u0000"'],
    ['externalId eq "e1\\u0000"'],
    ['id eq "\\u0000"'],
    ['userName eq "bob\\u0000" and active eq true'],
    ['emails[type eq "work"].value eq "b\\u0000@x.io"'],
    ['userName eq "bob\\ud800"'],
    ['externalId eq "\\udfff"'],
  ])("the filter %s answers 200 with no user", async (filter) => {
    const errors: unknown[] = [];
    const scim = clientOf(
      createScimHandler({ store: await open(), token, onError: (error) => errors.push(error) }),
    );
    await scim("POST", "/Users", { userName: "bob", externalId: "e1" });
    // A user whose userName holds U+FFFD, which a lone surrogate becomes in UTF-8: not matched.
    await scim("POST", "/Users", { userName: "bob\ufffd", externalId: "\ufffd" });
    const answer = await scim("GET", q(filter));
    expect([answer.status, answer.body.totalResults], JSON.stringify(answer.body)).toEqual([
      200, 0,
    ]);
    expect(errors).toEqual([]);
  });

  it("a raw U+0000 inside a filter's string is not JSON: 400 invalidFilter", async () => {
    const scim = clientOf(createScimHandler({ store: await open(), token }));
    const answer = await scim("GET", "/Users?filter=userName%20eq%20%22bob%00%22");
    expect([answer.status, answer.body.scimType]).toEqual([400, "invalidFilter"]);
  });
});
