// Attack: an operator following docs/scim.md and the README literally, and the documents'
// claims checked against what the code does.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createProvisioningHandler, MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { SqliteUserStore } from "../../../src/stores/sqlite/index.ts";
import { clientOf, token } from "./support.ts";

const folders: string[] = [];
const opened: SqliteUserStore[] = [];
afterAll(() => {
  for (const store of opened) store.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function docsSetup(onDelete: "delete" | "deactivate" = "delete") {
  // docs/scim.md's first snippet, as written (the file in a fresh folder).
  const folder = mkdtempSync(join(tmpdir(), "attack42-docs-"));
  folders.push(folder);
  const store = new SqliteUserStore(join(folder, "users.db"), {
    unique: ["username", "email"],
    onDelete,
  });
  opened.push(store);
  const provisioning = createProvisioningHandler({ store, basePath: "/ldap/auth" });
  const scim = createScimHandler({ store, token });
  const platform = (method: string, path: string, body?: unknown) =>
    provisioning.fetch(
      new Request(`http://127.0.0.1/ldap/auth${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
  return { store, scim: clientOf(scim), platform };
}

describe("docs/scim.md", () => {
  it("the snippet runs, and both protocols answer", async () => {
    const { scim, platform } = docsSetup();
    expect((await scim("GET", "/ServiceProviderConfig")).status).toBe(200);
    expect((await platform("GET", "/v1/ping")).status).toBe(204);
  });

  // L1: the docs said the delete "changes nothing", which is false with the snippet's store
  // (onDelete: "delete" removes the row); they now say what each onDelete does.
  it.each([
    ["delete", [404, undefined]],
    ["deactivate", [200, false]],
  ] as const)(
    "a Provisioning API delete of a user SCIM deactivated, onDelete %s, as docs/scim.md says",
    async (onDelete, expected) => {
      const { scim, platform } = docsSetup(onDelete);
      const id = (await scim("POST", "/Users", { userName: "ina", active: false })).body.id;
      expect((await platform("DELETE", `/v1/user/${id}`)).status).toBe(204);
      const after = await scim("GET", `/Users/${id}`);
      expect([after.status, after.body?.active]).toEqual(expected);
      const docs = readFileSync(new URL("../../../docs/scim.md", import.meta.url), "utf8");
      const section = docs
        .slice(docs.indexOf("### Both protocols on one store"))
        .replace(/\s+/g, " ");
      expect(section).toContain(
        onDelete === "delete"
          ? "SCIM answers 404 for it from then on"
          : "SCIM still reads it with `active: false`",
      );
      expect(section).not.toMatch(/delete of a user SCIM deactivated changes nothing/);
    },
  );

  it('"A body over bodyLimit answers 413" in the SCIM error form ("Every error is {schemas: [...Error]...}")', async () => {
    const handler = createScimHandler({ store: new MemoryUserStore(), token, bodyLimit: 100 });
    const answer = await clientOf(handler)("POST", "/Users", { userName: "x".repeat(500) });
    expect(answer.status).toBe(413);
    expect(answer.headers.get("content-type")).toMatch(/^application\/scim\+json/);
    expect(answer.body).toMatchObject({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
      status: "413",
    });
    expect(JSON.stringify(answer.body)).not.toContain("Provisioning API");
  });
});

describe("README", () => {
  it("the SCIM snippet runs and answers 200", async () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
    expect(readme).toContain(
      'createScimHandler({ store: new MemoryUserStore(), token: "a-long-random-token" })',
    );
    const scim = createScimHandler({ store: new MemoryUserStore(), token: "a-long-random-token" });
    const response = await scim.fetch(
      new Request("http://localhost/scim/v2/Users", {
        headers: { authorization: "Bearer a-long-random-token" },
      }),
    );
    expect(response.status).toBe(200);
  });
});

describe("discovery tells the truth", () => {
  it("etag.supported: If-Match is honoured (see scim-races for replicas)", async () => {
    const scim = clientOf(createScimHandler({ store: new MemoryUserStore(), token }));
    const config = (await scim("GET", "/ServiceProviderConfig")).body;
    expect(config).toMatchObject({
      bulk: { supported: false },
      sort: { supported: false },
      changePassword: { supported: false },
      patch: { supported: true },
      filter: { supported: true },
    });
    const created = await scim("POST", "/Users", { userName: "e" });
    const stale = await scim(
      "PUT",
      `/Users/${created.body.id}`,
      { userName: "e", title: "t" },
      { "if-match": 'W/"nope"' },
    );
    expect(stale.status).toBe(412);
  });

  it("/Groups answers 501 and /ResourceTypes lists no Group", async () => {
    const scim = clientOf(createScimHandler({ store: new MemoryUserStore(), token }));
    expect((await scim("GET", "/Groups")).status).toBe(501);
    const types = (await scim("GET", "/ResourceTypes")).body.Resources.map(
      (t: { id: string }) => t.id,
    );
    expect(types).toEqual(["User"]);
  });

  it("the User schema says password is writeOnly and never returned, and the server keeps to it", async () => {
    const scim = clientOf(createScimHandler({ store: new MemoryUserStore(), token }));
    const schema = (await scim("GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User")).body;
    const password = schema.attributes.find((a: { name: string }) => a.name === "password");
    expect(password).toMatchObject({ mutability: "writeOnly", returned: "never" });
    // scim-patch.test.ts shows a PATCHed password returned by every GET.
  });
});
