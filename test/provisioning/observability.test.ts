import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Logger } from "../../src/internal/logger.ts";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningHandlerOptions,
  type UserStore,
} from "../../src/provisioning/index.ts";
import { installInMemoryOpenTelemetry } from "../support/open-telemetry.ts";
import { call } from "./helpers.ts";

const password = "Tr0ub4dor&3-password";
const token = "eyJhbGciOiJIUzI1NiJ9.bearer-token";
const sharedSecretValue = "shared-secret-value-42";

function recordingLogger() {
  const lines: { level: string; message: string; fields?: unknown }[] = [];
  const at = (level: string) => (message: string, fields?: unknown) =>
    void lines.push({ level, message, fields });
  const logger: Logger = {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
  };
  return { logger, lines };
}

/** A store whose every method fails, quoting what it was given, as some drivers do. */
const quotingStore: UserStore = {
  upsert: async (patch) => {
    throw new Error(`insert failed for ${JSON.stringify(patch)}`);
  },
  delete: async (uuid) => {
    throw new Error(`delete failed for ${uuid}`);
  },
  ready: () => {
    throw new Error("connection refused");
  },
  reset: async () => {
    throw new Error("truncate failed");
  },
};

describe("the handler's logger", () => {
  const user = { uuid: "u-1", username: "bob", password };
  const paths: [
    string,
    Partial<ProvisioningHandlerOptions>,
    string,
    string,
    unknown,
    Record<string, string>?,
  ][] = [
    ["store upsert", { store: quotingStore }, "POST", "/v1/user/create", user],
    ["store delete", { store: quotingStore }, "DELETE", "/v1/user/u-1", undefined],
    ["store ready", { store: quotingStore }, "GET", "/v1/ping", undefined],
    ["store reset", { store: quotingStore, reset: true }, "POST", "/v1/reset", undefined],
    [
      "transform",
      {
        transform: (patch) => {
          throw new Error(`cannot hash ${patch.password}`);
        },
      },
      "POST",
      "/v1/user/modify",
      user,
    ],
    [
      "onChange",
      {
        onChange: (change) => {
          throw new Error(`hook failed on ${JSON.stringify(change.user)}`);
        },
      },
      "POST",
      "/v1/user/create",
      [user],
    ],
    [
      "onReset",
      {
        onReset: () => {
          throw new Error("reset hook failed");
        },
      },
      "POST",
      "/v1/reset",
      undefined,
    ],
    [
      "authorize",
      {
        authorize: (request) => {
          throw new Error(
            `bad credentials ${String(request.headers.authorization)} ${String(request.headers["x-provisioning-token"])}`,
          );
        },
      },
      "POST",
      "/v1/user/create",
      user,
      { authorization: `Bearer ${token}`, "x-provisioning-token": sharedSecretValue },
    ],
    [
      "onError itself",
      {
        store: quotingStore,
        onError: (error) => {
          throw error;
        },
      },
      "POST",
      "/v1/user/create",
      user,
    ],
  ];

  it.each(paths)(
    "reports a failing %s once at error, without the password, token or secret",
    async (_name, options, method, path, body, headers) => {
      const { logger, lines } = recordingLogger();
      const handler = createProvisioningHandler({
        store: new MemoryUserStore(),
        logger,
        ...options,
      });
      const response = await call(handler, method, path, body, {
        headers: { "content-type": "application/json", ...headers },
      });
      expect([500, 503]).toContain(response.status);
      expect(lines).toHaveLength(1);
      expect(lines[0]?.level).toBe("error");
      expect(lines[0]?.message).toMatch(/^platform-integration: \w+ answered 50[03]/);
      const text = JSON.stringify(lines);
      for (const secret of [password, token, sharedSecretValue]) expect(text).not.toContain(secret);
      expect(text).not.toContain("eyJhbGci");
    },
  );

  it("keeps what is not secret in the report: operation, status, uuid, the error's text", async () => {
    const { logger, lines } = recordingLogger();
    const handler = createProvisioningHandler({ store: quotingStore, logger });
    await call(handler, "POST", "/v1/user/create", { uuid: "u-2", password });
    expect(lines[0]?.message).toBe(
      'platform-integration: create answered 503 for user "u-2": Error: insert failed for {"uuid":"u-2","password":"[redacted]"}',
    );
    expect(lines[0]?.fields).toMatchObject({ operation: "create", status: 503, uuid: "u-2" });
  });

  it("defaults to console.error, as before the option", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const handler = createProvisioningHandler({ store: quotingStore });
      await call(handler, "GET", "/v1/ping");
      expect(error).toHaveBeenCalledTimes(1);
      expect(String(error.mock.calls[0]?.[0])).toMatch(/^platform-integration: ping answered 503/);
    } finally {
      error.mockRestore();
    }
  });
});

