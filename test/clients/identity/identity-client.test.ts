import { inspect } from "node:util";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import {
  createIdentityClient,
  type IdentityClientOptions,
  isCallTimeoutError,
  isConfigurationError,
  isHttpError,
  isResponseShapeError,
} from "../../../src/clients/identity/index.ts";
import { createIntegrationApiHandlers } from "../../../src/msw/index.ts";
import { fakeIdentityDefaults } from "../../../src/testing/index.ts";
import { useMswServer } from "../integration-api/msw-server.ts";

const baseUrl = "https://platform.test";
const server = useMswServer();
const east = { hostname: "ldap.east.test", baseDn: "dc=east,dc=test" };
const west = { hostname: "ldap.west.test", baseDn: "dc=west,dc=test" };

/** The msw handlers over a fresh fake, and every request the platform received. */
function platform(options: Parameters<typeof createIntegrationApiHandlers>[0] | object = {}) {
  const { handlers, api } = createIntegrationApiHandlers({ baseUrl, ...options });
  const requests: { method: string; url: URL; body: string }[] = [];
  server.events.on("request:start", async ({ request }) => {
    requests.push({
      method: request.method,
      url: new URL(request.url),
      body: await request.clone().text(),
    });
  });
  server.use(...handlers);
  return { api, requests };
}

function client(options: Omit<IdentityClientOptions, "baseUrl"> = {}) {
  return createIdentityClient({ baseUrl, retry: { limit: 2, baseDelayMs: 0 }, ...options });
}

const documentedUser = {
  DN: "uid=bob,ou=people,dc=example,dc=com",
  Username: "bob",
  Attributes: { givenname: ["Bob"], mail: ["bob@example.com"] },
  Groups: [
    {
      DN: "cn=users,ou=groups,dc=example,dc=com",
      ID: "501",
      Name: "users",
      Attributes: { cn: ["users"] },
    },
  ],
};

function answer(method: "get" | "post", path: string, body: string, init: ResponseInit = {}) {
  server.use(http[method](`${baseUrl}${path}`, () => new HttpResponse(body, init)));
}

describe("sources()", () => {
  it("reads the documented body into camelCase", async () => {
    answer(
      "get",
      "/identity/v1/sources",
      JSON.stringify({ sources: [{ base_dn: "dc=example,dc=com", hostname: "ldap.test" }] }),
      { headers: { "content-type": "application/json; charset=utf-8" } },
    );
    expect(await client().sources()).toEqual([
      { hostname: "ldap.test", baseDn: "dc=example,dc=com" },
    ]);
  });

  it("reads Go's null as no sources, and rejects a source without strings", async () => {
    answer("get", "/identity/v1/sources", '{"sources":null}');
    expect(await client().sources()).toEqual([]);
    answer("get", "/identity/v1/sources", '{"sources":[{"hostname":1}]}');
    const error = await client()
      .sources()
      .catch((caught: unknown) => caught);
    expect(isResponseShapeError(error)).toBe(true);
  });
});

