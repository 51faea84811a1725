import { describe, expect, it, vi } from "vitest";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningChange,
  ProvisioningError,
  type UserStore,
} from "../../src/provisioning/index.ts";
import { call, errorOf } from "./helpers.ts";

function setup(options: Partial<Parameters<typeof createProvisioningHandler>[0]> = {}) {
  const store = new MemoryUserStore();
  const onError = vi.fn();
  const handler = createProvisioningHandler({ store, onError, ...options });
  return { store, handler, onError };
}

describe("routes", () => {
  it("answers the spec's statuses, with or without a trailing slash and a query", async () => {
    const { handler, store } = setup({ reset: true });
    expect((await call(handler, "GET", "/v1/ping")).status).toBe(204);
    expect((await call(handler, "HEAD", "/v1/ping/?probe=1")).status).toBe(204);
    expect((await call(handler, "POST", "/v1/user/create", { uuid: "u1" })).status).toBe(201);
    expect((await call(handler, "POST", "/v1/user/modify/", { uuid: "u1" })).status).toBe(204);
    expect((await call(handler, "DELETE", "/v1/user/u1")).status).toBe(204);
    expect((await call(handler, "POST", "/v1/reset")).status).toBe(204);
    expect(await store.list()).toEqual([]);
  });

  it("serves under a basePath and nowhere else", async () => {
    const { handler } = setup({ basePath: "/ldap/auth/" });
    expect(handler.basePath).toBe("/ldap/auth");
    expect((await call(handler, "GET", "/ldap/auth/v1/ping")).status).toBe(204);
    expect((await call(handler, "GET", "/v1/ping")).status).toBe(404);
    expect((await call(handler, "GET", "/ldap/authx/v1/ping")).status).toBe(404);
    expect(handler.owns("/ldap/auth/v1/user/x?y")).toBe(true);
    // Under a base path everything is the API's, so an unknown path gets its JSON 404.
    expect(handler.owns("/ldap/auth/v2/ping")).toBe(true);
    expect(handler.owns("/ldap/auth?x")).toBe(true);
    expect(handler.owns("/ldap/authors")).toBe(false);
    expect(handler.owns("/v1/ping")).toBe(false);
    expect(errorOf(await call(handler, "GET", "/ldap/auth/v2/ping")).error).toBe("not_found");
  });

  // Catches: a router that strips basePath.length characters without checking they are the base
  // path, and one that strips a single trailing slash of the base path.
  it("never routes a path outside the base path, even one as long", async () => {
    const { handler, store } = setup({ basePath: "/ldap//" });
    expect(handler.basePath).toBe("/ldap");
    await store.upsert({ uuid: "u1" });
    // "/abcd" is as long as "/ldap": cutting five characters would leave an API path.
    expect((await call(handler, "GET", "/abcd/v1/ping")).status).toBe(404);
    expect((await call(handler, "DELETE", "/abcd/v1/user/u1")).status).toBe(404);
    expect(await store.get("u1")).toEqual({ uuid: "u1" });
  });

  // Catches: a router that takes "/v1/user//" as a delete of the empty uuid.
  it("gives no route to an empty uuid in the path", async () => {
    const deleted: string[] = [];
    const store = new MemoryUserStore();
    const { handler } = setup({
      store: {
        upsert: (patch) => store.upsert(patch),
        delete: async (uuid) => {
          deleted.push(uuid);
          return store.delete(uuid);
        },
      },
    });
    expect(handler.owns("/v1/user//")).toBe(false);
    const response = await call(handler, "DELETE", "/v1/user//");
    expect([response.status, errorOf(response).error]).toEqual([404, "not_found"]);
    expect(deleted).toEqual([]);
  });

  it("owns only its routes without a base path, so the application's own /v1 routes work", () => {
    const { handler } = setup();
    for (const path of ["/v1/ping", "/v1/user/create?x=1", "/v1/user/u1", "/v1/ping/"]) {
      expect(handler.owns(path)).toBe(true);
    }
    for (const path of ["/v1/orders", "/v1/reset", "/v1/user/", "/", "/v2/ping"]) {
      expect(handler.owns(path)).toBe(false);
    }
  });

  it("answers 404 and 405 with a JSON body and an Allow header", async () => {
    const { handler } = setup({ reset: true });
    const missing = await call(handler, "GET", "/v1/users");
    expect(missing.status).toBe(404);
    expect(missing.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(errorOf(missing).error).toBe("not_found");
    for (const [method, path, allow] of [
      ["POST", "/v1/ping", "GET, HEAD"],
      ["GET", "/v1/user/create", "POST, DELETE"],
      ["PUT", "/v1/user/modify", "POST, DELETE"],
      ["GET", "/v1/reset", "POST"],
      ["GET", "/v1/user/u1", "DELETE"],
    ] as const) {
      const response = await call(handler, method, path);
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe(allow);
      expect(errorOf(response).error).toBe("method_not_allowed");
    }
    const head = await call(handler, "HEAD", "/v1/user/u1");
    expect([head.status, head.body]).toEqual([405, undefined]);
  });

  it("deletes the user whose uuid is the percent-decoded last segment, any character", async () => {
    const { handler, store } = setup();
    const uuids = ["a/b?c#d%e", "create", "Zoë 😀", "x/"];
    for (const uuid of uuids) await store.upsert({ uuid });
    for (const uuid of uuids) {
      expect((await call(handler, "DELETE", `/v1/user/${encodeURIComponent(uuid)}`)).status).toBe(
        204,
      );
    }
    expect(await store.list()).toEqual([]);
    const bad = await call(handler, "DELETE", "/v1/user/%E0%A4%A");
    expect([bad.status, errorOf(bad).error]).toEqual([400, "invalid_uuid"]);
  });

  it("rejects a basePath without a leading slash and a bad bodyLimit", () => {
    const store = new MemoryUserStore();
    expect(() => createProvisioningHandler({ store, basePath: "ldap" })).toThrow(TypeError);
    expect(() => createProvisioningHandler({ store, bodyLimit: -1 })).toThrow(TypeError);
    expect(() => createProvisioningHandler({ store, bodyLimit: 1.5 })).toThrow(TypeError);
    // Zero is a limit (every body refused), not a mistake.
    expect(createProvisioningHandler({ store, bodyLimit: 0 }).bodyLimit).toBe(0);
  });
});

describe("bodies", () => {
  it("merges: absent fields keep their value, null clears, duplicates update", async () => {
    const { handler, store } = setup();
    const bob = { uuid: "u1", username: "bob", first_name: "Bob", email: "bob@acme.com" };
    expect((await call(handler, "POST", "/v1/user/create", bob)).status).toBe(201);
    expect((await call(handler, "POST", "/v1/user/create", bob)).status).toBe(201);
    const modify = { uuid: "u1", password: "newpassword456", email: null };
    expect((await call(handler, "POST", "/v1/user/modify", modify)).status).toBe(204);
    expect(await store.list()).toEqual([
      { uuid: "u1", username: "bob", firstName: "Bob", password: "newpassword456" },
    ]);
    expect((await call(handler, "POST", "/v1/user/modify", { uuid: "u2" })).status).toBe(204);
    expect((await call(handler, "DELETE", "/v1/user/nobody")).status).toBe(204);
    expect(await store.get("u2")).toEqual({ uuid: "u2" });
  });

  it("keeps wrong-typed documented fields as JSON text and unknown fields in extra", async () => {
    const { handler, store } = setup();
    const body =
      '{"uuid":"u1","user_id":42,"username":true,"full_name":{"a":[1]},"memberOf":["g1"],' +
      '"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"firstName":"camel"}';
    expect((await call(handler, "POST", "/v1/user/create", body)).status).toBe(201);
    const user = await store.get("u1");
    expect(user).toMatchObject({ userId: "42", username: "true", fullName: '{"a":[1]}' });
    expect(user?.extra).toEqual(
      JSON.parse(
        '{"memberOf":["g1"],"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"firstName":"camel"}',
      ),
    );
    expect(Object.getPrototypeOf(user?.extra)).toBe(Object.prototype);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("creates each record of an array, and none when one is bad", async () => {
    const { handler, store } = setup();
    const good = [{ uuid: "a" }, { uuid: "b", username: "b" }, { uuid: "a", username: "a" }];
    expect((await call(handler, "POST", "/v1/user/create", good)).status).toBe(201);
    expect(await store.list()).toEqual([
      { uuid: "a", username: "a" },
      { uuid: "b", username: "b" },
    ]);
    const bad = await call(handler, "POST", "/v1/user/create", [{ uuid: "c" }, { uuid: 7 }]);
    expect([bad.status, errorOf(bad).error]).toEqual([400, "invalid_uuid"]);
    expect(await store.get("c")).toBeUndefined();
  });

  it.each([
    ["invalid JSON", '{"uuid":"u1",', "invalid_json"],
    ["an empty body", "", "invalid_json"],
    ["invalid UTF-8", new Uint8Array([0x7b, 0xff, 0x7d]), "invalid_json"],
    ["a string", '"u1"', "invalid_user"],
    ["null", "null", "invalid_user"],
    ["an array of arrays", "[[]]", "invalid_user"],
    ["a missing uuid", { username: "x" }, "invalid_uuid"],
    ["an empty uuid", { uuid: "" }, "invalid_uuid"],
    ["a number uuid", { uuid: 12 }, "invalid_uuid"],
    [
      "a value nested 65 deep",
      `{"uuid":"u1","x":${"[".repeat(65)}${"]".repeat(65)}}`,
      "invalid_user",
    ],
    [
      "an object nested 65 deep",
      `{"uuid":"u1","x":${'{"a":'.repeat(64)}{}${"}".repeat(64)}}`,
      "invalid_user",
    ],
  ])("answers 400 to %s, storing nothing", async (_name, body, code) => {
    const { handler, store } = setup();
    const response =
      body instanceof Uint8Array
        ? await handler.handle({ method: "POST", path: "/v1/user/create", headers: {}, body })
        : await call(handler, "POST", "/v1/user/create", body);
    expect([response.status, errorOf(response).error]).toEqual([400, code]);
    expect(await store.list()).toEqual([]);
  });

  // Catches: a body read that assumes bytes are there and crashes into a 500.
  it("answers 400, not 500, to a POST with no body at all", async () => {
    const { handler, onError } = setup();
    const response = await handler.handle({ method: "POST", path: "/v1/user/create", headers: {} });
    expect([response.status, errorOf(response).error]).toEqual([400, "invalid_json"]);
    expect(onError).not.toHaveBeenCalled();
  });

  // Catches: a limit checked with >= (a body of exactly bodyLimit bytes refused).
  it("accepts a body of exactly bodyLimit bytes, and refuses one byte more", async () => {
    const body = '{"uuid":"u1"}';
    const { handler, store } = setup({ bodyLimit: body.length });
    expect((await call(handler, "POST", "/v1/user/create", body)).status).toBe(201);
    expect((await call(handler, "POST", "/v1/user/create", `${body} `)).status).toBe(413);
    expect(await store.list()).toEqual([{ uuid: "u1" }]);
  });

  // Catches: an exception while reading a parsed body escaping handle() (which must never
  // reject), or reported without its operation.
  it("answers 500 when reading a framework's parsed body throws, and reports it", async () => {
    const { handler, onError } = setup();
    const failure = new Error("getter failed");
    const json = {
      uuid: "u1",
      get email(): string {
        throw failure;
      },
    };
    const response = await handler.handle({
      method: "POST",
      path: "/v1/user/modify",
      headers: {},
      json,
    });
    expect([response.status, errorOf(response).error]).toEqual([500, "internal_error"]);
    expect(onError).toHaveBeenCalledWith(failure, {
      operation: "modify",
      uuid: undefined,
      status: 500,
    });
  });

  it("accepts a value nested 64 deep", async () => {
    const { handler } = setup();
    const deep = `{"uuid":"u1","x":${"[".repeat(64)}${"]".repeat(64)}}`;
    expect((await call(handler, "POST", "/v1/user/create", deep)).status).toBe(201);
    const objects = `{"uuid":"u2","x":${'{"a":'.repeat(63)}{}${"}".repeat(63)}}`;
    expect((await call(handler, "POST", "/v1/user/create", objects)).status).toBe(201);
  });

  it("reads the body as JSON whatever the content type says, and still refuses what is not JSON", async () => {
    const { handler, store } = setup();
    const send = (body: string, contentType?: string) =>
      call(handler, "POST", "/v1/user/create", body, {
        headers: contentType === undefined ? {} : { "content-type": contentType },
      });
    const types = [
      undefined,
      "Application/JSON; charset=UTF-8",
      "application/vnd.x+json",
      "text/plain;charset=UTF-8",
      "text/json",
      "application/x-www-form-urlencoded",
      "application/octet-stream",
      "*/*",
    ];
    for (const [index, type] of types.entries()) {
      expect((await send(`{"uuid":"u${index}"}`, type)).status).toBe(201);
    }
    expect(await store.list()).toHaveLength(types.length);
    const notJson = await send("uuid=u1", "application/x-www-form-urlencoded");
    expect([notJson.status, errorOf(notJson).error]).toEqual([400, "invalid_json"]);
  });

  it("answers 413 past the bodyLimit, by Content-Length or by size", async () => {
    const { handler, store } = setup({ bodyLimit: 20 });
    const big = await call(handler, "POST", "/v1/user/create", {
      uuid: "u1",
      username: "x".repeat(20),
    });
    expect([big.status, errorOf(big).error]).toEqual([413, "payload_too_large"]);
    const declared = await call(handler, "POST", "/v1/user/create", undefined, {
      headers: { "content-length": "21" },
      json: { uuid: "u1" },
    });
    expect(declared.status).toBe(413);
    expect(await store.list()).toEqual([]);
  });

  it("uses a body a framework already parsed", async () => {
    const { handler, store } = setup();
    const response = await handler.handle({
      method: "POST",
      path: "/v1/user/create",
      headers: { "content-type": "application/json" },
      json: { uuid: "u1", last_name: "Doe" },
    });
    expect(response.status).toBe(201);
    expect(await store.get("u1")).toEqual({ uuid: "u1", lastName: "Doe" });
  });

  it("never puts a password or the input in an error body", async () => {
    const { handler } = setup({ bodyLimit: 64 });
    const secret = "hunter2-secret";
    for (const body of [
      `{"uuid": 5, "password": "${secret}"}`,
      `{"password": "${secret}"`,
      `{"uuid": "${secret}", "x": "${"y".repeat(64)}"}`,
    ]) {
      const response = await call(handler, "POST", "/v1/user/create", body);
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.body).not.toContain(secret);
    }
  });
});

describe("failures", () => {
  const failing = (failure: Partial<Record<keyof UserStore, unknown>>): UserStore => {
    const store = new MemoryUserStore();
    const reject = (error: unknown) => () => Promise.reject(error);
    return {
      upsert: failure.upsert ? reject(failure.upsert) : (patch) => store.upsert(patch),
      delete: failure.delete ? reject(failure.delete) : (uuid) => store.delete(uuid),
      reset: failure.reset ? reject(failure.reset) : () => store.reset(),
      ready: failure.ready ? reject(failure.ready) : () => true,
    };
  };

  it("answers 503 to every store error, and reports it", async () => {
    const error = new Error("connection refused");
    const { handler, onError } = setup({
      store: failing({ upsert: error, delete: error, reset: error, ready: error }),
      reset: true,
    });
    for (const [method, path, operation, uuid] of [
      ["POST", "/v1/user/create", "create", "u1"],
      ["POST", "/v1/user/modify", "modify", "u1"],
      ["DELETE", "/v1/user/u1", "delete", "u1"],
      ["POST", "/v1/reset", "reset", undefined],
      ["GET", "/v1/ping", "ping", undefined],
    ] as const) {
      const response = await call(handler, method, path, { uuid: "u1" });
      expect([response.status, errorOf(response).error]).toEqual([503, "store_unavailable"]);
      expect(onError).toHaveBeenLastCalledWith(error, { operation, uuid, status: 503 });
    }
  });

  it("answers ping with 503 while the store is not ready", async () => {
    let ready = false;
    const store = new MemoryUserStore();
    const { handler } = setup({ store: Object.assign(store, { ready: () => ready }) });
    const response = await call(handler, "GET", "/v1/ping");
    expect([response.status, errorOf(response).error]).toEqual([503, "not_ready"]);
    ready = true;
    expect((await call(handler, "GET", "/v1/ping")).status).toBe(204);
  });

  it("answers 500 to a failing hook and reports it; a ProvisioningError chooses the answer", async () => {
    const bug = new TypeError("bug");
    const { handler, onError, store } = setup({
      transform: (patch) => {
        if (patch.uuid === "bad") throw new ProvisioningError("invalid_user", "No bad users");
        if (patch.uuid === "bug") throw bug;
        return patch;
      },
      onChange: (change) => {
        if (change.uuid === "late") throw bug;
      },
    });
    const refused = await call(handler, "POST", "/v1/user/create", { uuid: "bad" });
    expect([refused.status, errorOf(refused)]).toEqual([
      400,
      { error: "invalid_user", message: "No bad users" },
    ]);
    expect(onError).not.toHaveBeenCalled();
    const failed = await call(handler, "POST", "/v1/user/create", { uuid: "bug" });
    expect([failed.status, errorOf(failed).error]).toEqual([500, "internal_error"]);
    expect(onError).toHaveBeenLastCalledWith(bug, {
      operation: "create",
      uuid: "bug",
      status: 500,
    });
    // The change is stored before onChange fails: the platform's redelivery finds it and succeeds.
    expect((await call(handler, "DELETE", "/v1/user/late")).status).toBe(500);
    expect(onError).toHaveBeenLastCalledWith(bug, {
      operation: "delete",
      uuid: "late",
      status: 500,
    });
    expect((await store.list()).map((user) => user.uuid)).toEqual([]);
  });

  it("still answers when onError itself throws, and logs to the console by default", async () => {
    const store = {
      upsert: () => Promise.reject(new Error("down")),
      delete: async () => ({ deleted: false }),
    };
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const throwing = createProvisioningHandler({
        store,
        onError: () => {
          throw new Error("hook broke");
        },
      });
      expect((await call(throwing, "POST", "/v1/user/create", { uuid: "u1" })).status).toBe(503);
      expect(log).toHaveBeenCalledTimes(1);
      const quiet = createProvisioningHandler({ store });
      expect((await call(quiet, "POST", "/v1/user/create", { uuid: "u1" })).status).toBe(503);
      expect(log).toHaveBeenCalledTimes(2);
      expect(String(log.mock.calls[1]?.[0])).toContain('create answered 503 for user "u1"');
    } finally {
      log.mockRestore();
    }
  });
});

describe("hooks", () => {
  it("reports each stored change to onChange, after transform", async () => {
    const changes: ProvisioningChange[] = [];
    const { handler } = setup({
      reset: true,
      transform: (patch) =>
        patch.password ? { ...patch, password: `hashed:${patch.password}` } : patch,
      onChange: (change) => {
        changes.push(change);
      },
    });
    await call(handler, "POST", "/v1/user/create", { uuid: "u1", password: "pw" });
    await call(handler, "POST", "/v1/user/modify", { uuid: "u1", username: "bob" });
    await call(handler, "DELETE", "/v1/user/u1");
    await call(handler, "DELETE", "/v1/user/u1");
    await call(handler, "POST", "/v1/reset");
    expect(changes).toEqual([
      { type: "created", uuid: "u1", user: { uuid: "u1", password: "hashed:pw" } },
      {
        type: "updated",
        uuid: "u1",
        user: { uuid: "u1", username: "bob", password: "hashed:pw" },
      },
      { type: "deleted", uuid: "u1" },
      { type: "deleted", uuid: "u1" },
      { type: "reset" },
    ]);
  });

  // Catches: a transform not told which operation it rewrites.
  it("tells transform the operation", async () => {
    const seen: unknown[] = [];
    const { handler } = setup({
      transform: (patch, context) => {
        seen.push(context);
        return patch;
      },
    });
    await call(handler, "POST", "/v1/user/create", { uuid: "u1" });
    await call(handler, "POST", "/v1/user/modify", { uuid: "u1" });
    expect(seen).toEqual([{ operation: "create" }, { operation: "modify" }]);
  });

  it("refuses a transform that changes the uuid", async () => {
    const { handler, onError, store } = setup({
      transform: (patch) => ({ ...patch, uuid: "other" }),
    });
    expect((await call(handler, "POST", "/v1/user/create", { uuid: "u1" })).status).toBe(500);
    expect(onError).toHaveBeenCalledWith(expect.any(TypeError), {
      operation: "create",
      uuid: "u1",
      status: 500,
    });
    expect(await store.list()).toEqual([]);
  });

  it("runs onReset instead of the store's reset", async () => {
    const onReset = vi.fn();
    const { handler, store } = setup({ onReset });
    await store.upsert({ uuid: "kept" });
    expect((await call(handler, "POST", "/v1/reset")).status).toBe(204);
    expect(onReset).toHaveBeenCalledOnce();
    expect(await store.list()).toHaveLength(1);
  });

  // Catches: a hook's failure on a reset answered as the store's retriable 503, or, for onChange,
  // escaping after the store's reset is done.
  it.each([
    ["onReset", (failure: Error) => ({ onReset: () => Promise.reject(failure) }), ["kept"]],
    [
      "onChange after the store's reset",
      (failure: Error) => ({
        reset: true,
        onChange: (change: ProvisioningChange) => {
          if (change.type === "reset") throw failure;
        },
      }),
      [],
    ],
  ])(
    "answers 500, not 503, when %s fails: the application's hook is not the store",
    async (_hook, hooks, left) => {
      const failure = new Error("hook broke");
      const { handler, onError, store } = setup(hooks(failure));
      await store.upsert({ uuid: "kept" });
      const response = await call(handler, "POST", "/v1/reset");
      expect([response.status, errorOf(response).error]).toEqual([500, "internal_error"]);
      expect(onError).toHaveBeenCalledWith(failure, {
        operation: "reset",
        uuid: undefined,
        status: 500,
      });
      expect((await store.list()).map((user) => user.uuid)).toEqual(left);
    },
  );
});

describe("reset is opt-in", () => {
  it("is not served by default: JSON 404, and nothing is deleted", async () => {
    const { handler, store } = setup();
    await store.upsert({ uuid: "kept" });
    const response = await call(handler, "POST", "/v1/reset");
    expect([response.status, errorOf(response).error]).toEqual([404, "not_found"]);
    expect(errorOf(response).message).not.toContain("reset");
    expect(await store.list()).toHaveLength(1);
    expect((await call(setup({ reset: false }).handler, "POST", "/v1/reset")).status).toBe(404);
  });

  it("runs the store's reset when reset is true", async () => {
    const { handler, store } = setup({ reset: true });
    await store.upsert({ uuid: "gone" });
    expect((await call(handler, "POST", "/v1/reset")).status).toBe(204);
    expect(await store.list()).toEqual([]);
  });

  it("throws at creation when opted into with nothing to run it, or contradicted", () => {
    const store = {
      upsert: () => Promise.reject(new Error("unused")),
      delete: async () => ({ deleted: false }),
    };
    expect(() => createProvisioningHandler({ store, reset: true })).toThrow(
      /store has no reset\(\) and there is no onReset/,
    );
    expect(() => createProvisioningHandler({ store, reset: false, onReset: () => {} })).toThrow(
      TypeError,
    );
    expect(createProvisioningHandler({ store, onReset: () => {} }).owns("/v1/reset")).toBe(true);
  });
});

describe("authorize", () => {
  it("is off by default and answers 403 when the guard says no", async () => {
    const seen: string[] = [];
    const { handler, store } = setup({
      authorize: (request) => {
        seen.push(request.path);
        return request.headers["x-ok"] === "yes";
      },
    });
    const refused = await call(handler, "POST", "/v1/user/create", { uuid: "u1" });
    expect([refused.status, errorOf(refused).error]).toEqual([403, "forbidden"]);
    const allowed = await call(
      handler,
      "POST",
      "/v1/user/create",
      { uuid: "u1" },
      {
        headers: { "x-ok": "yes" },
      },
    );
    expect(allowed.status).toBe(201);
    expect(seen).toEqual(["/v1/user/create", "/v1/user/create"]);
    expect(await store.list()).toHaveLength(1);
    expect((await call(setup().handler, "GET", "/v1/ping")).status).toBe(204);
  });

  // Catches: a guard given Web Headers as they are, where request.headers[name] finds nothing.
  it("gives the guard a record when the adapter passed Web Headers", async () => {
    const { handler } = setup({ authorize: (request) => request.headers["x-ok"] === "yes" });
    const response = await handler.handle({
      method: "GET",
      path: "/v1/ping",
      headers: new Headers({ "X-OK": "yes" }),
    });
    expect(response.status).toBe(204);
  });

  it("answers 500 when the guard throws", async () => {
    const { handler, onError } = setup({
      authorize: () => {
        throw new Error("guard broke");
      },
    });
    expect((await call(handler, "DELETE", "/v1/user/u1")).status).toBe(500);
    expect(onError).toHaveBeenCalledWith(expect.any(Error), {
      operation: "delete",
      uuid: undefined,
      status: 500,
    });
  });

  it("names the operation the guard was asked about when it throws", async () => {
    const { handler, onError } = setup({
      authorize: () => {
        throw new Error("guard broke");
      },
    });
    const operations: unknown[] = [];
    onError.mockImplementation((_error, context: { operation: string }) => {
      operations.push(context.operation);
    });
    await call(handler, "POST", "/v1/user/modify", { uuid: "u1" });
    await call(handler, "POST", "/v1/user/create", { uuid: "u1" });
    // The uuid "create": a delete, though its path is the create route's.
    await call(handler, "DELETE", "/v1/user/create");
    // The delete route with another method: still "delete", never a name outside the union.
    await call(handler, "GET", "/v1/user/u1");
    expect(operations).toEqual(["modify", "create", "delete", "delete"]);
  });
});