describe("handler.stats()", () => {
  it("counts answers by operation and status, the last message and error, and what is in flight", async () => {
    let release: () => void = () => {};
    const store = new MemoryUserStore();
    const slow: UserStore = {
      upsert: async (patch) => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return store.upsert(patch);
      },
      delete: (uuid) => store.delete(uuid),
    };
    const handler = createProvisioningHandler({ store: slow });
    expect(handler.stats()).toEqual({ messages: {}, inFlight: 0 });
    await call(handler, "GET", "/v1/ping");
    await call(handler, "DELETE", "/v1/user/gone");
    await call(handler, "POST", "/v1/user/create", "{not json");
    await call(handler, "GET", "/nowhere");
    const pending = call(handler, "POST", "/v1/user/create", { uuid: "u-1" });
    await vi.waitFor(() => expect(handler.stats().inFlight).toBe(1));
    release();
    await pending;
    const stats = handler.stats();
    expect(stats.messages).toEqual({
      ping: { "204": 1 },
      delete: { "204": 1 },
      create: { "400": 1, "201": 1 },
      other: { "404": 1 },
    });
    expect(stats.inFlight).toBe(0);
    expect(stats.lastError).toEqual({ code: "not_found", status: 404, at: expect.any(String) });
    expect(Date.parse(stats.lastMessageAt ?? "")).toBeGreaterThanOrEqual(
      Date.parse(stats.lastError?.at ?? ""),
    );
    // A snapshot: changing it changes nothing inside.
    (stats.messages.ping as Record<string, number>)["204"] = 99;
    expect(handler.stats().messages.ping).toEqual({ "204": 1 });
  });
});

describe("handler.stats(), what it counts under", () => {
  // Catches: the counters keyed by route alone (a GET on the delete route counted as "user") or
  // by path (the uuid "create" counted as a create).
  it("counts a request under the operation its route and method name", async () => {
    const handler = createProvisioningHandler({ store: new MemoryUserStore() });
    await call(handler, "DELETE", "/v1/user/create");
    await call(handler, "GET", "/v1/user/u1");
    expect(handler.stats().messages).toEqual({ delete: { "204": 1, "405": 1 } });
  });

  // Catches: a HEAD answer's body dropped before the counters read its error code ("unknown").
  it("keeps the error code of a HEAD answer, whose body is dropped", async () => {
    const store = Object.assign(new MemoryUserStore(), { ready: () => false });
    const handler = createProvisioningHandler({ store });
    const head = await call(handler, "HEAD", "/v1/ping");
    expect([head.status, head.body]).toEqual([503, undefined]);
    expect(handler.stats().lastError).toMatchObject({ code: "not_ready", status: 503 });
  });
});