describe("login()", () => {
  it("logs in the fake's default user and returns the user in camelCase", async () => {
    platform();
    const result = await client().login({
      username: fakeIdentityDefaults.user.username,
      password: fakeIdentityDefaults.user.password,
    });
    expect(result).toEqual({
      authenticated: true,
      user: {
        dn: "uid=bob,ou=people,dc=example,dc=com",
        username: "bob",
        attributes: expect.objectContaining({ givenname: ["Bob"], mail: ["bob@example.com"] }),
        groups: [
          {
            dn: "cn=users,ou=groups,dc=example,dc=com",
            id: "501",
            name: "users",
            attributes: { cn: ["users"] },
          },
        ],
      },
    });
  });

  it("reads the documented PascalCase body exactly", async () => {
    answer("post", "/identity/v1/login", JSON.stringify(documentedUser));
    server.use(
      http.get(`${baseUrl}/identity/v1/sources`, () => HttpResponse.json({ sources: [] })),
    );
    const result = await client().login({ username: "bob", password: "secret" });
    expect(result).toEqual({
      authenticated: true,
      user: {
        dn: documentedUser.DN,
        username: "bob",
        attributes: documentedUser.Attributes,
        groups: [
          {
            dn: documentedUser.Groups[0]?.DN,
            id: "501",
            name: "users",
            attributes: { cn: ["users"] },
          },
        ],
      },
    });
  });

  it("answers a wrong password with invalid-credentials, sent once, never retried", async () => {
    const { api, requests } = platform();
    const result = await client().login({ username: "bob", password: "wrong" });
    expect(result).toEqual({ authenticated: false, reason: "invalid-credentials" });
    expect(requests.filter(({ url }) => url.pathname === "/identity/v1/login")).toHaveLength(1);
    expect(api.identity.loginAttempts).toEqual([{ username: "bob", authenticated: false }]);
  });

  it("sends the credentials as a JSON body with the JSON headers", async () => {
    const { requests } = platform();
    await client().login({ username: "bob", password: "password123" });
    const login = requests.find(({ url }) => url.pathname === "/identity/v1/login");
    expect(login?.method).toBe("POST");
    expect(JSON.parse(login?.body ?? "")).toEqual({ username: "bob", password: "password123" });
  });

  it("never retries a login, even on a 503 that a GET would retry", async () => {
    const { api, requests } = platform();
    api.failNext(1, { status: 503 });
    const error = await client({ source: fakeIdentityDefaults.source })
      .login({ username: "bob", password: "password123" })
      .catch((caught: unknown) => caught);
    expect(isHttpError(error) && error.status).toBe(503);
    expect(error).toMatchObject({ attempts: 1 });
    expect(requests.filter(({ url }) => url.pathname === "/identity/v1/login")).toHaveLength(1);
  });

  it("refuses an empty username or password without a request", async () => {
    const { requests } = platform();
    for (const credentials of [
      { username: "bob", password: "" },
      { username: "", password: "password123" },
    ]) {
      expect(await client().login(credentials)).toEqual({
        authenticated: false,
        reason: "missing-credentials",
      });
    }
    expect(requests).toEqual([]);
  });

  it("rejects credentials that are not strings, without naming the password", async () => {
    const error = await client()
      .login({ username: "bob", password: 42 } as never)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
  });
});

describe("sources on login, user and exists", () => {
  const directory = {
    identity: {
      sources: [east, west],
      users: [
        { username: "ann", password: "east-pass", source: 0 },
        { username: "ann", password: "west-pass", source: 1 },
      ],
      groups: [],
    },
  };

  it("sends hostname and base_dn for the given source", async () => {
    const { requests } = platform(directory);
    const result = await client().login(
      { username: "ann", password: "west-pass" },
      { source: west },
    );
    expect(result.authenticated).toBe(true);
    const login = requests.find(({ url }) => url.pathname === "/identity/v1/login");
    expect(Object.fromEntries(login?.url.searchParams ?? [])).toEqual({
      hostname: "ldap.west.test",
      base_dn: "dc=west,dc=test",
    });
    expect(await client().exists("ann", { source: east })).toBe(true);
    expect((await client().user("ann", { source: east }))?.dn).toBe(
      "uid=ann,ou=people,dc=east,dc=test",
    );
  });

  it("fails with a ConfigurationError naming the sources when several exist and none is given", async () => {
    const { requests } = platform(directory);
    for (const call of [
      () => client().login({ username: "ann", password: "east-pass" }),
      () => client().user("ann"),
      () => client().exists("ann"),
    ]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(isConfigurationError(error)).toBe(true);
      expect((error as Error).message).toContain(
        "2 identity sources: ldap.east.test (dc=east,dc=test), ldap.west.test (dc=west,dc=test)",
      );
      expect((error as Error).message).not.toContain("east-pass");
    }
    expect(requests.map(({ url }) => url.pathname)).toEqual(Array(3).fill("/identity/v1/sources"));
  });

  it("uses the client's source option, and asks for the sources once a minute at most", async () => {
    const { requests } = platform(directory);
    const withDefault = client({ source: east });
    expect(
      (await withDefault.login({ username: "ann", password: "east-pass" })).authenticated,
    ).toBe(true);
    expect(requests.map(({ url }) => url.pathname)).toEqual(["/identity/v1/login"]);

    const single = platform();
    const plain = client();
    await plain.exists("bob");
    await plain.exists("bob");
    expect(single.requests.map(({ url }) => `${url.pathname}${url.search}`).slice(-3)).toEqual([
      "/identity/v1/sources",
      "/identity/v1/user/bob/exists",
      "/identity/v1/user/bob/exists",
    ]);
  });

  it("shares one sources request between calls, which one caller's abort does not cancel", async () => {
    const { requests } = platform();
    const identity = client();
    const aborted = new AbortController();
    const first = identity.exists("bob", { signal: aborted.signal });
    const second = identity.exists("bob");
    aborted.abort(new Error("the user left"));
    await expect(first).rejects.toThrow("the user left");
    expect(await second).toBe(true);
    expect(requests.filter(({ url }) => url.pathname === "/identity/v1/sources")).toHaveLength(1);
  });

  it("does not read a failed sources request as an answer about the user", async () => {
    answer("get", "/identity/v1/sources", "no such path", { status: 404 });
    const userError = await client()
      .user("bob")
      .catch((caught: unknown) => caught);
    expect(isHttpError(userError) && userError.url).toBe(`${baseUrl}/identity/v1/sources`);
    answer("get", "/identity/v1/sources", "refused", { status: 401 });
    const loginError = await client()
      .login({ username: "bob", password: "pw" })
      .catch((caught: unknown) => caught);
    expect(isHttpError(loginError) && loginError.status).toBe(401);
  });

  it("rejects a source that is not { hostname, baseDn }", () => {
    expect(() => client({ source: { hostname: "h" } as never })).toThrow(TypeError);
  });
});

