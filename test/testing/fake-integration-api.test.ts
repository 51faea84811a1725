import { describe, expect, it, vi } from "vitest";
import { createFakeIntegrationApi } from "../../src/testing/index.ts";

const base = "http://platform.test";
const clock = () => new Date("2024-05-06T07:08:09.123Z");

function fake() {
  return createFakeIntegrationApi({
    now: clock,
    current: {
      version: "100",
      releaseSequence: 51,
      releaseNotes: "The release notes",
      releaseDate: "2015-12-01T00:00:00.0000000Z",
      installDate: "2016-01-01T21:00:00.0000000Z",
    },
    updates: [
      { version: "102", releaseSequence: 53, releaseNotes: "Later", releaseDate: new Date(0) },
      { version: "101", releaseSequence: 52 },
    ],
  });
}

const get = (path: string, headers?: Record<string, string>) =>
  new Request(`${base}${path}`, headers === undefined ? {} : { headers });
const put = (path: string) => new Request(`${base}${path}`, { method: "PUT" });
const postEvent = (body: string, contentType = "application/json") =>
  new Request(`${base}/audit/v1/event`, {
    method: "POST",
    headers: { "content-type": contentType },
    body,
  });

describe("createFakeIntegrationApi: Version API", () => {
  it("answers GET /version/v1/current with the documented wire format, byte for byte", async () => {
    const response = await fake().respond(get("/version/v1/current"));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.text()).toBe(
      '{"version":"100","release_sequence":51,"release_notes":"The release notes","release_date":"2015-12-01T00:00:00.0000000Z","install_date":"2016-01-01T21:00:00.0000000Z"}',
    );
  });

  it("lists pending updates as a bare array by ascending sequence, without install_date", async () => {
    const response = await fake().respond(get("/version/v1/updates"));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([
      {
        version: "101",
        release_sequence: 52,
        release_notes: "",
        release_date: "2024-05-06T07:08:09.1230000Z",
      },
      {
        version: "102",
        release_sequence: 53,
        release_notes: "Later",
        release_date: "1970-01-01T00:00:00.0000000Z",
      },
    ]);
  });

  it("defaults to version 1.0.0, sequence 1, no updates, dates from the clock", () => {
    const api = createFakeIntegrationApi({ now: clock });
    expect(api.current).toEqual({
      version: "1.0.0",
      releaseSequence: 1,
      releaseNotes: "",
      releaseDate: "2024-05-06T07:08:09.1230000Z",
      installDate: "2024-05-06T07:08:09.1230000Z",
    });
    expect(api.updates).toEqual([]);
  });

  it("applies an update on PUT: it becomes current and leaves the list with every earlier one", async () => {
    const api = fake();
    const onUpdateApplied = vi.fn();
    const withHook = createFakeIntegrationApi({
      now: clock,
      updates: api.updates,
      onUpdateApplied,
    });
    for (const target of [api, withHook]) {
      const response = await target.respond(put("/version/v1/53"));
      expect(response.status).toBe(204);
      expect(await response.text()).toBe("");
      expect(target.current).toEqual({
        version: "102",
        releaseSequence: 53,
        releaseNotes: "Later",
        releaseDate: "1970-01-01T00:00:00.0000000Z",
        installDate: "2024-05-06T07:08:09.1230000Z",
      });
      expect(target.updates).toEqual([]);
    }
    expect(onUpdateApplied).toHaveBeenCalledExactlyOnceWith(withHook.current);
  });

  it("keeps later updates pending when an earlier one is applied", async () => {
    const api = fake();
    expect(api.apply(52).version).toBe("101");
    expect(api.updates.map((update) => update.releaseSequence)).toEqual([53]);
    const current = await (await api.respond(get("/version/v1/current"))).json();
    expect(current).toMatchObject({ version: "101", release_sequence: 52 });
  });

  it("answers 404 with a JSON error for a sequence that is not pending, and changes nothing", async () => {
    const api = fake();
    for (const sequence of ["51", "54", "0"]) {
      const response = await api.respond(put(`/version/v1/${sequence}`));
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        error: "update_not_found",
        message: `No pending update has release sequence ${Number(sequence)}.`,
      });
    }
    expect(api.current.releaseSequence).toBe(51);
    expect(api.updates).toHaveLength(2);
    expect(() => api.apply(54)).toThrow("No pending update has release sequence 54");
  });

  it("answers 400 for a sequence that is not an integer", async () => {
    for (const segment of ["abc", "-1", "1.5", "99999999999999999999", "%35%32"]) {
      const response = await fake().respond(put(`/version/v1/${segment}`));
      expect(response.status, segment).toBe(400);
      expect(await response.json()).toMatchObject({ error: "invalid_sequence" });
    }
  });

  it("answers 400 when Accept allows neither */* nor application/json", async () => {
    const api = fake();
    for (const accept of ["text/html", "application/xml, text/*", "", "application/json;q=0"]) {
      const response = await api.respond(get("/version/v1/current", { accept }));
      expect(response.status, accept).toBe(400);
      expect(await response.json()).toMatchObject({ error: "not_acceptable" });
    }
    for (const accept of [
      "application/json",
      "Application/JSON; charset=utf-8",
      "text/html, */*;q=0.1",
      "application/*",
    ]) {
      const response = await api.respond(get("/version/v1/current", { accept }));
      expect(response.status, accept).toBe(200);
    }
  });

  it("setCurrent and setUpdates replace the state, sorted, and reject duplicate or bad sequences", () => {
    const api = fake();
    api.setCurrent({ version: "7", releaseSequence: 7, installDate: new Date(0) });
    expect(api.current).toMatchObject({
      version: "7",
      installDate: "1970-01-01T00:00:00.0000000Z",
    });
    api.setUpdates([
      { version: "9", releaseSequence: 9 },
      { version: "8", releaseSequence: 8 },
    ]);
    expect(api.updates.map((update) => update.version)).toEqual(["8", "9"]);
    expect(() =>
      api.setUpdates([
        { version: "8", releaseSequence: 8 },
        { version: "8b", releaseSequence: 8 },
      ]),
    ).toThrow("distinct");
    expect(() => api.setCurrent({ version: "x", releaseSequence: 1.5 })).toThrow(RangeError);
    expect(api.updates).toHaveLength(2);
  });

  it("hands out copies: changing what it returns does not change the fake", () => {
    const api = fake();
    const current = api.current;
    current.version = "changed";
    const [update] = api.updates;
    update!.version = "changed";
    expect(api.current.version).toBe("100");
    expect(api.updates[0]?.version).toBe("101");
  });
});

