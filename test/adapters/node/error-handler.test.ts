import express from "express";
import { afterEach, describe, expect, it, vi } from "vitest";
import { toNodeErrorHandler, toNodeHandler } from "../../../src/adapters/node/index.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../../src/provisioning/index.ts";
import { start } from "../http.ts";

/** An Express app that parses every JSON body before the API, as many applications do. */
async function appWithParserInFront(withErrorHandler: boolean) {
  const store = new MemoryUserStore();
  const handler = createProvisioningHandler({ store });
  const app = express();
  app.use(express.json({ limit: "1kb" }));
  app.use("/ldap/auth", toNodeHandler(handler));
  if (withErrorHandler) app.use("/ldap/auth", toNodeErrorHandler(handler));
  app.post("/api/echo", (req, res) => res.json(req.body));
  return { store, server: await start(app) };
}

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

describe("toNodeErrorHandler", () => {
  afterEach(() => vi.restoreAllMocks());

  it("answers a parser's rejections as the API does, without logging the password", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const { store, server } = await appWithParserInFront(true);
    try {
      const invalid = await post(
        `${server.origin}/ldap/auth/v1/user/create`,
        '{"uuid":"u1","password":"hunter2"',
      );
      expect(invalid.status).toBe(400);
      expect(invalid.headers.get("content-type")).toMatch(/^application\/json/);
      const body = await invalid.text();
      expect(JSON.parse(body)).toEqual({
        error: "invalid_json",
        message: "The body is not valid JSON",
      });

      const large = await post(
        `${server.origin}/ldap/auth/v1/user/modify`,
        JSON.stringify({ uuid: "u1", password: "hunter2", full_name: "x".repeat(2000) }),
      );
      expect(large.status).toBe(413);
      expect(await large.json()).toMatchObject({ error: "payload_too_large" });

      const charset = await post(`${server.origin}/ldap/auth/v1/user/create`, '{"uuid":"u1"}', {
        "content-type": "application/json; charset=latin9",
      });
      expect(charset.status).toBe(415);

      expect(await store.list()).toEqual([]);
      expect(JSON.stringify(logged.mock.calls)).not.toContain("hunter2");
    } finally {
      await server.close();
    }
  });

  it("leaves the application's own routes and other errors to Express", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const { server } = await appWithParserInFront(true);
    try {
      const own = await post(`${server.origin}/api/echo`, "{not json");
      expect(own.status).toBe(400);
      expect(own.headers.get("content-type")).toMatch(/^text\/html/);
      const valid = await post(`${server.origin}/ldap/auth/v1/user/create`, '{"uuid":"u1"}');
      expect(valid.status).toBe(201);
    } finally {
      await server.close();
    }
  });

  it("is what keeps the JSON error: without it Express answers in HTML", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const { server } = await appWithParserInFront(false);
    try {
      const invalid = await post(`${server.origin}/ldap/auth/v1/user/create`, "{not json");
      expect(invalid.status).toBe(400);
      expect(invalid.headers.get("content-type")).toMatch(/^text\/html/);
    } finally {
      await server.close();
    }
  });
});
