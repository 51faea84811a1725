import { describe, expect, it, vi } from "vitest";
import { MemoryUserStore, type UserRecord } from "../../src/provisioning/index.ts";
import { bearerToken, createScimHandler, ScimError, scimExtraKey } from "../../src/scim/index.ts";
import { enterprise, entraUser, errorSchema, patchOp, scim, setup, token } from "./helpers.ts";

describe("construction", () => {
  it("refuses to build an open server", () => {
    const store = new MemoryUserStore();
    expect(() => createScimHandler({ store } as never)).toThrow(/token.*authenticate/);
    expect(() => createScimHandler({ store, token: "" })).toThrow(TypeError);
    expect(() => createScimHandler({ store, token: "t", authenticate: () => true })).toThrow(
      /not both/,
    );
  });
});

describe("authentication", () => {
  it("answers 401 in the SCIM error form without the right bearer token", async () => {
    const { handler } = setup();
    for (const authorization of ["non-token", "Bearer wrong", `Basic ${token}`, ""]) {
      const answer = await scim(handler, "GET", "/scim/v2/Users", undefined, { authorization });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ schemas: [errorSchema], status: "401" });
      expect(answer.body.detail).toEqual(expect.any(String));
      expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
    const ok = await scim(handler, "GET", "/scim/v2/Users", undefined, {
      authorization: `bearer ${token}`,
    });
    expect(ok.status).toBe(200);
  });

  it("takes an authenticate function instead", async () => {
    const authenticate = vi.fn((request) => request.headers["x-tenant"] === "a");
    const handler = createScimHandler({ store: new MemoryUserStore(), authenticate });
    expect(
      (await scim(handler, "GET", "/scim/v2/Users", undefined, { "x-tenant": "a" })).status,
    ).toBe(200);
    expect(
      (await scim(handler, "GET", "/scim/v2/Users", undefined, { "x-tenant": "b" })).status,
    ).toBe(401);
  });
});

describe("exports", () => {
  it("lets authenticate (or a store) choose the answer by throwing a ScimError", async () => {
    const authenticate = () => {
      throw new ScimError(403, "This tenant is suspended");
    };
    const handler = createScimHandler({ store: new MemoryUserStore(), authenticate });
    const answer = await scim(handler, "GET", "/scim/v2/Users");
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({
      schemas: [errorSchema],
      status: "403",
      detail: "This tenant is suspended",
    });
  });

  it("keeps the SCIM resource under extra[scimExtraKey]", async () => {
    const { handler, store } = setup();
    const user = (await scim(handler, "POST", "/scim/v2/Users", entraUser("kept", "Ext-9"))).body;
    const stored = await store.get(user.id);
    expect(stored?.extra?.[scimExtraKey]).toMatchObject({ externalId: "Ext-9", userName: "kept" });
  });

  it("bearerToken compares the whole token", async () => {
    const secret = "abcdefghijklmnop";
    const check = bearerToken(secret);
    const request = (authorization?: string) => ({
      method: "GET",
      path: "/",
      headers: { authorization },
    });
    expect(await check(request(`Bearer ${secret}`))).toBe(true);
    expect(await check(request(`Bearer ${secret}q`))).toBe(false);
    expect(await check(request(`Bearer ${secret.slice(0, -1)}`))).toBe(false);
    expect(await check(request())).toBe(false);
    // On Node the digests are taken at once (node:crypto), not through Web Crypto's thread pool,
    // which cost more than the request itself (bench/README.md, scim.bench.ts).
    expect(check(request(`Bearer ${secret}`))).toBe(true);
    expect(check(request(`Bearer ${secret.slice(0, -1)}q`))).toBe(false);
  });

  it("bearerToken refuses a token shorter than 16 characters, naming its length only", () => {
    expect(() => bearerToken("a".repeat(16))).not.toThrow();
    for (const weak of ["Zq", "1234", "secret", "fifteen-chars-X"]) {
      let message = "";
      try {
        bearerToken(weak);
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
        message = (error as Error).message;
      }
      expect(message).toContain(`${weak.length} characters`);
      expect(message).toContain("openssl rand -hex 32");
      expect(message).not.toContain(weak);
    }
  });

  it("lets a request in only when authenticate answers true", async () => {
    for (const verdict of [true, false, "true", 1, {}, [], Promise.resolve("yes")]) {
      const handler = createScimHandler({
        store: new MemoryUserStore(),
        authenticate: (() => verdict) as never,
      });
      const status = (await scim(handler, "GET", "/scim/v2/Users")).status;
      expect([verdict, status]).toEqual([verdict, verdict === true ? 200 : 401]);
    }
  });
});

