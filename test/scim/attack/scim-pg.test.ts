// Attack on PostgreSQL: what PostgreSQL refuses that SQLite and memory take. Runs when PLATFORM_INTEGRATION_PG_URL is set.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createScimHandler, type ScimUserStore } from "../../../src/scim/index.ts";
import { clientOf, postgresStores, token } from "./support.ts";

// Empty means unset, as for the other PostgreSQL suites (test/support/skipped-suites.ts).
const pgUrl = process.env.PLATFORM_INTEGRATION_PG_URL || undefined;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function scimOnPostgres() {
  const { stores, drop } = await postgresStores(pgUrl as string, 1);
  cleanups.push(drop);
  return clientOf(createScimHandler({ store: stores[0] as ScimUserStore, token }));
}

describe.skipIf(pgUrl === undefined)("PostgreSQL: values it cannot hold", () => {
  // The Provisioning API answers 400 for U+0000 and lone surrogates; SCIM must not answer 503
  // (retry later) for a value that retrying can never store: the identity provider retries for
  // ever and the user is never provisioned.
  it.each([
    ["U+0000 in displayName", { displayName: "a\u0000b" }],
    ["U+0000 in an unmapped attribute (title)", { title: "x\u0000" }],
    ["U+0000 in externalId", { externalId: "e\u0000" }],
    ["a lone surrogate in title", { title: "x\ud800y" }],
  ])("%s answers 400, not 503", async (_name, extra) => {
    const b = await scimOnPostgres();
    const answer = await b("POST", "/Users", {
      userName: `u${randomUUID().slice(0, 6)}`,
      ...extra,
    });
    expect([answer.status, answer.body?.scimType], JSON.stringify(answer.body)).toEqual([
      400,
      "invalidValue",
    ]);
  });
});
