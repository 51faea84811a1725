// A body a framework's parser read before the API: numbers that convert exactly are kept as the
// raw body would have kept them, and what the parser made unreadable is the application's
// misconfiguration, a 500 logged once, never a 400 that would stall the sync for good.
import { describe, expect, it, vi } from "vitest";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningHandlerOptions,
} from "../../src/provisioning/index.ts";
import { bodyReadInFront } from "../../src/provisioning/types.ts";
import { call, errorOf } from "./helpers.ts";

function setup(options: Partial<ProvisioningHandlerOptions> = {}) {
  const store = new MemoryUserStore();
  const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const handler = createProvisioningHandler({ store, logger, ...options });
  const parsed = (json: unknown, path = "/v1/user/create") =>
    handler.handle({ method: "POST", path, headers: {}, json });
  return { store, logger, handler, parsed };
}

describe("numbers a body parser in front parsed", () => {
  // Catches: every parsed number refused (the old 400), or one stored in another form than the
  // raw body's.
  it("keeps a safe integer and a decimal as their text, as the raw body would", async () => {
    const { store, parsed, handler } = setup();
    const json = {
      uuid: "u1",
      user_id: 12345,
      username: -7,
      first_name: 2.5,
      last_name: 1e-7,
      full_name: { ids: [1, 0.25] },
      level: 3,
      ratio: { x: 0.5 },
    };
    expect((await parsed(json)).status).toBe(201);
    const raw = JSON.stringify({ ...json, uuid: "u2" });
    expect((await call(handler, "POST", "/v1/user/create", raw)).status).toBe(201);
    const expected = {
      userId: "12345",
      username: "-7",
      firstName: "2.5",
      lastName: "1e-7",
      fullName: '{"ids":[1,0.25]}',
      extra: { level: 3, ratio: { x: 0.5 } },
    };
    expect(await store.get("u1")).toEqual({ uuid: "u1", ...expected });
    expect(await store.get("u2")).toEqual({ uuid: "u2", ...expected });
  });

  // Catches: an exactness test that lets 2^53 through (its digits may be 2^53 + 1's) or refuses
  // the largest safe integer.
  it("draws the line at 2^53, in a field and nested", async () => {
    const { store, parsed } = setup();
    expect((await parsed({ uuid: "u1", user_id: 2 ** 53 - 1 })).status).toBe(201);
    expect((await store.get("u1"))?.userId).toBe("9007199254740991");
    for (const json of [
      { uuid: "u2", user_id: 2 ** 53 },
      { uuid: "u2", user_id: -(2 ** 53) },
      { uuid: "u2", groups: [1, 1e21] },
      { uuid: "u2", full_name: { id: 2 ** 60 } },
    ]) {
      const response = await parsed(json);
      expect([response.status, errorOf(response).error]).toEqual([500, "internal_error"]);
    }
    expect(await store.get("u2")).toBeUndefined();
  });
});

describe("a body a parser in front made unreadable", () => {
  // What express.urlencoded() makes of {"uuid":"u1","password":"hunter2"}.
  const formParsed = { '{"uuid":"u1","password":"hunter2"}': "" };

  // Catches: the 400 invalid_uuid of issue 26, a log line per message, a log that quotes the body.
  it("answers 500 with a JSON body, and logs once how to fix it, without the body", async () => {
    const { store, logger, parsed } = setup();
    for (const json of [formParsed, formParsed, "a string", [], [{ uuid: 5 }], { uuid: "" }]) {
      const response = await parsed(json);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      expect([response.status, errorOf(response).error]).toEqual([500, "internal_error"]);
      expect(errorOf(response).message).toContain("mount the Provisioning API before");
    }
    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(logger.error).toHaveBeenCalledWith(expect.any(String), {
      operation: "create",
      status: 500,
    });
    const [line] = logger.error.mock.calls[0] as [string];
    expect(line).toContain("Mount the Provisioning API before that parser");
    expect(line).toContain("express.urlencoded()");
    expect(JSON.stringify(logger.error.mock.calls)).not.toContain("hunter2");
    expect(await store.list()).toEqual([]);
  });

  // Catches: a log flag shared by every handler of the process.
  it("logs once per handler", async () => {
    const first = setup();
    const second = setup();
    await first.parsed(formParsed);
    await second.parsed(formParsed, "/v1/user/modify");
    expect(first.logger.error).toHaveBeenCalledTimes(1);
    expect(second.logger.error).toHaveBeenCalledTimes(1);
    expect(String(second.logger.error.mock.calls[0]?.[0])).toContain("modify answered 500");
  });

  // Catches: onError skipped for this 500, or its failure turning the answer into a rejection.
  it("gives every occurrence to onError", async () => {
    const onError = vi.fn(() => {
      throw new Error("onError broke");
    });
    const { parsed } = setup({ onError });
    expect((await parsed(formParsed)).status).toBe(500);
    expect((await parsed(formParsed)).status).toBe(500);
    expect(onError).toHaveBeenCalledTimes(2);
    expect(onError).toHaveBeenLastCalledWith(expect.any(Error), {
      operation: "create",
      uuid: undefined,
      status: 500,
    });
  });

  // Catches: a stream read in front with nothing left answered as an empty body (400).
  it("answers 500 when the body stream was read in front and nothing parsed is left", async () => {
    const { parsed, logger } = setup();
    const response = await parsed(bodyReadInFront);
    expect([response.status, errorOf(response).error]).toEqual([500, "internal_error"]);
    expect(String(logger.error.mock.calls[0]?.[0])).toContain("left nothing parsed");
  });

  // Catches: a rule of the raw body (an unstorable string) turned into a 500 for parsed bodies.
  it("still refuses what the raw body refuses for itself", async () => {
    const { parsed, logger } = setup();
    const response = await parsed({ uuid: "u1", username: "\ud800" });
    expect([response.status, errorOf(response).error]).toEqual([400, "invalid_user"]);
    expect(logger.error).not.toHaveBeenCalled();
  });
});
