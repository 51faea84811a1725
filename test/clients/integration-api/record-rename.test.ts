// A record's wire names come from its one schema: rename a field there, and the fake serves it
// under the new name while the client reads it from there, with nothing else edited. Shown at run
// time by loading the real fake and the real client against a schema module whose record renames
// `releaseNotes` on the wire; a client left on the old schema then refuses the fake's answer.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createVersionClient as clientOfTheOldSchema } from "../../../src/clients/version/index.ts";
import { serveForEachTest } from "../../support/serve-fetch-handler.ts";

const serve = serveForEachTest();
const schemaModule = "../../../src/clients/version/version-record.ts";

afterEach(() => {
  vi.doUnmock(schemaModule);
  vi.resetModules();
});

async function withRenamedSchema() {
  vi.resetModules();
  vi.doMock(schemaModule, async () => {
    const { wireRecord } = await import("../../../src/clients/integration-api/wire-record.ts");
    const original =
      await vi.importActual<typeof import("../../../src/clients/version/version-record.ts")>(
        schemaModule,
      );
    const names = { releaseNotes: "notes" };
    return {
      currentVersionRecord: wireRecord(original.currentVersionRecord.shape, { names }),
      versionUpdateRecord: wireRecord(original.versionUpdateRecord.shape, { names }),
    };
  });
  const { createFakeIntegrationApi } = await import("../../../src/testing/index.ts");
  const { createVersionClient } = await import("../../../src/clients/version/index.ts");
  return { createFakeIntegrationApi, createVersionClient };
}

describe("renaming a field in a record's schema", () => {
  it("changes the fake's wire name and the client's reading together", async () => {
    const { createFakeIntegrationApi, createVersionClient } = await withRenamedSchema();
    const fake = createFakeIntegrationApi({
      current: { version: "2.0", releaseSequence: 7, releaseNotes: "Renamed on the wire" },
      updates: [{ version: "2.1", releaseSequence: 8, releaseNotes: "Next" }],
    });
    const server = await serve((request) => fake.respond(request));
    const served = await (await fetch(`${server.url}/version/v1/current`)).json();
    expect(served).toMatchObject({ notes: "Renamed on the wire" });
    expect(served).not.toHaveProperty("release_notes");

    const client = createVersionClient({
      api: "integration",
      baseUrl: server.url,
      retry: { limit: 0 },
    });
    const current = await client.current();
    expect(current.releaseNotes).toBe("Renamed on the wire");
    expect(current.extra).toBeUndefined();
    expect((await client.updates()).map((update) => update.releaseNotes)).toEqual(["Next"]);

    // One side alone would not do: the client of the unrenamed schema misses the field.
    const stale = clientOfTheOldSchema({ baseUrl: server.url, retry: { limit: 0 } });
    await expect(stale.current()).rejects.toThrow(/missing release_notes/);
  });
});
