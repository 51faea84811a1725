// Issue 11's rules for what the platform may send: any content type, browsers refused, arrays,
// numbers kept as written, strings that no UTF-8 store could keep.
import { describe, expect, it } from "vitest";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningRequest,
} from "../../src/provisioning/index.ts";
import { call, errorOf } from "./helpers.ts";

function setup(options: { allowBrowsers?: boolean } = {}) {
  const store = new MemoryUserStore();
  return { store, handler: createProvisioningHandler({ store, ...options }) };
}

describe("browsers are refused unless allowed", () => {
  const record = new TextEncoder().encode('{"uuid":"u1"}');
  const create = (headers: ProvisioningRequest["headers"]) => ({
    method: "POST",
    path: "/v1/user/create",
    headers,
    body: record,
  });

  it.each([
    ["Origin", { origin: "https://intranet.example" }],
    ["Origin: null", { origin: "null" }],
    ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site" }],
    ["Sec-Fetch-Site: same-site", { "sec-fetch-site": "same-site" }],
  ])("answers 403 to a request with %s, storing nothing", async (_name, headers) => {
    const { handler, store } = setup();
    for (const form of [
      headers,
      Object.entries(headers).flatMap(([name, value]) => [name.toUpperCase(), value]),
      new Headers(headers),
    ]) {
      const response = await handler.handle(create(form));
      expect([response.status, errorOf(response).error]).toEqual([403, "forbidden"]);
      expect(errorOf(response).message).toContain("allowBrowsers");
    }
    expect(await store.list()).toEqual([]);
    const allowed = setup({ allowBrowsers: true });
    expect((await allowed.handler.handle(create(headers))).status).toBe(201);
  });

  it("serves servers' clients: Node's fetch sends Sec-Fetch-Mode only", async () => {
    const { handler } = setup();
    for (const headers of [
      {},
      { "sec-fetch-mode": "cors" },
      { "sec-fetch-site": "none" },
      { "sec-fetch-site": "same-origin" },
    ]) {
      expect((await handler.handle(create(headers))).status).toBe(201);
    }
  });

  it("lets Node's own fetch through on a real server", async () => {
    const { handler } = setup();
    const response = await handler.fetch(
      new Request("http://app/v1/user/create", { method: "POST", body: '{"uuid":"u2"}' }),
    );
    expect(response.status).toBe(201);
  });
});

describe("arrays", () => {
  it("creates and modifies each record of a non-empty array", async () => {
    const { handler, store } = setup();
    const users = [{ uuid: "a", username: "a" }, { uuid: "b" }];
    expect((await call(handler, "POST", "/v1/user/create", users)).status).toBe(201);
    const changes = [{ uuid: "a", email: "a@x" }, { uuid: "c" }];
    expect((await call(handler, "POST", "/v1/user/modify", changes)).status).toBe(204);
    expect(await store.list()).toEqual([
      { uuid: "a", username: "a", email: "a@x" },
      { uuid: "b" },
      { uuid: "c" },
    ]);
  });

  it.each(["create", "modify"])("answers 400 to an empty array on %s", async (operation) => {
    const { handler } = setup();
    const response = await call(handler, "POST", `/v1/user/${operation}`, "[]");
    expect([response.status, errorOf(response).error]).toEqual([400, "invalid_user"]);
  });
});

describe("numbers keep the text they were sent as", () => {
  it.each([
    ["12345678901234567890", "12345678901234567890"],
    ["1.50", "1.50"],
    ["1e2", "1e2"],
    ["-0", "-0"],
    ["42", "42"],
    ["0.1", "0.1"],
  ])("stores user_id %s as %j", async (sent, stored) => {
    const { handler, store } = setup();
    const response = await call(
      handler,
      "POST",
      "/v1/user/create",
      `{"uuid":"u1","user_id":${sent}}`,
    );
    expect(response.status).toBe(201);
    expect((await store.get("u1"))?.userId).toBe(stored);
  });

  it("keeps numbers inside a documented field's object as written", async () => {
    const { handler, store } = setup();
    const body = '{"uuid":"u1","full_name":{"a":[1.50,2]},"username":true}';
    expect((await call(handler, "POST", "/v1/user/create", body)).status).toBe(201);
    expect(await store.get("u1")).toEqual({
      uuid: "u1",
      fullName: '{"a":[1.50,2]}',
      username: "true",
    });
  });

  it("keeps an exact number in extra, and refuses one its value would change", async () => {
    const { handler, store } = setup();
    const exact = '{"uuid":"u1","level":3,"ratio":{"x":0.5}}';
    expect((await call(handler, "POST", "/v1/user/create", exact)).status).toBe(201);
    expect((await store.get("u1"))?.extra).toEqual({ level: 3, ratio: { x: 0.5 } });
    for (const changed of [
      '{"uuid":"u2","big":12345678901234567890}',
      '{"uuid":"u2","x":[1.50]}',
      '{"uuid":"u2","x":["a",1.50]}',
      '{"uuid":"u2","x":{"a":"b","c":1.50}}',
    ]) {
      const response = await call(handler, "POST", "/v1/user/create", changed);
      expect([response.status, errorOf(response).error]).toEqual([400, "invalid_user"]);
    }
    expect(await store.get("u2")).toBeUndefined();
  });

  // Catches: every non-string value of a parsed body refused as if it held a number.
  it("takes a body a parser in front parsed when it holds no number", async () => {
    const { handler, store } = setup();
    const response = await handler.handle({
      method: "POST",
      path: "/v1/user/create",
      headers: {},
      json: { uuid: "u1", username: true, memberOf: ["g1", { admin: false }], manager: null },
    });
    expect(response.status).toBe(201);
    expect(await store.get("u1")).toEqual({
      uuid: "u1",
      username: "true",
      extra: { memberOf: ["g1", { admin: false }] },
    });
  });

  // Catches: for-in reading inherited keys, so that a polluted prototype (or a parser's object
  // with one) writes fields nobody sent.
  it("stores only a parsed body's own keys", async () => {
    const { handler, store } = setup();
    // An inherited number would be refused as one whose text is gone, at any depth.
    const json = Object.assign(Object.create({ email: "injected@evil.example", role: "admin" }), {
      uuid: "u1",
      groups: Object.create({ level: 1.5 }),
    });
    expect(
      (await handler.handle({ method: "POST", path: "/v1/user/create", headers: {}, json })).status,
    ).toBe(201);
    expect(await store.get("u1")).toEqual({ uuid: "u1", extra: { groups: {} } });
  });

  // Catches: a digit-losing number stored as its value's text, or refused with a 400 that would
  // stall the sync for good on a message that is valid as sent.
  it("answers 500 to an integer past 2^53 a body parser in front already parsed", async () => {
    const { handler, store } = setup();
    const response = await handler.handle({
      method: "POST",
      path: "/v1/user/create",
      headers: {},
      json: { uuid: "u1", user_id: 12345678901234567000 },
    });
    expect([response.status, errorOf(response).error]).toEqual([500, "internal_error"]);
    expect(errorOf(response).message).toContain("body parser");
    expect(await store.list()).toEqual([]);
  });
});