describe("user() and exists()", () => {
  it("returns the user, or undefined on 404; exists() reads true and false", async () => {
    platform();
    expect((await client().user("BOB"))?.username).toBe("bob");
    expect(await client().user("nobody")).toBeUndefined();
    expect(await client().exists("bob")).toBe(true);
    expect(await client().exists("nobody")).toBe(false);
  });

  it("does not retry a 401 (the platform's search account refused), but retries a 503", async () => {
    const { api, requests } = platform();
    await client().sources();
    api.failNext(1, { status: 401 });
    const error = await client({ source: fakeIdentityDefaults.source })
      .user("bob")
      .catch((caught: unknown) => caught);
    expect(isHttpError(error) && error.status).toBe(401);
    expect(requests.filter(({ url }) => url.pathname.startsWith("/identity/v1/user"))).toHaveLength(
      1,
    );

    api.failNext(2, { status: 503 });
    expect(await client({ source: fakeIdentityDefaults.source }).exists("bob")).toBe(true);
  });

  it("encodes the username as one path segment, and refuses . and ..", async () => {
    const paths: string[] = [];
    server.use(
      http.get(`${baseUrl}/identity/v1/user/*`, ({ request }) => {
        paths.push(new URL(request.url).pathname);
        return new HttpResponse("false", {
          headers: { "content-type": "text/plain; charset=utf-8" },
        });
      }),
    );
    const identity = client({ source: east });
    expect(await identity.exists("a/b?c#d")).toBe(false);
    expect(paths).toEqual(["/identity/v1/user/a%2Fb%3Fc%23d/exists"]);
    await expect(identity.user("..")).rejects.toThrow(RangeError);
    await expect(identity.exists(".")).rejects.toThrow(RangeError);
    await expect(identity.exists("")).rejects.toThrow(TypeError);
  });

  it("fails with a ResponseShapeError when exists answers neither true nor false", async () => {
    answer("get", "/identity/v1/user/bob/exists", "maybe");
    const error = await client({ source: east })
      .exists("bob")
      .catch((caught: unknown) => caught);
    expect(isResponseShapeError(error) && error.body).toBe("maybe");
  });
});

describe("reading the user body", () => {
  const read = async (body: string) => {
    answer("get", "/identity/v1/user/bob", body);
    return client({ source: east }).user("bob");
  };

  it("lower-cases and merges attribute names, wraps a lone string, reads a numeric group ID", async () => {
    const user = await read(
      JSON.stringify({
        dn: "uid=bob",
        username: "bob",
        attributes: { GivenName: "Bob", givenname: ["Robert"] },
        groups: [{ dn: "cn=g", id: 7, name: "g" }],
      }),
    );
    expect(user).toEqual({
      dn: "uid=bob",
      username: "bob",
      attributes: { givenname: ["Bob", "Robert"] },
      groups: [{ dn: "cn=g", id: "7", name: "g", attributes: {} }],
    });
  });

  it("drops password attributes and keeps __proto__ as a plain key", async () => {
    const user = await read(
      '{"DN":"uid=bob","Username":"bob","Attributes":{"userPassword":["{SSHA}x"],"unicodePwd":["y"],"__proto__":["z"]},"Groups":null}',
    );
    expect(Object.keys(user?.attributes ?? {})).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(user?.attributes)).toBe(Object.prototype);
    expect(user?.groups).toEqual([]);
  });

  it("fails with a ResponseShapeError when DN is missing or a value is not a string", async () => {
    for (const body of [
      '{"Username":"bob"}',
      '{"DN":"d","Username":"bob","Attributes":{"a":[1]}}',
      '{"DN":"d","Username":"bob","Groups":[{"DN":"g"}]}',
      "[]",
    ]) {
      const error = await read(body).catch((caught: unknown) => caught);
      expect(isResponseShapeError(error), body).toBe(true);
    }
  });
});

