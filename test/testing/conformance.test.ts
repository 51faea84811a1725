import { describe, expect, it } from "vitest";
import { type ConformanceReport, runConformance } from "../../src/testing/index.ts";
import {
  createReferenceProvisioning,
  type ReferenceProvisioning,
} from "../support/reference-provisioning.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

const startServer = serveForEachTest();

type Handler = (request: Request) => Promise<Response>;

/** Serves the reference application, altered by `wrong`, over HTTP on 127.0.0.1. */
async function serve(
  wrong?: (request: Request, app: ReferenceProvisioning) => Promise<Response | undefined>,
) {
  const app = createReferenceProvisioning();
  const handler: Handler = async (request) =>
    (await wrong?.(request.clone(), app)) ?? app.fetch(request);
  const server = await startServer(handler);
  return { app, url: server.url, close: server.close };
}

const failed = (report: ConformanceReport) =>
  report.results.filter((result) => !result.passed).map((result) => result.name);

const route = (request: Request) => `${request.method} ${new URL(request.url).pathname}`;
const status = (code: number) => new Response(null, { status: code });
/** Answers 200 where the spec says 201. */
const answer200ToCreate = async (request: Request, app: ReferenceProvisioning) => {
  const response = await app.fetch(request);
  return response.status === 201 ? status(200) : response;
};
const reserved = ["slash", "question mark", "hash", "percent sign", "space", "plus sign"];
const reservedCheck = (description: string) =>
  expect.stringMatching(new RegExp(`^uuid with a ${description} \\(`));