describe("routes", () => {
  it("serves discovery truthfully, and answers 501 for Groups, Bulk, /Me and .search", async () => {
    const { handler } = setup();
    const config = (await scim(handler, "GET", "/scim/v2/ServiceProviderConfig")).body;
    expect(config).toMatchObject({
      patch: { supported: true },
      bulk: { supported: false },
      filter: { supported: true, maxResults: 200 },
      etag: { supported: true },
      sort: { supported: false },
    });
    const types = (await scim(handler, "GET", "/scim/v2/ResourceTypes")).body;
    expect(types.Resources.map((type: { id: string }) => type.id)).toEqual(["User"]);
    const schemas = (await scim(handler, "GET", "/scim/v2/Schemas")).body;
    expect(schemas.totalResults).toBe(2);
    expect((await scim(handler, "GET", `/scim/v2/Schemas/${enterprise}`)).body.id).toBe(enterprise);
    for (const [method, path] of [
      ["GET", "/Groups"],
      ["POST", "/Groups"],
      ["POST", "/Bulk"],
      ["GET", "/Me"],
      ["POST", "/Users/.search"],
      ["POST", "/.search"],
    ]) {
      const answer = await scim(
        handler,
        method as string,
        `/scim/v2${path}`,
        method === "POST" ? {} : undefined,
      );
      expect(answer.status, `${method} ${path}`).toBe(501);
      expect(answer.body.schemas).toEqual([errorSchema]);
    }
    expect((await scim(handler, "GET", "/scim/v2/Nothing")).status).toBe(404);
    expect((await scim(handler, "POST", "/scim/v2/.search/more", {})).status).toBe(404);
    expect((await scim(handler, "DELETE", "/scim/v2/Users")).status).toBe(405);
  });
});