describe("createFakeIntegrationApi: Audit API", () => {
  const documented = {
    name: "user.login",
    description: "john@example.com logged in successfully",
    title: "User Login Success",
    action: "user.login.success",
    ip_address: "192.30.252.12",
  };

  it("answers 201 with an empty text/plain body and records the event in camelCase", async () => {
    const onAuditEvent = vi.fn();
    const api = createFakeIntegrationApi({ onAuditEvent });
    const response = await api.respond(postEvent(JSON.stringify(documented)));
    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(response.headers.get("content-length")).toBe("0");
    expect(await response.text()).toBe("");
    const expected = {
      name: "user.login",
      description: "john@example.com logged in successfully",
      title: "User Login Success",
      action: "user.login.success",
      ipAddress: "192.30.252.12",
    };
    expect(api.auditEvents).toEqual([expected]);
    expect(onAuditEvent).toHaveBeenCalledExactlyOnceWith(expected);
  });

  it("keeps undocumented fields in extra as plain data, __proto__ included", async () => {
    const api = createFakeIntegrationApi();
    const body = '{"action":"a","__proto__":{"polluted":true},"constructor":{"x":1},"n":2}';
    expect((await api.respond(postEvent(body))).status).toBe(201);
    const [event] = api.auditEvents;
    expect(event?.action).toBe("a");
    expect(Object.keys(event?.extra ?? {})).toEqual(["__proto__", "constructor", "n"]);
    expect(Object.getPrototypeOf(event?.extra)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(event?.extra, "__proto__")?.value).toEqual({
      polluted: true,
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(event).not.toHaveProperty("polluted");
  });

  it("accepts an empty object: no field is required", async () => {
    const api = createFakeIntegrationApi();
    expect((await api.respond(postEvent("{}"))).status).toBe(201);
    expect(api.auditEvents).toEqual([{}]);
  });

  it("answers 400 for a body that is not JSON or not an object, and records nothing", async () => {
    const api = createFakeIntegrationApi();
    for (const [body, error] of [
      ["{not json", "invalid_json"],
      ["", "invalid_json"],
      ["[]", "invalid_event"],
      ["null", "invalid_event"],
      ['"text"', "invalid_event"],
      ['{"action":42}', "invalid_event"],
    ]) {
      const response = await api.respond(postEvent(body as string));
      expect(response.status, body).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/json");
      expect(await response.json()).toMatchObject({ error });
    }
    expect(api.auditEvents).toEqual([]);
  });

  it("answers 415 for a body not sent as application/json", async () => {
    const api = createFakeIntegrationApi();
    const response = await api.respond(postEvent("{}", "text/plain;charset=UTF-8"));
    expect(response.status).toBe(415);
    expect((await api.respond(postEvent("{}", "application/json; charset=utf-8"))).status).toBe(
      201,
    );
  });
});

describe("createFakeIntegrationApi: routing and injected failures", () => {
  it("answers 404 for an unknown path and 405 with Allow for a wrong method", async () => {
    const api = fake();
    const missing = await api.respond(get("/version/v2/current"));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: "not_found" });
    const wrong = await api.respond(new Request(`${base}/audit/v1/event`));
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
    expect(wrong.headers.get("content-type")).toBe("application/json");
    expect((await api.respond(get("/version/v1/52"))).headers.get("allow")).toBe("PUT");
  });

  it("fails the next N endpoint calls with a status and headers, in order, then recovers", async () => {
    const api = fake();
    api.failNext(2, { status: 503, headers: { "retry-after": "1" } });
    api.failNext(1, { status: 429 });
    expect((await api.respond(get("/nowhere"))).status).toBe(404);
    const first = await api.respond(get("/version/v1/current"));
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).toBe("1");
    expect(await first.json()).toMatchObject({ error: "injected_failure" });
    expect((await api.respond(postEvent("{}"))).status).toBe(503);
    expect((await api.respond(put("/version/v1/52"))).status).toBe(429);
    expect(api.updates).toHaveLength(2);
    expect(api.auditEvents).toEqual([]);
    expect((await api.respond(get("/version/v1/current"))).status).toBe(200);
  });

  it("injects a network error: Response.error() from handle, a TypeError from fetch", async () => {
    const api = fake();
    api.failNext(2, { networkError: true });
    const response = await api.respond(get("/version/v1/updates"));
    expect(response.type).toBe("error");
    await expect(api.fetch(`${base}/version/v1/updates`)).rejects.toThrow(TypeError);
    const recovered = await api.fetch(`${base}/version/v1/updates`, { headers: { accept: "*/*" } });
    expect(recovered.status).toBe(200);
  });

  it("rejects a count that is not positive and a status that is not an error", () => {
    const api = fake();
    expect(() => api.failNext(0, { status: 500 })).toThrow(RangeError);
    expect(() => api.failNext(1, { status: 200 })).toThrow("400 to 599");
  });

  it("reset restores the initial state and forgets events and queued failures", async () => {
    const api = fake();
    api.apply(53);
    await api.respond(postEvent("{}"));
    api.failNext(1, { status: 500 });
    api.reset();
    expect(api.current.version).toBe("100");
    expect(api.updates).toHaveLength(2);
    expect(api.auditEvents).toEqual([]);
    expect((await api.respond(get("/version/v1/current"))).status).toBe(200);
  });
});
