// Real body parsers in front of the Provisioning API, over real HTTP on loopback: what the issue
// reproduced (express.json() turning {"user_id":12345} into a 400, express.urlencoded() into a 400
// invalid_uuid) and what a stream read in front leaves.
import type { RequestHandler } from "express";
import express from "express";
import Koa from "koa";
import { describe, expect, it, vi } from "vitest";
import { toKoaMiddleware } from "../../../src/adapters/koa/index.ts";
import { toNodeHandler } from "../../../src/adapters/node/index.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../../src/provisioning/index.ts";
import { start } from "../http.ts";

function handlerWithLogger() {
  const store = new MemoryUserStore();
  const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  return { store, logger, handler: createProvisioningHandler({ store, logger }) };
}

async function expressBehind(parser: RequestHandler) {
  const parts = handlerWithLogger();
  const app = express().use(parser).use("/ldap/auth", toNodeHandler(parts.handler));
  return { ...parts, server: await start(app) };
}

const post = (url: string, body: string, contentType = "application/json") =>
  fetch(url, { method: "POST", headers: { "content-type": contentType }, body });

describe("express.json() in front", () => {
  // Catches: issue 26's 400 "cannot be stored as it was written" for a number the parser made.
  it("stores a safe integer and a decimal as the raw body would", async () => {
    const { store, server } = await expressBehind(express.json());
    try {
      const created = await post(
        `${server.origin}/ldap/auth/v1/user/create`,
        '{"uuid":"u1","user_id":12345,"first_name":2.5,"uid_number":1000}',
      );
      expect(created.status).toBe(201);
      const modified = await post(
        `${server.origin}/ldap/auth/v1/user/modify`,
        '[{"uuid":"u1","last_name":0.125}]',
      );
      expect(modified.status).toBe(204);
      expect(await store.get("u1")).toEqual({
        uuid: "u1",
        userId: "12345",
        firstName: "2.5",
        lastName: "0.125",
        extra: { uid_number: 1000 },
      });
    } finally {
      await server.close();
    }
  });

  // Catches: digits lost to the parser stored as if exact, or a 4xx for the platform's message.
  it("answers 500 to an integer the parser could not keep, and logs the fix once", async () => {
    const { store, logger, server } = await expressBehind(express.json());
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const response = await post(
          `${server.origin}/ldap/auth/v1/user/create`,
          '{"uuid":"u1","user_id":12345678901234567890}',
        );
        expect(response.status).toBe(500);
        expect(await response.json()).toMatchObject({ error: "internal_error" });
      }
      expect(logger.error).toHaveBeenCalledTimes(1);
      expect(String(logger.error.mock.calls[0]?.[0])).toContain("2^53");
      expect(await store.list()).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe("express.urlencoded() in front", () => {
  // Catches: issue 26's 400 invalid_uuid, a log per message, a log that quotes the password.
  it.each([false, true])(
    "answers 500 with a JSON error and logs once (extended: %s)",
    async (extended) => {
      const { store, logger, server } = await expressBehind(express.urlencoded({ extended }));
      try {
        const body = '{"uuid":"u1","username":"bob","password":"hunter2"}';
        for (let attempt = 0; attempt < 3; attempt++) {
          const response = await post(
            `${server.origin}/ldap/auth/v1/user/create`,
            body,
            "application/x-www-form-urlencoded",
          );
          expect(response.status).toBe(500);
          expect(response.headers.get("content-type")).toMatch(/^application\/json/);
          const error = (await response.json()) as { error: string; message: string };
          expect(error.error).toBe("internal_error");
          expect(error.message).not.toContain("hunter2");
        }
        expect(logger.error).toHaveBeenCalledTimes(1);
        expect(String(logger.error.mock.calls[0]?.[0])).toContain(
          "Mount the Provisioning API before that parser",
        );
        expect(JSON.stringify(logger.error.mock.calls)).not.toContain("hunter2");
        // A JSON content type is not the form parser's: the API reads the body itself.
        const json = await post(`${server.origin}/ldap/auth/v1/user/create`, body);
        expect(json.status).toBe(201);
        expect((await store.get("u1"))?.username).toBe("bob");
      } finally {
        await server.close();
      }
    },
  );
});

describe("a body stream read in front, nothing left", () => {
  // Catches: a consumed stream answered 400 as an empty body.
  it("answers 500 on Express", async () => {
    const drain: RequestHandler = (req, _res, next) => {
      req.resume();
      req.on("end", () => next());
    };
    const { store, logger, server } = await expressBehind(drain);
    try {
      const response = await post(`${server.origin}/ldap/auth/v1/user/create`, '{"uuid":"u1"}');
      expect(response.status).toBe(500);
      expect(String(logger.error.mock.calls[0]?.[0])).toContain("left nothing parsed");
      // Routes without a body still answer.
      expect((await fetch(`${server.origin}/ldap/auth/v1/ping`)).status).toBe(204);
      expect(await store.list()).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("answers 500 on Koa, and keeps an exact number a parser left", async () => {
    const { store, logger, handler } = handlerWithLogger();
    const koa = new Koa()
      .use(async (ctx, next) => {
        let text = "";
        for await (const chunk of ctx.req) text += chunk;
        if (ctx.get("x-parse") === "yes")
          (ctx.request as { body?: unknown }).body = JSON.parse(text);
        await next();
      })
      .use(toKoaMiddleware(handler));
    const server = await start(koa.callback());
    try {
      const consumed = await post(`${server.origin}/v1/user/create`, '{"uuid":"u1"}');
      expect(consumed.status).toBe(500);
      expect(logger.error).toHaveBeenCalledTimes(1);
      const parsed = await fetch(`${server.origin}/v1/user/create`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-parse": "yes" },
        body: '{"uuid":"u2","user_id":42}',
      });
      expect(parsed.status).toBe(201);
      expect(await store.list()).toEqual([{ uuid: "u2", userId: "42" }]);
    } finally {
      await server.close();
    }
  });
});