describe("the password stays secret", () => {
  const password = 'pa"ss\\word-7f3e';

  /** A structured logger that records everything it is given, as a log pipeline would. */
  function recordingLogger() {
    const lines: string[] = [];
    const log = (...args: unknown[]) => {
      lines.push(args.map((arg) => inspect(arg, { depth: 10, showHidden: true })).join(" "));
      lines.push(JSON.stringify(args));
    };
    return { lines, logger: { debug: log, info: log, warn: log, error: log } };
  }

  function expectNoPassword(error: unknown, lines: string[]) {
    const outputs = [
      String(error),
      (error as Error).stack ?? "",
      inspect(error, { depth: 10, showHidden: true }),
      JSON.stringify(error),
      JSON.stringify((error as { toJSON?: () => unknown }).toJSON?.() ?? null),
      ...lines,
    ];
    for (const output of outputs) {
      expect(output).not.toContain(password);
      expect(output).not.toContain(JSON.stringify(password).slice(1, -1));
    }
  }

  it("redacts a password the platform echoes in an error answer", async () => {
    server.use(
      http.post(`${baseUrl}/identity/v1/login`, async ({ request }) =>
        HttpResponse.text(`bad request: ${await request.text()}`, { status: 400 }),
      ),
    );
    const { lines, logger } = recordingLogger();
    const error = await client({ source: east, logger })
      .login({ username: "bob", password })
      .catch((caught: unknown) => {
        logger.error("login failed", { err: caught });
        return caught;
      });
    expect(isHttpError(error) && error.status).toBe(400);
    expect((error as { body: string }).body).toBe(
      'bad request: {"username":"bob","password":"[redacted]"}',
    );
    expectNoPassword(error, lines);
  });

  it("redacts it from a malformed 200 answer that echoes it", async () => {
    server.use(
      http.post(`${baseUrl}/identity/v1/login`, async ({ request }) =>
        HttpResponse.text(await request.text()),
      ),
    );
    const { lines, logger } = recordingLogger();
    const error = await client({ source: east, logger })
      .login({ username: "bob", password })
      .catch((caught: unknown) => {
        logger.error(String(caught), { caught });
        return caught;
      });
    expect(isResponseShapeError(error)).toBe(true);
    expectNoPassword(error, lines);
  });

  it("keeps it out of what the client logs while it retries the sources, then fails the login", async () => {
    const { api } = platform();
    api.failNext(2, { status: 503 });
    server.use(
      http.post(`${baseUrl}/identity/v1/login`, async ({ request }) =>
        HttpResponse.text(await request.text(), { status: 502 }),
      ),
    );
    const { lines, logger } = recordingLogger();
    const error = await client({ logger })
      .login({ username: "bob", password })
      .catch((caught: unknown) => {
        logger.error(String(caught), { caught });
        return caught;
      });
    expect(isHttpError(error) && error.status).toBe(502);
    // The two retries of GET /identity/v1/sources were logged, then the failure.
    expect(lines.filter((line) => line.includes("Retrying"))).toHaveLength(4);
    expectNoPassword(error, lines);
  });

  it("keeps it out of a timeout", async () => {
    server.use(http.post(`${baseUrl}/identity/v1/login`, () => new Promise<never>(() => {})));
    const { lines, logger } = recordingLogger();
    const error = await client({ source: east, timeoutMs: 20, logger })
      .login({ username: "bob", password })
      .catch((caught: unknown) => {
        logger.warn(String(caught), { caught });
        return caught;
      });
    expect(isCallTimeoutError(error)).toBe(true);
    expectNoPassword(error, lines);
  });
});
