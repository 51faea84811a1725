// Attack: stores that fail. A failing store is a 5xx (the identity provider retries), never a
// 404/400/409; a throwing onError changes nothing; a value a store can never hold is a 400, not a
// 503 that the identity provider retries for ever.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler, type ScimUserStore } from "../../../src/scim/index.ts";
import { SqliteUserStore } from "../../../src/stores/sqlite/index.ts";
import { clientOf, patchOp, token } from "./support.ts";

const folders: string[] = [];
const opened: SqliteUserStore[] = [];
afterAll(() => {
  for (const store of opened) store.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function sqlite(onDelete: "delete" | "deactivate" = "delete") {
  const folder = mkdtempSync(join(tmpdir(), "attack42-f-"));
  folders.push(folder);
  const store = new SqliteUserStore(join(folder, "users.db"), { unique: ["username"], onDelete });
  opened.push(store);
  return store;
}

/** A store whose `method` fails (throws synchronously or rejects) while `failing.on` is true. */
function failing(store: ScimUserStore, method: string, how: "throw" | "reject") {
  const state = { on: false };
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (state.on && key === method) {
          const error = new Error(`${method} is down`);
          if (how === "throw") throw error;
          return Promise.reject(error);
        }
        return value.apply(target, args);
      };
    },
  });
  return { store: proxy, state };
}

describe("a failing store answers 5xx", () => {
  const requests: [string, string, string, unknown?][] = [
    ["get", "GET", "/Users/{id}"],
    [
      "get",
      "PATCH",
      "/Users/{id}",
      { schemas: [patchOp], Operations: [{ op: "replace", path: "title", value: "x" }] },
    ],
    ["get", "DELETE", "/Users/{id}"],
    ["get", "GET", '/Users?filter=id eq "{id}"'],
    ["findUsers", "GET", '/Users?filter=userName eq "bob"'],
    ["findUsers", "GET", '/Users?filter=externalId eq "e1"'],
    ["findUsers", "POST", "/Users", { userName: "carl" }],
    ["listPage", "GET", "/Users"],
    ["listPage", "GET", "/Users?startIndex=2&count=1"],
    ["list", "GET", '/Users?filter=title eq "x"'],
    ["replace", "POST", "/Users", { userName: "carl" }],
    ["replace", "PUT", "/Users/{id}", { userName: "bob", title: "t" }],
    ["delete", "DELETE", "/Users/{id}"],
  ];
  for (const how of ["throw", "reject"] as const) {
    it.each(requests)(`store.%s ${how}s: %s %s`, async (method, verb, path, body) => {
      const errors: unknown[] = [];
      const { store, state } = failing(new MemoryUserStore(), method, how);
      const scim = clientOf(
        createScimHandler({
          store,
          token,
          onError: (error) => {
            errors.push(error);
            throw new Error("onError itself fails");
          },
        }),
      );
      const id = (await scim("POST", "/Users", { userName: "bob", externalId: "e1" })).body.id;
      state.on = true;
      const answer = await scim(
        verb,
        path.replace("{id}", id).replace(/ /g, "%20").replace(/"/g, "%22"),
        body,
      );
      expect(answer.status, JSON.stringify(answer.body)).toBeGreaterThanOrEqual(500);
      expect(answer.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
      expect(errors).toHaveLength(1);
    });
  }
});

// M4: a DELETE of an inactive user is two store steps where the store keeps deactivated rows (its
// delete leaves such a user as it is, so SCIM marks it deleted). A step that fails answers 5xx
// and leaves a user SCIM still reads, so the identity provider's retry finishes the delete; one
// answered 204 removed the user for good.
describe("DELETE of an inactive user whose store fails midway", () => {
  const stores = [
    ["MemoryUserStore", (onDelete: "delete" | "deactivate") => new MemoryUserStore({ onDelete })],
    ["SqliteUserStore", sqlite],
  ] as const;
  const cases = [
    ["delete", "delete"],
    ["delete", "deactivate"],
    ["replace", "deactivate"],
  ] as const;
  describe.each(stores)("%s", (_name, open) => {
    it.each(cases)(
      "store.%s fails, onDelete %s: 503, and the retried DELETE removes",
      async (method, onDelete) => {
        const inner = open(onDelete);
        const { store, state } = failing(inner, method, "reject");
        const scim = clientOf(createScimHandler({ store, token, onError: () => {} }));
        const id = (await scim("POST", "/Users", { userName: "bob", active: false })).body.id;
        state.on = true;
        expect((await scim("DELETE", `/Users/${id}`)).status).toBe(503);
        state.on = false;
        const before = await scim("GET", `/Users/${id}`);
        expect([before.status, before.body?.active], "the user a failed DELETE leaves").toEqual([
          200,
          false,
        ]);
        expect((await scim("DELETE", `/Users/${id}`)).status, "the retried DELETE").toBe(204);
        expect((await scim("GET", `/Users/${id}`)).status).toBe(404);
        const row = await inner.get(id);
        if (onDelete === "delete") expect(row, "the row after the retried DELETE").toBeUndefined();
        else expect(row?.deactivatedAt, "the row kept, deactivated").toEqual(expect.any(String));
      },
    );
  });
});

describe("values SQLite cannot hold", () => {
  it.each([
    ["userName", { userName: "bo\u0000b" }],
    ["displayName", { userName: "bob", displayName: "B\u0000" }],
    ["the primary email", { userName: "bob", emails: [{ value: "b\u0000@x.io", primary: true }] }],
  ])("U+0000 in %s answers 400 invalidValue, not 503", async (_name, body) => {
    const scim = clientOf(createScimHandler({ store: sqlite(), token, onError: () => {} }));
    const answer = await scim("POST", "/Users", body);
    expect([answer.status, answer.body.scimType], JSON.stringify(answer.body)).toEqual([
      400,
      "invalidValue",
    ]);
  });

  it("a lone surrogate is refused or stored as sent, never changed silently", async () => {
    const store = sqlite();
    const scim = clientOf(createScimHandler({ store, token, onError: () => {} }));
    const created = await scim("POST", "/Users", { userName: "bob", displayName: "x\ud800y" });
    if (created.status === 201) {
      const back = await scim("GET", `/Users/${created.body.id}`);
      expect(back.body.displayName).toBe("x\ud800y");
    } else expect(created.status).toBe(400);
  });
});

describe("authenticate failing", () => {
  it("an authenticate that throws is not reported as a store failure", async () => {
    const contexts: unknown[] = [];
    const handler = createScimHandler({
      store: new MemoryUserStore(),
      authenticate: () => {
        throw new Error("the OAuth introspection endpoint is down");
      },
      onError: (_error, context) => contexts.push(context),
    });
    const answer = await clientOf(handler)("GET", "/Users");
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect(answer.body.detail, "detail names the failing part").not.toMatch(/user store/i);
    expect(answer.status, "the SDK's side failed, not the store").toBe(500);
    expect(contexts).toEqual([{ method: "GET", path: "/Users", status: 500 }]);
  });
});
