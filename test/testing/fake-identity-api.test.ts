import { describe, expect, it, vi } from "vitest";
import {
  createFakeIntegrationApi,
  type FakeIdentityInit,
  fakeIdentityDefaults,
} from "../../src/testing/index.ts";

const base = "http://platform.test";
const east = { hostname: "ldap.east.test", baseDn: "dc=east,dc=test" };
const west = { hostname: "ldap.west.test", baseDn: "dc=west,dc=test" };

const login = (body: unknown, query = "") =>
  new Request(`${base}/identity/v1/login${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const get = (path: string) => new Request(`${base}${path}`);
const query = ({ hostname, baseDn }: typeof east) =>
  `?${new URLSearchParams({ hostname, base_dn: baseDn })}`;

describe("fake Identity API", () => {
  it("logs in the default user with the documented PascalCase body, never the password", async () => {
    const api = createFakeIntegrationApi();
    const { username, password } = fakeIdentityDefaults.user;
    const response = await api.respond(login({ username, password }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const body = await response.text();
    expect(JSON.parse(body)).toEqual({
      DN: "uid=bob,ou=people,dc=example,dc=com",
      Username: "bob",
      Attributes: {
        givenname: ["Bob"],
        sn: ["Smith"],
        cn: ["Bob Smith"],
        mail: ["bob@example.com"],
      },
      Groups: [
        {
          DN: "cn=users,ou=groups,dc=example,dc=com",
          ID: "501",
          Name: "users",
          Attributes: { cn: ["users"] },
        },
      ],
    });
    expect(body).not.toContain(password);
  });

  it("answers 401 for a wrong or empty password and an unknown user, and records each login", async () => {
    const onLogin = vi.fn();
    const api = createFakeIntegrationApi({ onLogin });
    for (const credentials of [
      { username: "bob", password: "wrong" },
      { username: "bob", password: "" },
      { username: "nobody", password: "password123" },
    ]) {
      expect((await api.respond(login(credentials))).status).toBe(401);
    }
    expect((await api.respond(login({ username: "BOB", password: "password123" }))).status).toBe(
      200,
    );
    expect(api.identity.loginAttempts).toEqual([
      { username: "bob", authenticated: false },
      { username: "bob", authenticated: false },
      { username: "nobody", authenticated: false },
      { username: "BOB", authenticated: true },
    ]);
    expect(onLogin).toHaveBeenCalledTimes(4);
    expect(JSON.stringify(api.identity.loginAttempts)).not.toContain("password");
  });

  it("answers 400 for a body that is not { username, password }", async () => {
    const api = createFakeIntegrationApi();
    for (const body of ["{", "[]", { username: "bob" }, { username: 1, password: "x" }]) {
      expect((await api.respond(login(body))).status, JSON.stringify(body)).toBe(400);
    }
    expect(api.identity.loginAttempts).toEqual([]);
  });

  it("serves user (404 when unknown) and exists (text/plain true or false, never 404)", async () => {
    const api = createFakeIntegrationApi();
    expect(await (await api.respond(get("/identity/v1/user/bob"))).json()).toMatchObject({
      Username: "bob",
    });
    expect((await api.respond(get("/identity/v1/user/nobody"))).status).toBe(404);
    for (const [name, expected] of [
      ["bob", "true"],
      ["nobody", "false"],
    ] as const) {
      const response = await api.respond(get(`/identity/v1/user/${name}/exists`));
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(await response.text()).toBe(expected);
    }
  });

  describe("several sources", () => {
    const directory: FakeIdentityInit = {
      sources: [east, west],
      groups: [{ name: "staff" }, { name: "ops", id: "900", dn: "cn=ops,dc=west,dc=test" }],
      users: [
        { username: "ann", password: "east", groups: ["staff"] },
        { username: "ann", password: "west", source: 1, groups: ["ops"], dn: "cn=Ann" },
      ],
    };

    it("lists the sources in snake_case and picks each by hostname and base_dn", async () => {
      const api = createFakeIntegrationApi({ identity: directory });
      expect(await (await api.respond(get("/identity/v1/sources"))).json()).toEqual({
        sources: [
          { base_dn: "dc=east,dc=test", hostname: "ldap.east.test" },
          { base_dn: "dc=west,dc=test", hostname: "ldap.west.test" },
        ],
      });
      const westLogin = await api.respond(
        login({ username: "ann", password: "west" }, query(west)),
      );
      expect(await westLogin.json()).toMatchObject({
        DN: "cn=Ann",
        Groups: [{ ID: "900", Name: "ops", DN: "cn=ops,dc=west,dc=test" }],
      });
      expect(
        (await api.respond(login({ username: "ann", password: "west" }, query(east)))).status,
      ).toBe(401);
      const eastUser = await api.respond(get(`/identity/v1/user/ann${query(east)}`));
      expect(await eastUser.json()).toMatchObject({
        DN: "uid=ann,ou=people,dc=east,dc=test",
        Groups: [{ ID: "501", DN: "cn=staff,ou=groups,dc=east,dc=test" }],
      });
      expect(api.identity.loginAttempts).toEqual([
        { username: "ann", authenticated: true, source: west },
        { username: "ann", authenticated: false, source: east },
      ]);
    });

    it("answers 400 without a source, or with an unknown one", async () => {
      const api = createFakeIntegrationApi({ identity: directory });
      const missing = await api.respond(login({ username: "ann", password: "east" }));
      expect(missing.status).toBe(400);
      expect(await missing.json()).toMatchObject({ error: "source_required" });
      const unknown = await api.respond(get("/identity/v1/user/ann/exists?hostname=x&base_dn=y"));
      expect(await unknown.json()).toMatchObject({ error: "unknown_source" });
    });
  });

  it("rejects a directory that names a missing group or source, or has no source", () => {
    expect(() =>
      createFakeIntegrationApi({
        identity: { users: [{ username: "a", password: "p", groups: ["x"] }] },
      }),
    ).toThrow("no group x");
    expect(() =>
      createFakeIntegrationApi({
        identity: { users: [{ username: "a", password: "p", source: 1 }] },
      }),
    ).toThrow("no source at position 1");
    expect(() => createFakeIntegrationApi({ identity: { sources: [] } })).toThrow(
      "at least one enabled source",
    );
  });

  it("replaces the directory with set() and restores the initial one with reset()", async () => {
    const api = createFakeIntegrationApi();
    api.identity.set({ users: [{ username: "cy", password: "pw" }], groups: [] });
    expect((await api.respond(login({ username: "cy", password: "pw" }))).status).toBe(200);
    expect((await api.respond(login({ username: "bob", password: "password123" }))).status).toBe(
      401,
    );
    api.reset();
    expect(api.identity.loginAttempts).toEqual([]);
    expect((await api.respond(login({ username: "bob", password: "password123" }))).status).toBe(
      200,
    );
  });

  it("injects failures such as the 401 of a refused search account", async () => {
    const api = createFakeIntegrationApi();
    api.failNext(1, { status: 401 });
    expect((await api.respond(get("/identity/v1/user/bob"))).status).toBe(401);
    expect((await api.respond(get("/identity/v1/user/bob"))).status).toBe(200);
  });
});

describe("fake Status and Console APIs", () => {
  const put = (body: string) =>
    new Request(`${base}/status/v1/startup`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body,
    });

  it("records start-up statuses, answering 204 with an empty text/plain body", async () => {
    const onStartupStatus = vi.fn();
    const api = createFakeIntegrationApi({ onStartupStatus });
    const response = await api.respond(put('{"message":"Syncing users"}'));
    expect(response.status).toBe(204);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(response.headers.get("content-length")).toBe("0");
    await api.respond(put('{"message":"Failed","severity":"error"}'));
    expect(api.console.startupStatuses).toEqual([
      { message: "Syncing users" },
      { message: "Failed", severity: "error" },
    ]);
    expect(api.console.startupStatus).toEqual({ message: "Failed", severity: "error" });
    expect(onStartupStatus).toHaveBeenCalledWith({ message: "Syncing users" });
    for (const body of ["{", '{"severity":"error"}', '{"message":"m","severity":1}']) {
      expect((await api.respond(put(body))).status, body).toBe(400);
    }
    api.reset();
    expect(api.console.startupStatus).toBeUndefined();
  });

  it("serves console options as raw text, 400 for a missing or unknown name", async () => {
    const api = createFakeIntegrationApi({ consoleOptions: { hostname: "platform.acme.test" } });
    const found = await api.respond(get("/console/v1/option?name=hostname"));
    expect(found.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await found.text()).toBe("platform.acme.test");
    expect((await api.respond(get("/console/v1/option?name=nope"))).status).toBe(400);
    expect((await api.respond(get("/console/v1/option"))).status).toBe(400);
    expect((await api.respond(get("/console/v1/option?name=__proto__"))).status).toBe(400);
    api.console.setOption("tls.authority.cert", "PEM");
    expect(api.console.options).toEqual({
      hostname: "platform.acme.test",
      "tls.authority.cert": "PEM",
    });
  });
});

describe("fake License API", () => {
  it("serves the license in snake_case, optional dates only when set", async () => {
    const api = createFakeIntegrationApi({
      license: {
        licenseId: "l",
        installationId: "i",
        fields: [
          { field: "seats", value: 5 },
          { field: "sso", value: true, hideFromCustomer: true },
          { field: "tier", value: "gold", title: "Tier" },
        ],
        expirationTime: "2030-01-01T00:00:00Z",
      },
    });
    expect(await (await api.respond(get("/license/v1/license"))).json()).toEqual({
      license_id: "l",
      installation_id: "i",
      expiration_time: "2030-01-01T00:00:00Z",
      fields: [
        { field: "seats", title: "seats", type: "Integer", value: 5, hide_from_customer: false },
        { field: "sso", title: "sso", type: "Boolean", value: true, hide_from_customer: true },
        { field: "tier", title: "Tier", type: "String", value: "gold", hide_from_customer: false },
      ],
    });
    expect(await (await api.respond(get("/license/v1/field/seats"))).json()).toEqual({
      field: "seats",
      value: "5",
    });
    expect((await api.respond(get("/license/v1/field/nope"))).status).toBe(404);
  });

  it("replaces the license with set() and restores it with reset()", async () => {
    const api = createFakeIntegrationApi();
    api.license.set({ licenseId: "new", installationId: "i", fields: [] });
    expect(api.license.current.licenseId).toBe("new");
    api.reset();
    expect(api.license.current.licenseId).toBe("fake-license-id");
  });
});