describe("OpenTelemetry on the handler", () => {
  let otel: ReturnType<typeof installInMemoryOpenTelemetry>;
  beforeAll(() => {
    otel = installInMemoryOpenTelemetry();
  });
  afterAll(() => otel.stop());
  beforeEach(() => otel.resetSpans());

  const summary = () =>
    otel.spans().map((span) => ({
      name: span.name,
      kind: span.kind,
      status: span.status.code,
      attributes: span.attributes,
    }));

  it("makes a SERVER span per request with the HTTP conventions, and no uuid by default", async () => {
    const handler = createProvisioningHandler({
      store: new MemoryUserStore(),
      basePath: "/ldap/auth",
    });
    await call(handler, "POST", "/ldap/auth/v1/user/create", { uuid: "u-1", password });
    await call(handler, "DELETE", "/ldap/auth/v1/user/u-1", undefined, {
      remoteAddress: "10.0.0.9",
    });
    await call(handler, "GET", "/ldap/auth/v1/nope");
    expect(summary()).toEqual([
      {
        name: "POST /ldap/auth/v1/user/create",
        kind: otel.api.SpanKind.SERVER,
        status: otel.api.SpanStatusCode.UNSET,
        attributes: {
          "http.request.method": "POST",
          "http.route": "/ldap/auth/v1/user/create",
          "url.path": "/ldap/auth/v1/user/create",
          "platform_integration.provisioning.operation": "create",
          "http.response.status_code": 201,
        },
      },
      {
        name: "DELETE /ldap/auth/v1/user/{uuid}",
        kind: otel.api.SpanKind.SERVER,
        status: otel.api.SpanStatusCode.UNSET,
        attributes: {
          "http.request.method": "DELETE",
          "http.route": "/ldap/auth/v1/user/{uuid}",
          "url.path": "/ldap/auth/v1/user/{uuid}",
          "platform_integration.provisioning.operation": "delete",
          "client.address": "10.0.0.9",
          "http.response.status_code": 204,
        },
      },
      {
        name: "GET",
        kind: otel.api.SpanKind.SERVER,
        status: otel.api.SpanStatusCode.UNSET,
        attributes: {
          "http.request.method": "GET",
          "url.path": "/ldap/auth/v1/nope",
          "platform_integration.provisioning.operation": "other",
          "http.response.status_code": 404,
        },
      },
    ]);
    expect(JSON.stringify(otel.spans().map((span) => span.attributes))).not.toContain("u-1");
  });

  it("gives a span of handler.fetch the peer address as client.address, with no guard set", async () => {
    const handler = createProvisioningHandler({ store: new MemoryUserStore() });
    // What Bun.serve and Deno.serve pass beside the request; here the explicit form.
    const response = await handler.fetch(new Request("http://127.0.0.1/v1/ping"), {
      remoteAddress: "203.0.113.7",
    });
    expect(response.status).toBe(204);
    expect(otel.spans().map((span) => span.attributes["client.address"])).toEqual(["203.0.113.7"]);
  });

  it("records uuids as user.id only when includeUuid opts in", async () => {
    const handler = createProvisioningHandler({
      store: new MemoryUserStore(),
      telemetry: { includeUuid: true },
    });
    await call(handler, "POST", "/v1/user/create", { uuid: "u-1" });
    await call(handler, "POST", "/v1/user/modify", [{ uuid: "u-1" }, { uuid: "u-2" }]);
    await call(handler, "DELETE", "/v1/user/a%2Fb");
    expect(otel.spans().map((span) => span.attributes["user.id"])).toEqual([
      "u-1",
      ["u-1", "u-2"],
      "a/b",
    ]);
    expect(otel.spans()[2]?.attributes["url.path"]).toBe("/v1/user/a%2Fb");
  });

  // Catches: the health counters skipped on the OpenTelemetry path.
  it("still counts stats when OpenTelemetry is there", async () => {
    const handler = createProvisioningHandler({ store: new MemoryUserStore() });
    await call(handler, "GET", "/v1/ping");
    expect(handler.stats().messages).toEqual({ ping: { "204": 1 } });
  });

  // Catches: url.path carrying the query string (which semantic conventions keep apart, and
  // which may hold a token).
  it("leaves the query out of url.path", async () => {
    const handler = createProvisioningHandler({ store: new MemoryUserStore() });
    await call(handler, "GET", "/v1/ping?token=abc");
    expect(otel.spans()[0]?.attributes["url.path"]).toBe("/v1/ping");
  });

  // Catches: durations in milliseconds or from a wrong origin, and buckets other than the advised
  // ones. The clock is performance.now, moved only by the store.
  it("measures the request and the store in seconds, in the advised buckets", async () => {
    let clock = 1_000_000;
    const now = vi.spyOn(performance, "now").mockImplementation(() => clock);
    try {
      const memory = new MemoryUserStore();
      const store: UserStore = {
        upsert: (patch) => {
          clock += 250;
          return memory.upsert(patch);
        },
        delete: (uuid) => memory.delete(uuid),
      };
      const handler = createProvisioningHandler({ store, basePath: "/timed" });
      const before = await otel.histogram("platform_integration.provisioning.store.duration");
      const upsertSum = () =>
        before?.points.find(
          (point) => point.attributes["platform_integration.store.method"] === "upsert",
        )?.sum ?? 0;
      const upsertBefore = upsertSum();
      expect((await call(handler, "POST", "/timed/v1/user/create", { uuid: "u-1" })).status).toBe(
        201,
      );
      const request = await otel.histogram("http.server.request.duration");
      expect(request?.unit).toBe("s");
      expect(
        request?.points.find((point) => point.attributes["http.route"] === "/timed/v1/user/create"),
      ).toMatchObject({
        count: 1,
        sum: 0.25,
        boundaries: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      });
      const after = await otel.histogram("platform_integration.provisioning.store.duration");
      expect(after?.unit).toBe("s");
      const upsert = after?.points.find(
        (point) => point.attributes["platform_integration.store.method"] === "upsert",
      );
      expect((upsert?.sum ?? 0) - upsertBefore).toBeCloseTo(0.25, 9);
      expect(upsert?.boundaries).toEqual(request?.points[0]?.boundaries);
    } finally {
      now.mockRestore();
    }
  });

  // Catches: a store call timed under the wrong method name, a successful one given an
  // error.type or not recorded, and error.type on the duration of an answer below 500.
  it("names each store method, and marks only failures and 5xx answers as errors", async () => {
    const store = Object.assign(new MemoryUserStore(), { ready: () => true });
    const handler = createProvisioningHandler({ store, reset: true, basePath: "/named" });
    await call(handler, "GET", "/named/v1/ping");
    await call(handler, "POST", "/named/v1/user/create", { uuid: "u-1" });
    await call(handler, "DELETE", "/named/v1/user/u-1");
    await call(handler, "POST", "/named/v1/reset");
    await call(handler, "PUT", "/named/v1/reset");
    const methods = await otel.metric("platform_integration.provisioning.store.duration");
    expect(methods.map((point) => point.attributes)).toEqual(
      expect.arrayContaining(
        ["ready", "upsert", "delete", "reset"].map((method) => ({
          "platform_integration.store.method": method,
        })),
      ),
    );
    const failing = createProvisioningHandler({
      store,
      basePath: "/named",
      transform: () => {
        throw new Error("hook broke");
      },
      logger: recordingLogger().logger,
    });
    expect((await call(failing, "POST", "/named/v1/user/modify", { uuid: "u-1" })).status).toBe(
      500,
    );
    const durations = await otel.metric("http.server.request.duration");
    const byMethod = (method: string) =>
      durations.find((point) => point.attributes["http.request.method"] === method)?.attributes;
    expect(byMethod("PUT")?.["http.response.status_code"]).toBe(405);
    expect(byMethod("PUT")).not.toHaveProperty("error.type");
    const failed = durations.find(
      (point) => point.attributes["http.route"] === "/named/v1/user/modify",
    );
    expect(failed?.attributes["error.type"]).toBe("500");
  });

  // Catches: uuid extraction that throws on a null record or an unknown route (handle() must never
  // reject), reads a uuid from a route that names none, records a non-string "uuid", or prefers
  // the raw bytes over the body a framework parsed (which is what is stored).
  it("records with includeUuid only the string uuids of what the request stores or deletes", async () => {
    const handler = createProvisioningHandler({
      store: new MemoryUserStore(),
      reset: true,
      telemetry: { includeUuid: true },
    });
    const encoder = new TextEncoder();
    expect((await call(handler, "GET", "/v1/ping")).status).toBe(204);
    expect((await call(handler, "GET", "/v1/nowhere")).status).toBe(404);
    expect((await call(handler, "POST", "/v1/reset", { uuid: "r-1" })).status).toBe(204);
    expect((await call(handler, "POST", "/v1/user/create", "null")).status).toBe(400);
    expect((await call(handler, "POST", "/v1/user/create", "[null]")).status).toBe(400);
    const mixed = [{ uuid: "a-1" }, { uuid: 7 }];
    expect((await call(handler, "POST", "/v1/user/create", mixed)).status).toBe(400);
    const parsed = await handler.handle({
      method: "POST",
      path: "/v1/user/modify",
      headers: {},
      json: { uuid: "j-1" },
      body: encoder.encode('{"uuid":"b-1"}'),
    });
    expect(parsed.status).toBe(204);
    expect(otel.spans().map((span) => span.attributes["user.id"])).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      "a-1",
      "j-1",
    ]);
  });

  // Catches: user.id read by parsing the body a second time, before the handler's own reading
  // (so also a body over the limit, which the handler refuses unread, was parsed whole).
  it("reads user.id from the body the handler parsed, parsing it once", async () => {
    const handler = createProvisioningHandler({
      store: new MemoryUserStore(),
      bodyLimit: 64,
      telemetry: { includeUuid: true },
    });
    const text = '{"uuid":"once-1"}';
    const parse = vi.spyOn(JSON, "parse");
    try {
      const created = await handler.handle({
        method: "POST",
        path: "/v1/user/create",
        headers: {},
        body: new TextEncoder().encode(text),
      });
      expect(created.status).toBe(201);
      expect(parse.mock.calls.filter(([parsed]) => parsed === text)).toHaveLength(1);
    } finally {
      parse.mockRestore();
    }
    const large = JSON.stringify({ uuid: "large-1", description: "x".repeat(100) });
    expect((await call(handler, "POST", "/v1/user/create", large)).status).toBe(413);
    expect(otel.spans().map((span) => span.attributes["user.id"])).toEqual(["once-1", undefined]);
  });

  it("marks a 503 as an error, and measures operations, durations and the store", async () => {
    const handler = createProvisioningHandler({
      store: quotingStore,
      logger: recordingLogger().logger,
    });
    await call(handler, "POST", "/v1/user/create", { uuid: "u-1" });
    const [span] = otel.spans();
    expect(span?.status.code).toBe(otel.api.SpanStatusCode.ERROR);
    expect(span?.attributes["error.type"]).toBe("503");
    const operations = await otel.metric("platform_integration.provisioning.operations");
    expect(operations).toContainEqual({
      attributes: {
        "platform_integration.provisioning.operation": "create",
        "http.response.status_code": 503,
      },
      value: 1,
    });
    const store = await otel.metric("platform_integration.provisioning.store.duration");
    expect(store).toContainEqual({
      attributes: { "platform_integration.store.method": "upsert", "error.type": "Error" },
      value: 1,
    });
    const durations = await otel.metric("http.server.request.duration");
    expect(durations).toContainEqual({
      attributes: {
        "http.request.method": "POST",
        "http.response.status_code": 503,
        "http.route": "/v1/user/create",
        "error.type": "503",
      },
      value: 1,
    });
  });
});