describe("runConformance", () => {
  it("passes a correct implementation, over HTTP and in-process, with and without readUser", async () => {
    const { app, url } = await serve();
    const overHttp = await runConformance(url);
    expect(failed(overHttp)).toEqual([]);
    expect(overHttp.passed).toBe(true);
    expect(overHttp.results.length).toBeGreaterThanOrEqual(22);
    const inspected = await runConformance(url, { readUser: (uuid) => app.store.get(uuid) });
    expect(failed(inspected)).toEqual([]);
    const inProcess = createReferenceProvisioning();
    expect(failed(await runConformance(inProcess))).toEqual([]);
  });

  it("leaves nothing behind in the application", async () => {
    const { app, url } = await serve();
    await runConformance(url);
    expect(app.store.list()).toEqual([]);
  });

  it("reports each step expected and what came back", async () => {
    const { url } = await serve(answer200ToCreate);
    const report = await runConformance(url);
    expect(report.passed).toBe(false);
    expect(
      report.results.find((result) => result.name === "duplicate create answers 201 and updates"),
    ).toEqual({
      name: "duplicate create answers 201 and updates",
      rule: "spec 4.1 rule 2, 7 rule 2",
      passed: false,
      expected: "create: 2xx; create again, changed: 201",
      actual: "create: 200; create again, changed: 200",
    });
  });

  it("fails a server that answers 200 to create", async () => {
    const { url } = await serve(answer200ToCreate);
    expect(failed(await runConformance(url))).toEqual([
      "create answers 201",
      "create with only a uuid answers 201",
      "duplicate create answers 201 and updates",
      "redelivered create answers 201",
      "unknown fields are accepted",
      ...reserved.map(reservedCheck),
      "non-ASCII data is kept intact",
      "a full sync with changes completes",
    ]);
  });

  it("fails a server that answers 404 to a delete of a missing user", async () => {
    const { url } = await serve(async (request, app) => {
      const uuid = /^DELETE \/v1\/user\/([^/]+)$/.exec(route(request))?.[1];
      return uuid && !app.store.get(decodeURIComponent(uuid)) ? status(404) : undefined;
    });
    expect(failed(await runConformance(url))).toEqual([
      "delete of a missing user answers 204",
      "redelivered delete answers 204",
      "a full sync with changes completes",
    ]);
  });

  it("fails a server that answers 2xx to invalid JSON", async () => {
    const { url } = await serve(async (request) => {
      if (request.method !== "POST") return undefined;
      try {
        JSON.parse(await request.text());
        return undefined;
      } catch {
        return status(200);
      }
    });
    expect(failed(await runConformance(url))).toEqual(["invalid JSON is not answered 2xx"]);
  });

  it("fails a server that answers 2xx to a record without uuid", async () => {
    const { url } = await serve(async (request) => {
      if (request.method !== "POST") return undefined;
      const body = await request.json().catch(() => undefined);
      if (typeof body !== "object" || body === null || "uuid" in body) return undefined;
      return status(route(request).endsWith("create") ? 201 : 204);
    });
    expect(failed(await runConformance(url))).toEqual([
      "a record without uuid is not answered 2xx",
    ]);
  });

  it("fails a server that answers 200 to ping", async () => {
    const { url } = await serve(async (request) =>
      route(request) === "GET /v1/ping" ? status(200) : undefined,
    );
    expect(failed(await runConformance(url))).toEqual([
      "ping answers 204",
      "a full sync with changes completes",
    ]);
  });

  it("fails a server that answers 409 to a duplicate create", async () => {
    const { url } = await serve(async (request, app) => {
      if (route(request) !== "POST /v1/user/create") return undefined;
      const { uuid } = JSON.parse(await request.text());
      return app.store.get(uuid) ? status(409) : undefined;
    });
    expect(failed(await runConformance(url))).toEqual([
      "duplicate create answers 201 and updates",
      "redelivered create answers 201",
    ]);
  });

  it("fails a server that answers 404 to a modify of a missing user", async () => {
    const { url } = await serve(async (request, app) => {
      if (route(request) !== "POST /v1/user/modify") return undefined;
      const { uuid } = JSON.parse(await request.text());
      return app.store.get(uuid) ? undefined : status(404);
    });
    expect(failed(await runConformance(url))).toEqual(["modify of a missing user answers 204"]);
  });

  it("fails a server that refuses unknown fields", async () => {
    const { url } = await serve(async (request) => {
      if (request.method !== "POST") return undefined;
      const body = JSON.parse(await request.text());
      return "department" in body
        ? Response.json({ error: "unknown field" }, { status: 400 })
        : undefined;
    });
    const report = await runConformance(url);
    expect(failed(report)).toEqual(["unknown fields are accepted"]);
    expect(report.results.find((result) => !result.passed)?.actual).toBe(
      'create with unknown fields: 400 {"error":"unknown field"}',
    );
  });

  it("fails a server that decodes the path before routing, on a uuid with a slash", async () => {
    const { url } = await serve(async (request, app) => {
      const path = decodeURIComponent(new URL(request.url).pathname);
      if (request.method !== "DELETE") return undefined;
      const uuid = /^\/v1\/user\/([^/]+)$/.exec(path)?.[1];
      if (uuid === undefined) return status(404);
      await app.store.delete(uuid);
      return status(204);
    });
    expect(failed(await runConformance(url))).toEqual([reservedCheck("slash")]);
  });

  it("with readUser, fails a server that deletes by the undecoded path segment", async () => {
    const { app, url } = await serve(async (request) => {
      const uuid = /^DELETE \/v1\/user\/([^/]+)$/.exec(route(request))?.[1];
      if (uuid === undefined) return undefined;
      await app.store.delete(uuid);
      return status(204);
    });
    // Its answers are all right: only reading the store back shows the wrong user was targeted.
    expect(failed(await runConformance(url))).toEqual([]);
    const report = await runConformance(url, { readUser: (uuid) => app.store.get(uuid) });
    expect(failed(report)).toEqual([
      ...reserved.map(reservedCheck),
      "non-ASCII data is kept intact",
    ]);
    expect(report.results.find((result) => result.name.includes("space"))?.actual).toMatch(
      /read back after delete: still stored$/,
    );
  });

  it("with readUser, fails a server whose modify replaces the record instead of merging", async () => {
    const { app, url } = await serve(async (request) => {
      if (route(request) !== "POST /v1/user/modify") return undefined;
      const { uuid } = JSON.parse(await request.text());
      await app.store.delete(uuid);
      return undefined;
    });
    const report = await runConformance(url, { readUser: (uuid) => app.store.get(uuid) });
    expect(failed(report)).toEqual([
      "modify answers 204",
      "partial modify (uuid and one field) keeps the other fields",
      "redelivered modify answers 204",
      "unknown fields are accepted",
      "non-ASCII data is kept intact",
      "a full sync with changes completes",
    ]);
    expect(report.results.find((result) => result.name.startsWith("partial modify"))?.actual).toBe(
      'create: 201; modify password only: 204; read back: userId absent instead of "4711"',
    );
  });

  it("stops after the check under way when its signal aborts", async () => {
    const controller = new AbortController();
    const app = createReferenceProvisioning();
    const report = await runConformance(
      {
        fetch: async (request) => {
          if (request.method === "POST") controller.abort();
          return app.fetch(request);
        },
      },
      { signal: controller.signal },
    );
    expect(report.passed).toBe(false);
    expect(report.results.map((result) => result.name)).toEqual([
      "ping answers 204",
      "create answers 201",
    ]);
  });

  it("fails every check of an unreachable server, saying why", async () => {
    const { url, close } = await serve();
    await close();
    const report = await runConformance(url, { timeoutMs: 2000 });
    expect(report.results.every((result) => !result.passed)).toBe(true);
    expect(report.results[0]?.actual).toMatch(/^ping: no answer \(.*ECONNREFUSED/);
  });
});