describe("Users", () => {
  it("creates with 201 and Location, reads back, keeps externalId and answers scim+json", async () => {
    const { handler, store } = setup();
    const created = await scim(
      handler,
      "POST",
      "/scim/v2/Users",
      entraUser("ryan@contoso.com", "Ext-ID-1"),
    );
    expect(created.status).toBe(201);
    expect(created.headers.get("content-type")).toMatch(/^application\/scim\+json/);
    const id = created.body.id;
    expect(created.headers.get("location")).toBe(`/scim/v2/Users/${id}`);
    expect(created.body).toMatchObject({
      id,
      userName: "ryan@contoso.com",
      externalId: "Ext-ID-1",
      active: true,
      meta: { resourceType: "User", location: `/scim/v2/Users/${id}` },
    });
    expect(created.body.meta.version).toMatch(/^W\/"/);
    expect(created.headers.get("etag")).toBe(created.body.meta.version);
    const stored = await store.get(id);
    expect(stored).toMatchObject({
      uuid: id,
      username: "ryan@contoso.com",
      firstName: "Ryan",
      lastName: "Leenay",
      fullName: "Ryan Leenay",
      email: "ryan@contoso.com@example.com",
    });
    const read = await scim(handler, "GET", `/scim/v2/Users/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it("answers 409 uniqueness for a taken userName, in any case", async () => {
    const { handler } = setup();
    expect((await scim(handler, "POST", "/scim/v2/Users", entraUser("alice"))).status).toBe(201);
    const again = await scim(handler, "POST", "/scim/v2/Users", entraUser("ALICE", "other"));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      schemas: [errorSchema],
      status: "409",
      scimType: "uniqueness",
    });
  });

  it("answers 409 uniqueness for a unique field the store refuses", async () => {
    const { handler } = setup({}, { unique: ["email"] });
    expect((await scim(handler, "POST", "/scim/v2/Users", entraUser("a"))).status).toBe(201);
    const taken = { ...entraUser("b"), emails: [{ value: "A@example.com", primary: true }] };
    const answer = await scim(handler, "POST", "/scim/v2/Users", taken);
    expect(answer.status).toBe(409);
    expect(answer.body.scimType).toBe("uniqueness");
  });

  it("filters by userName (without case), externalId (exactly), id and work email, with and", async () => {
    const { handler } = setup();
    const alice = (await scim(handler, "POST", "/scim/v2/Users", entraUser("alice", "X1"))).body;
    await scim(handler, "POST", "/scim/v2/Users", entraUser("bob", "X2"));
    const find = async (filter: string) => {
      const answer = await scim(
        handler,
        "GET",
        `/scim/v2/Users?filter=${encodeURIComponent(filter)}`,
      );
      expect(answer.status).toBe(200);
      return answer.body.Resources?.map((user: { userName: string }) => user.userName) ?? [];
    };
    expect(await find('userName eq "ALICE"')).toEqual(["alice"]);
    expect(await find('externalId eq "X1"')).toEqual(["alice"]);
    expect(await find('externalId eq "x1"')).toEqual([]);
    expect(await find(`id eq "${alice.id}"`)).toEqual(["alice"]);
    expect(await find('emails[type eq "work"].value eq "bob@example.com"')).toEqual(["bob"]);
    expect(await find('userName eq "alice" and externalId eq "X2"')).toEqual([]);
    expect(await find('userName eq "alice" or externalId eq "X2"')).toEqual(["alice", "bob"]);
    const empty = await scim(
      handler,
      "GET",
      `/scim/v2/Users?filter=${encodeURIComponent('userName eq "00000000-0000"')}`,
    );
    expect(empty.body).toEqual({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });
  });

  it("answers 400 invalidFilter for a bad filter", async () => {
    const { handler } = setup();
    for (const filter of ["userName eq", 'userName xx "a"', '(userName eq "a"', "x".repeat(5000)]) {
      const answer = await scim(
        handler,
        "GET",
        `/scim/v2/Users?filter=${encodeURIComponent(filter)}`,
      );
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ status: "400", scimType: "invalidFilter" });
    }
  });

  it("pages with startIndex and count, in a stable order, numbers as numbers", async () => {
    const { handler } = setup();
    for (const name of ["a", "b", "c", "d", "e"])
      await scim(handler, "POST", "/scim/v2/Users", entraUser(name));
    const page = await scim(handler, "GET", "/scim/v2/Users?startIndex=2&count=2");
    expect(page.body).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect(page.body.Resources.map((user: { userName: string }) => user.userName)).toEqual([
      "b",
      "c",
    ]);
    const none = await scim(handler, "GET", "/scim/v2/Users?count=0");
    expect(none.body).toMatchObject({ totalResults: 5, itemsPerPage: 0 });
    const below = await scim(handler, "GET", "/scim/v2/Users?startIndex=0&count=-3");
    expect(below.body).toMatchObject({ startIndex: 1, itemsPerPage: 0 });
    const capped = setup({ maxResults: 2 });
    for (const name of ["a", "b", "c"])
      await scim(capped.handler, "POST", "/scim/v2/Users", entraUser(name));
    expect((await scim(capped.handler, "GET", "/scim/v2/Users?count=100")).body.itemsPerPage).toBe(
      2,
    );
  });

  it("pages through the store: one page read, never every user, inactive users in, deleted out", async () => {
    const { handler, store } = setup({}, { onDelete: "deactivate" });
    const ids: string[] = [];
    for (const name of ["a", "b", "c", "d"]) {
      ids.push((await scim(handler, "POST", "/scim/v2/Users", entraUser(name))).body.id);
    }
    const inactive = {
      schemas: [patchOp],
      Operations: [{ op: "replace", path: "active", value: false }],
    };
    await scim(handler, "PATCH", `/scim/v2/Users/${ids[1]}`, inactive);
    // Deleted through the Provisioning API: the store keeps the row, deactivated; SCIM reads 404.
    await store.delete(ids[2] as string);
    const pages: unknown[] = [];
    const listPage = store.listPage.bind(store);
    store.listPage = (options) => {
      pages.push(options);
      return listPage(options);
    };
    store.list = () => Promise.reject(new Error("GET /Users read every user"));
    const page = await scim(handler, "GET", "/scim/v2/Users?startIndex=2&count=2");
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 2 });
    expect(page.body.Resources.map((user: { userName: string }) => user.userName)).toEqual([
      "b",
      "d",
    ]);
    expect(page.body.Resources[0]).toMatchObject({ active: false });
    expect(pages).toEqual([
      {
        offset: 1,
        limit: 2,
        includeDeactivated: { extra: [scimExtraKey, "active"], value: false },
      },
    ]);
    const total = await scim(handler, "GET", "/scim/v2/Users?count=0");
    expect(total.body).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] });
  });

  it("returns only the attributes asked, never fewer than id", async () => {
    const { handler } = setup();
    await scim(handler, "POST", "/scim/v2/Users", entraUser("alice"));
    const some = await scim(handler, "GET", "/scim/v2/Users?attributes=userName,name.givenName");
    expect(Object.keys(some.body.Resources[0]).sort()).toEqual([
      "id",
      "name",
      "schemas",
      "userName",
    ]);
    expect(some.body.Resources[0].name).toEqual({ givenName: "Ryan" });
    const less = await scim(handler, "GET", "/scim/v2/Users?excludedAttributes=emails,id,name");
    expect(less.body.Resources[0].id).toEqual(expect.any(String));
    expect(less.body.Resources[0].emails).toBeUndefined();
    expect(less.body.Resources[0].name).toBeUndefined();
  });

  it("answers 404 for an unknown id, in the SCIM error form", async () => {
    const { handler } = setup();
    const answer = await scim(handler, "GET", "/scim/v2/Users/00919288221112222");
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({
      schemas: [errorSchema],
      status: "404",
      detail: expect.any(String),
    });
  });
});

describe("PATCH", () => {
  async function created(options: Parameters<typeof setup>[1] = {}) {
    const context = setup({}, options);
    const user = (await scim(context.handler, "POST", "/scim/v2/Users", entraUser("ryan"))).body;
    const patch = (...Operations: unknown[]) =>
      scim(context.handler, "PATCH", `/scim/v2/Users/${user.id}`, {
        schemas: [patchOp],
        Operations,
      });
    return { ...context, user, patch };
  }

  it("reads Entra's capitalised ops, value paths and string booleans", async () => {
    const { patch, store, user } = await created();
    const answer = await patch(
      { op: "Replace", path: 'emails[type eq "work"].value', value: "new@example.com" },
      { op: "Replace", path: "name.familyName", value: "Smith" },
      { op: "Add", path: `${enterprise}:manager`, value: [{ $ref: null, value: "boss-id" }] },
      { op: "Replace", path: "active", value: "False" },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      active: false,
      name: { familyName: "Smith", givenName: "Ryan" },
      emails: [{ value: "new@example.com", type: "work", primary: true }],
      [enterprise]: { manager: { value: "boss-id" } },
    });
    expect(answer.body.schemas).toContain(enterprise);
    expect(await store.get(user.id)).toMatchObject({ email: "new@example.com", lastName: "Smith" });
  });

  it("reads a replace without path whose keys are paths (Entra's aadOptscim062020)", async () => {
    const { patch } = await created();
    const answer = await patch({
      op: "replace",
      value: { "name.givenName": "Ry", [`${enterprise}:employeeNumber`]: "42", active: false },
    });
    expect(answer.body).toMatchObject({
      name: { givenName: "Ry" },
      active: false,
      [enterprise]: { employeeNumber: "42" },
    });
  });

  it("keeps a deactivated user readable and inactive through a later PATCH; reactivates on active true", async () => {
    const { patch, handler, user } = await created();
    await patch({ op: "replace", value: { active: false } });
    await patch({ op: "replace", path: "displayName", value: "Ryan L." });
    const read = await scim(handler, "GET", `/scim/v2/Users/${user.id}`);
    expect(read.body).toMatchObject({
      active: false,
      displayName: "Ryan L.",
      externalId: user.externalId,
    });
    expect(
      (await scim(handler, "GET", "/scim/v2/Users?filter=userName%20eq%20%22ryan%22")).body
        .totalResults,
    ).toBe(1);
    await patch({ op: "replace", path: "active", value: true });
    expect((await scim(handler, "GET", `/scim/v2/Users/${user.id}`)).body.active).toBe(true);
  });

  it("applies operations atomically: one failing leaves the user unchanged", async () => {
    const { patch, handler, user } = await created();
    const answer = await patch(
      { op: "replace", path: "displayName", value: "Changed" },
      { op: "replace", path: "nonsense", value: 1 },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.scimType).toBe("invalidPath");
    expect((await scim(handler, "GET", `/scim/v2/Users/${user.id}`)).body).toEqual(user);
  });

  it("honours no prototype key", async () => {
    const { patch, handler, user } = await created();
    const custom = "urn:ietf:params:scim:schemas:extension:custom:2.0:User";
    for (const path of [
      "__proto__",
      "constructor",
      "name.__proto__",
      'emails[type eq "work"].__proto__',
      `${custom}:constructor`,
      `${custom}:prototype`,
    ]) {
      const answer = await patch({ op: "add", path, value: { polluted: true } });
      expect(answer.status).toBe(400);
    }
    await patch({ op: "add", value: JSON.parse('{"__proto__":{"polluted":true},"title":"x"}') });
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    const read = (await scim(handler, "GET", `/scim/v2/Users/${user.id}`)).body;
    expect(read.title).toBe("x");
    expect(Object.hasOwn(read, "__proto__")).toBe(false);
  });

  it("answers 400 noTarget for remove without path, invalidSyntax for a bad op", async () => {
    const { patch } = await created();
    expect((await patch({ op: "remove" })).body.scimType).toBe("noTarget");
    expect((await patch({ op: "move", path: "title" })).body.scimType).toBe("invalidSyntax");
  });
});

describe("DELETE", () => {
  it("answers 204, then 404 for the id, also where the store keeps the row", async () => {
    for (const onDelete of ["delete", "deactivate"] as const) {
      const { handler, store } = setup({}, { onDelete });
      const user = (await scim(handler, "POST", "/scim/v2/Users", entraUser("gone"))).body;
      expect((await scim(handler, "DELETE", `/scim/v2/Users/${user.id}`)).status).toBe(204);
      expect((await scim(handler, "GET", `/scim/v2/Users/${user.id}`)).status).toBe(404);
      expect((await scim(handler, "DELETE", `/scim/v2/Users/${user.id}`)).status).toBe(404);
      expect((await scim(handler, "GET", "/scim/v2/Users")).body.totalResults).toBe(0);
      expect((await store.get(user.id)) === undefined).toBe(onDelete === "delete");
    }
  });
});

describe("active and the store's deactivation", () => {
  it("deactivates the stored user on active false, so the application sees it; true reactivates", async () => {
    const { handler, store } = setup({}, { unique: ["username"] });
    const user = (await scim(handler, "POST", "/scim/v2/Users", entraUser("dee"))).body;
    const off = { schemas: [patchOp], Operations: [{ op: "replace", value: { active: false } }] };
    await scim(handler, "PATCH", `/scim/v2/Users/${user.id}`, off);
    expect((await store.get(user.id))?.deactivatedAt).toEqual(expect.any(String));
    expect(await store.list()).toEqual([]);
    expect((await store.get(user.id))?.username).toBe("dee");
    const on = {
      schemas: [patchOp],
      Operations: [{ op: "replace", path: "active", value: "True" }],
    };
    await scim(handler, "PATCH", `/scim/v2/Users/${user.id}`, on);
    expect((await store.get(user.id))?.deactivatedAt).toBeUndefined();
    expect((await store.list()).map((stored) => stored.username)).toEqual(["dee"]);
  });

  it("keeps an inactive user's userName from a new user", async () => {
    const { handler } = setup();
    const user = (
      await scim(handler, "POST", "/scim/v2/Users", { ...entraUser("kept"), active: false })
    ).body;
    expect(user.active).toBe(false);
    expect((await scim(handler, "POST", "/scim/v2/Users", entraUser("KEPT"))).status).toBe(409);
  });

  it("deletes an inactive user: 404 after, whatever the store does with deleted rows", async () => {
    for (const onDelete of ["delete", "deactivate"] as const) {
      const { handler, store } = setup({}, { onDelete });
      const user = (
        await scim(handler, "POST", "/scim/v2/Users", { ...entraUser("x"), active: "False" })
      ).body;
      expect((await scim(handler, "DELETE", `/scim/v2/Users/${user.id}`)).status).toBe(204);
      expect((await scim(handler, "GET", `/scim/v2/Users/${user.id}`)).status).toBe(404);
      expect(
        (await scim(handler, "GET", "/scim/v2/Users?filter=userName%20eq%20%22x%22")).body
          .totalResults,
      ).toBe(0);
      expect((await store.get(user.id)) === undefined).toBe(onDelete === "delete");
      // The name is free again.
      expect((await scim(handler, "POST", "/scim/v2/Users", entraUser("x"))).status).toBe(201);
    }
  });

  it("refuses a store without replace at construction", () => {
    const store = {
      upsert: async () => ({}),
      delete: async () => ({}),
      get: async () => undefined,
      list: async () => [],
      count: async () => 0,
    };
    expect(() => createScimHandler({ store: store as never, token })).toThrow(/replace/);
  });
});

describe("huge bodies", () => {
  it("answers 413 past bodyLimit, at the Web edge and in the core", async () => {
    const { handler, store } = setup({ bodyLimit: 200 });
    const big = { ...entraUser("big"), title: "x".repeat(500) };
    expect((await scim(handler, "POST", "/scim/v2/Users", big)).status).toBe(413);
    const answer = await handler.handle({
      method: "POST",
      path: "/scim/v2/Users",
      headers: { authorization: `Bearer ${token}` },
      body: new TextEncoder().encode(JSON.stringify(big)),
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body as string)).toMatchObject({ status: "413" });
    expect(await store.list()).toEqual([]);
  });
});

describe("a failing store", () => {
  it("answers 503, never 404 or 400", async () => {
    const store = new MemoryUserStore();
    const onError = vi.fn();
    const handler = createScimHandler({ store, token, onError });
    store.get = () => Promise.reject(new Error("connection refused"));
    store.list = () => Promise.reject(new Error("connection refused"));
    store.listPage = () => Promise.reject(new Error("connection refused"));
    expect((await scim(handler, "GET", "/scim/v2/Users/x")).status).toBe(503);
    expect((await scim(handler, "GET", "/scim/v2/Users")).status).toBe(503);
    const filtered = `/scim/v2/Users?filter=${encodeURIComponent('title eq "x"')}`;
    expect((await scim(handler, "GET", filtered)).status).toBe(503);
    expect(onError).toHaveBeenCalledTimes(3);
  });
});

describe("another replica writing the same user", () => {
  async function created(handler: ReturnType<typeof setup>["handler"]) {
    const answer = await scim(handler, "POST", "/scim/v2/Users", entraUser("ann"));
    return (answer.body as { id: string }).id;
  }
  const title = (value: string) => ({
    schemas: [patchOp],
    Operations: [{ op: "replace", path: "title", value }],
  });

  it("re-reads and re-applies a PATCH when the user changed between its read and its write", async () => {
    const { store, handler } = setup();
    const id = await created(handler);
    const get = store.get.bind(store);
    let reads = 0;
    // The other replica's acknowledged write lands right after this replica's first read.
    store.get = async (uuid) => {
      const user = await get(uuid);
      if (++reads === 1 && user !== undefined) await store.replace({ ...user, firstName: "Other" });
      return user;
    };
    const answer = await scim(handler, "PATCH", `/scim/v2/Users/${id}`, title("Boss"));
    expect(answer.status).toBe(200);
    expect(reads).toBe(2);
    expect(answer.body).toMatchObject({
      title: "Boss",
      name: { givenName: "Other" },
    });
    expect((await get(id))?.firstName).toBe("Other");
  });

  it("reads a stored user without changing it: the conditional write still finds it as read", async () => {
    // A user written by an older version (a password under extra.scim) or another writer: serving
    // it drops `meta` and the password from the resource, which must not reach the record read,
    // the `expected` of the conditional write (else every PATCH would miss and end in 503).
    const { store, handler } = setup();
    const id = await created(handler);
    const stored = (await store.get(id)) as UserRecord;
    const kept = stored.extra?.[scimExtraKey] as Record<string, unknown>;
    await store.replace({ ...stored, extra: { [scimExtraKey]: { ...kept, password: "old" } } });
    const ifMatch = (await scim(handler, "GET", `/scim/v2/Users/${id}`)).headers.get("etag");
    const answer = await scim(handler, "PATCH", `/scim/v2/Users/${id}`, title("Boss"), {
      "if-match": ifMatch as string,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.title).toBe("Boss");
    expect(answer.body.password).toBeUndefined();
    expect(answer.headers.get("etag")).toBe(answer.body.meta.version);
  });

  it("answers 503 after 8 attempts when the user changes under every one", async () => {
    const onError = vi.fn();
    const { store, handler } = setup({ onError });
    const id = await created(handler);
    const get = store.get.bind(store);
    let reads = 0;
    store.get = async (uuid) => {
      const user = await get(uuid);
      if (user !== undefined) await store.replace({ ...user, firstName: `Other ${++reads}` });
      return user;
    };
    const answer = await scim(handler, "PUT", `/scim/v2/Users/${id}`, entraUser("ann"));
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ status: "503" });
    expect(reads).toBe(8);
    expect((await get(id))?.firstName).toBe("Other 8");
  });
});

describe("a Provisioning API delete of a user SCIM deactivated (docs/scim.md, both protocols)", () => {
  for (const onDelete of ["deactivate", "delete"] as const) {
    it(`with onDelete: ${onDelete}, ${onDelete === "delete" ? "removes it" : "leaves it inactive, with its attributes"}`, async () => {
      const { store, handler } = setup({}, { onDelete });
      const id = (await scim(handler, "POST", "/scim/v2/Users", entraUser("ann", "Ext-1"))).body.id;
      const off = {
        schemas: [patchOp],
        Operations: [{ op: "replace", path: "active", value: false }],
      };
      expect((await scim(handler, "PATCH", `/scim/v2/Users/${id}`, off)).status).toBe(200);
      await store.delete(id);
      const answer = await scim(handler, "GET", `/scim/v2/Users/${id}`);
      if (onDelete === "delete") expect(answer.status).toBe(404);
      else expect(answer.body).toMatchObject({ active: false, externalId: "Ext-1" });
    });
  }
});