describe("big integers a body parser in front made BigInts of", () => {
  const create = (json: unknown) => ({
    method: "POST",
    path: "/v1/user/create",
    headers: {},
    json,
  });

  it("keeps them as written, in a documented field and in extra, instead of failing with a 500", async () => {
    const { handler, store } = setup();
    const response = await handler.handle(
      create({ uuid: "u1", user_id: 12345678901234567890n, uid_number: -7n }),
    );
    expect(response.status).toBe(201);
    const user = await store.get("u1");
    expect(user?.userId).toBe("12345678901234567890");
    // A JSON number, exactly as written, wherever the store serializes extra.
    expect(JSON.stringify(user?.extra)).toBe('{"uid_number":-7}');
  });

  it("refuses one that extra could not keep exactly, as for any number, and answers 500 to one nested in a value", async () => {
    const { handler, store } = setup();
    const unkept = await handler.handle(create({ uuid: "u1", uid_number: 12345678901234567890n }));
    expect([unkept.status, errorOf(unkept).error]).toEqual([400, "invalid_user"]);
    expect(errorOf(unkept).message).toContain("send it as a string");
    for (const json of [
      { uuid: "u1", groups: [1, 2n] },
      { uuid: "u1", first_name: { id: 3n } },
    ]) {
      const response = await handler.handle(create(json));
      expect([response.status, errorOf(response).error]).toEqual([500, "internal_error"]);
      expect(errorOf(response).message).toContain("mount the Provisioning API before");
    }
    expect(await store.list()).toEqual([]);
  });
});

describe("strings that cannot be stored as sent", () => {
  it.each([
    ["a lone high surrogate in the uuid", '{"uuid":"\\ud800"}'],
    ["a lone low surrogate in a field", '{"uuid":"u1","username":"a\\udc00"}'],
    ["a reversed pair", '{"uuid":"u1","username":"\\udc00\\ud800"}'],
    ["a lone surrogate in an unknown field's name", '{"uuid":"u1","\\ud800":"x"}'],
    ["a lone surrogate nested in extra", '{"uuid":"u1","groups":[{"name":"\\ud800"}]}'],
    ["a lone surrogate in a nested key", '{"uuid":"u1","groups":{"\\udfff":1}}'],
    // After a good value: the check must not stop at the first element or key.
    ["a lone surrogate after a good element", '{"uuid":"u1","groups":["ok","\\ud800"]}'],
    ["a lone surrogate after a good key", '{"uuid":"u1","groups":{"a":"ok","b":"\\ud800"}}'],
    ["U+0000 in a field", '{"uuid":"u1","email":"a\\u0000b"}'],
    ["U+0000 in the uuid", '{"uuid":"u\\u0000"}'],
  ])("answers 400 to %s", async (_name, body) => {
    const { handler, store } = setup();
    const response = await call(handler, "POST", "/v1/user/create", body);
    expect([response.status, errorOf(response).error]).toEqual([400, "invalid_user"]);
    expect(await store.list()).toEqual([]);
  });

  it("accepts escaped pairs and other escapes", async () => {
    const { handler, store } = setup();
    const body = '{"uuid":"\\ud83d\\ude00","username":"\\u00e9\\n","x":["\\u0041"]}';
    expect((await call(handler, "POST", "/v1/user/create", body)).status).toBe(201);
    expect(await store.get("😀")).toEqual({ uuid: "😀", username: "é\n", extra: { x: ["A"] } });
  });

  it("checks a body a framework parsed too", async () => {
    const { handler } = setup();
    const response = await handler.handle({
      method: "POST",
      path: "/v1/user/modify",
      headers: {},
      json: { uuid: "u1", username: "\ud800" },
    });
    expect(response.status).toBe(400);
  });
});
