import { describe, expect, it } from "vitest";
import { toWireUser } from "../../src/platform/wire-user.ts";
import { type ConformanceReport, runConformance } from "../../src/testing/index.ts";
import {
  createReferenceProvisioning,
  type ReferenceProvisioning,
} from "../support/reference-provisioning.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

const startServer = serveForEachTest();

type Handler = (request: Request) => Promise<Response>;

/**
 * Serves the reference application, altered by `wrong`, over HTTP on 127.0.0.1, with a correct
 * read route at GET /v1/user/:uuid whatever `wrong` does: `readUser` is its URL template.
 */
async function serve(
  wrong?: (request: Request, app: ReferenceProvisioning) => Promise<Response | undefined>,
) {
  const app = createReferenceProvisioning();
  const handler: Handler = async (request) => {
    const read = /^GET \/v1\/user\/([^/]+)$/.exec(route(request))?.[1];
    if (read !== undefined) {
      const user = await app.store.get(decodeURIComponent(read));
      return user ? Response.json(toWireUser(user)) : status(404);
    }
    return (await wrong?.(request.clone(), app)) ?? app.fetch(request);
  };
  const server = await startServer(handler);
  return { app, url: server.url, readUser: `${server.url}/v1/user/{uuid}`, close: server.close };
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
const reserved = ["question mark", "hash", "percent sign", "space", "plus sign"];
const reservedCheck = (description: string) =>
  expect.stringMatching(new RegExp(`^uuid with a ${description} \\(`));
const slashCheck = 'uuid with a slash ("/") is deleted';
const result = (report: ConformanceReport, start: string) =>
  report.results.find((each) => each.name.startsWith(start));

describe("runConformance", () => {
  it("passes a correct implementation, over HTTP and in-process, with and without readUser", async () => {
    const { app, url, readUser } = await serve();
    const overHttp = await runConformance(url);
    expect(failed(overHttp)).toEqual([]);
    expect(overHttp.passed).toBe(true);
    expect(overHttp.results.length).toBeGreaterThanOrEqual(23);
    expect(overHttp.results.every((each) => each.warning === undefined)).toBe(true);
    const byTemplate = await runConformance(url, { readUser });
    expect(failed(byTemplate)).toEqual([]);
    expect(byTemplate.effectsVerified).toBe(true);
    const byFunction = await runConformance(url, { readUser: (uuid) => app.store.get(uuid) });
    expect(failed(byFunction)).toEqual([]);
    const inProcess = createReferenceProvisioning();
    expect(failed(await runConformance(inProcess))).toEqual([]);
  });

  it("without readUser, marks the checks that claim an effect 'status only' and says so", async () => {
    const { url, readUser } = await serve();
    const report = await runConformance(url);
    expect(report.effectsVerified).toBe(false);
    const effects = (each: ConformanceReport) =>
      Object.fromEntries(each.results.map((entry) => [entry.name, entry.effects]));
    expect(effects(report)).toMatchObject({
      "ping answers 204": undefined,
      "duplicate create answers 201 and updates": "status only",
      "partial modify (uuid and one field) keeps the other fields": "status only",
      "delete answers 204 and the user is deleted": "status only",
      "invalid JSON is not answered 2xx": undefined,
      "a full sync with changes completes": "status only",
    });
    const verified = await runConformance(url, { readUser });
    expect(effects(verified)).toMatchObject({
      "ping answers 204": undefined,
      "partial modify (uuid and one field) keeps the other fields": "verified",
      "a full sync with changes completes": "verified",
    });
  });

  it("leaves nothing behind in the application, and creates only recognisable test users", async () => {
    const { app, url, readUser } = await serve();
    const report = await runConformance(url, { readUser });
    expect(report.leftBehind).toEqual([]);
    expect(await app.store.list()).toEqual([]);
    const bodies = app.received.flatMap((request) =>
      request.path.endsWith("/create") && typeof request.body === "object" ? [request.body] : [],
    ) as Record<string, unknown>[];
    expect(bodies.length).toBeGreaterThan(30);
    for (const body of bodies.flat()) {
      if (typeof body.uuid === "string") expect(body.uuid).toMatch(/^conformance-/);
      if (body.username !== undefined) expect(body.username).toMatch(/^conformance-/);
      if (body.email !== undefined) expect(body.email).toMatch(/@([a-z]+\.)?example\.invalid$/);
    }
  });

  it("reports each step expected and what came back", async () => {
    const { url } = await serve(answer200ToCreate);
    const report = await runConformance(url);
    expect(report.passed).toBe(false);
    expect(result(report, "duplicate create")).toEqual({
      name: "duplicate create answers 201 and updates",
      rule: "spec 4.1 rule 2, 7 rule 2",
      passed: false,
      effects: "status only",
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
      slashCheck,
      "non-ASCII data is kept intact",
      "a full sync with changes completes",
    ]);
  });

  it("fails a server that answers 404 to a delete of a missing user", async () => {
    const { url } = await serve(async (request, app) => {
      const uuid = /^DELETE \/v1\/user\/([^/]+)$/.exec(route(request))?.[1];
      return uuid && !(await app.store.get(decodeURIComponent(uuid))) ? status(404) : undefined;
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

  it("fails a server that answers 409 to a duplicate create", async () => {
    const { url } = await serve(async (request, app) => {
      if (route(request) !== "POST /v1/user/create") return undefined;
      const { uuid } = JSON.parse(await request.text());
      return (await app.store.get(uuid)) ? status(409) : undefined;
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
      return (await app.store.get(uuid)) ? undefined : status(404);
    });
    expect(failed(await runConformance(url))).toEqual([
      "modify of a missing user answers 204 and creates it",
    ]);
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
    expect(report.results.find((each) => !each.passed)?.actual).toBe(
      'create with unknown fields: 400 {"error":"unknown field"}',
    );
  });

  describe("a uuid with a slash", () => {
    /** Decodes the whole path before routing, as many routers do: a/b then has two segments. */
    const decodeBeforeRouting = (answer: number) => async (request: Request) => {
      if (request.method !== "DELETE") return undefined;
      const path = decodeURIComponent(new URL(request.url).pathname);
      return /^\/v1\/user\/[^/]+$/.test(path) ? undefined : status(answer);
    };

    it("is a warning, attributed to the SDK's advice, when the server answers 4xx", async () => {
      const { url, readUser } = await serve(decodeBeforeRouting(404));
      const report = await runConformance(url, { readUser });
      expect(failed(report)).toEqual([]);
      expect(report.passed).toBe(true);
      expect(result(report, "uuid with a slash")).toMatchObject({
        passed: true,
        rule: "SDK advice, not the spec",
        warning: expect.stringMatching(/^SDK advice: .*spec does not promise/),
        actual: "create: 201; read back: as sent; delete …a%2Fb: 404",
      });
      // Its user could not be deleted: the report says so, by uuid.
      expect(report.leftBehind).toEqual([
        { uuid: expect.stringMatching(/^conformance-.*-a\/b$/), reason: "delete: 404" },
      ]);
    });

    it("fails when the server errors", async () => {
      const { url } = await serve(decodeBeforeRouting(500));
      const report = await runConformance(url);
      expect(failed(report)).toEqual([slashCheck]);
      expect(result(report, "uuid with a slash")?.warning).toBeUndefined();
    });

    it("fails when the server answers 204 and, read back, the user is still there", async () => {
      const { url, readUser } = await serve(decodeBeforeRouting(204));
      expect(failed(await runConformance(url))).toEqual([]);
      const report = await runConformance(url, { readUser });
      expect(failed(report)).toEqual([slashCheck]);
      expect(result(report, "uuid with a slash")?.actual).toMatch(
        /delete …a%2Fb: 204; read back after delete: still stored$/,
      );
    });
  });

  describe("with readUser, fails servers whose answers are right and whose effects are wrong", () => {
    it("a modify that replaces the whole record instead of merging", async () => {
      const { app, url, readUser } = await serve(async (request) => {
        if (route(request) !== "POST /v1/user/modify") return undefined;
        const { uuid } = JSON.parse(await request.text());
        await app.store.delete(uuid);
        return undefined;
      });
      expect(failed(await runConformance(url))).toEqual([]);
      const report = await runConformance(url, { readUser });
      expect(failed(report)).toEqual([
        "modify answers 204 and updates",
        "partial modify (uuid and one field) keeps the other fields",
        "redelivered modify answers 204",
        "unknown fields are accepted",
        "non-ASCII data is kept intact",
        "a full sync with changes completes",
      ]);
      expect(result(report, "partial modify")?.actual).toBe(
        'create: 201; modify email only: 204; read back: user_id: expected "4711", found absent',
      );
    });

    it("a server that stores nothing", async () => {
      const { url, readUser } = await serve(async (request) => {
        const answers: Record<string, number> = { "/create": 201, "/modify": 204 };
        const path = new URL(request.url).pathname;
        const answer = Object.entries(answers).find(([end]) => path.endsWith(end))?.[1];
        if (answer === undefined) return undefined;
        const body = await request.json().catch(() => undefined);
        return body && typeof body === "object" && "uuid" in body ? status(answer) : undefined;
      });
      expect(failed(await runConformance(url))).toEqual([]);
      const report = await runConformance(url, { readUser });
      expect(failed(report)).toEqual([
        "create answers 201",
        "create with only a uuid answers 201",
        "duplicate create answers 201 and updates",
        "redelivered create answers 201",
        "modify answers 204 and updates",
        "partial modify (uuid and one field) keeps the other fields",
        "modify of a missing user answers 204 and creates it",
        "redelivered modify answers 204",
        "delete answers 204 and the user is deleted",
        "unknown fields are accepted",
        ...reserved.map(reservedCheck),
        slashCheck,
        "non-ASCII data is kept intact",
        "a full sync with changes completes",
      ]);
      expect(result(report, "create answers 201")?.actual).toBe(
        "create: 201; read back: not found",
      );
    });

    it("a delete that never percent-decodes the uuid", async () => {
      const { app, url, readUser } = await serve(async (request) => {
        const uuid = /^DELETE \/v1\/user\/([^/]+)$/.exec(route(request))?.[1];
        if (uuid === undefined) return undefined;
        await app.store.delete(uuid);
        return status(204);
      });
      expect(failed(await runConformance(url))).toEqual([]);
      const report = await runConformance(url, { readUser });
      expect(failed(report)).toEqual([
        ...reserved.map(reservedCheck),
        slashCheck,
        "non-ASCII data is kept intact",
      ]);
      expect(result(report, "uuid with a space")?.actual).toMatch(
        /read back after delete: still stored$/,
      );
      // Its users could not be deleted either: reported, by uuid.
      expect(report.leftBehind.map((left) => left.reason)).toContain(
        "delete: 204, but the user is still stored",
      );
    });

    it("a delete that answers 204 and deletes nothing", async () => {
      const { url, readUser } = await serve(async (request) =>
        request.method === "DELETE" ? status(204) : undefined,
      );
      expect(failed(await runConformance(url))).toEqual([]);
      const report = await runConformance(url, { readUser });
      expect(failed(report)).toEqual([
        "delete answers 204 and the user is deleted",
        "redelivered delete answers 204",
        ...reserved.map(reservedCheck),
        slashCheck,
        "non-ASCII data is kept intact",
        "a full sync with changes completes",
      ]);
      expect(result(report, "delete answers 204")?.actual).toMatch(
        /; delete: 204; read back: conformance-\S+ still stored$/,
      );
      expect(report.leftBehind.length).toBeGreaterThan(20);
    });

    it("a read route that does not answer as it should", async () => {
      const { url } = await serve();
      const report = await runConformance(url, { readUser: `${url}/v1/ping?uuid={uuid}` });
      expect(result(report, "create answers 201")).toMatchObject({
        passed: false,
        actual: "create: 201; read back: the read route answered 204, not 200 or 404",
      });
    });
  });

  it("deletes what a check created when the check fails midway", async () => {
    // Every modify fails: the full sync stops with its 20 users created.
    const { app, url } = await serve(async (request) =>
      route(request) === "POST /v1/user/modify" ? status(500) : undefined,
    );
    const report = await runConformance(url);
    expect(result(report, "a full sync")?.passed).toBe(false);
    expect(report.leftBehind).toEqual([]);
    expect(await app.store.list()).toEqual([]);
  });

  it("stops after the check under way when its signal aborts, and deletes its users", async () => {
    const controller = new AbortController();
    const app = createReferenceProvisioning();
    const report = await runConformance(
      {
        fetch: async (request) => {
          const response = await app.fetch(request);
          if (request.method === "POST" && (await app.store.list()).length > 0) controller.abort();
          return response;
        },
      },
      { signal: controller.signal },
    );
    expect(report.passed).toBe(false);
    expect(report.results.map((each) => each.name)).toEqual([
      "ping answers 204",
      "create answers 201",
    ]);
    expect(report.leftBehind).toEqual([]);
    expect(await app.store.list()).toEqual([]);
  });

  it("stops at the first check whose call gets no answer in time, and the clean-up gives up at once", async () => {
    // Every modify and every delete hangs: one check in, nothing more is sent.
    let deletes = 0;
    const { app, url } = await serve(async (request) => {
      if (request.method === "DELETE") deletes++;
      return request.method === "DELETE" || route(request) === "POST /v1/user/modify"
        ? new Promise<Response>(() => {})
        : undefined;
    });
    const seen: string[] = [];
    const report = await runConformance(url, {
      timeoutMs: 1000,
      onResult: (result, { index, total }) => seen.push(`${index}/${total} ${result.name}`),
    });
    const names = report.results.map((each) => each.name);
    expect(seen).toEqual(names.map((name, index) => `${index + 1}/23 ${name}`));
    // The first check that creates a user stops the run: its clean-up's delete got no answer.
    expect(names).toEqual(["ping answers 204", "create answers 201"]);
    const last = report.results.at(-1);
    expect(report.stoppedEarly).toBe(
      `No answer within 1000 ms (check "${last?.name}"): the application hangs or is too slow. Check its logs, or raise the time-out (--timeout).`,
    );
    // Every user still stored is named; the clean-up tried one delete, not one per user.
    const stored = (await app.store.list()).map((user) => user.uuid);
    expect(report.leftBehind.map((each) => each.uuid)).toEqual(expect.arrayContaining(stored));
    expect(report.leftBehind.filter((each) => /^delete: no answer/.test(each.reason))).toHaveLength(
      1,
    );
    expect(deletes).toBe(1);
  });

  describe("stops after the ping with one line that says what to check", () => {
    it("when nothing listens", async () => {
      const { url, close } = await serve();
      await close();
      const report = await runConformance(url, { timeoutMs: 2000 });
      expect(report.results.map((each) => each.name)).toEqual(["ping answers 204"]);
      expect(report.stoppedEarly).toMatch(
        /^Nothing answers there \(.*ECONNREFUSED.*\): check the host and the port/,
      );
      expect(report.passed).toBe(false);
    });

    it("when the base path is wrong and the server answers an HTML 404", async () => {
      const server = await startServer(
        async () =>
          new Response("<!DOCTYPE html>\n<html><body>\n<h1>Not Found</h1></body></html>", {
            status: 404,
            headers: { "content-type": "text/html" },
          }),
      );
      const report = await runConformance(`${server.url}/wrong`);
      expect(report.results).toHaveLength(1);
      expect(report.stoppedEarly).toMatch(
        /^GET \/v1\/ping answered 404 with an HTML page: .* Check the base path/,
      );
      expect(report.results[0]?.actual).not.toContain("\n");
    });

    it("when ping answers 200 or 503", async () => {
      for (const code of [200, 503]) {
        const { url } = await serve(async (request) =>
          route(request) === "GET /v1/ping" ? status(code) : undefined,
        );
        const report = await runConformance(url);
        expect(failed(report)).toEqual(["ping answers 204"]);
        expect(report.results).toHaveLength(1);
        expect(report.stoppedEarly).toMatch(new RegExp(`^GET /v1/ping answered ${code}`));
      }
    });

    it("when the scheme is wrong: https against an http server", async () => {
      const { url } = await serve();
      const report = await runConformance(url.replace("http:", "https:"), { timeoutMs: 2000 });
      expect(report.results).toHaveLength(1);
      expect(report.stoppedEarly).toMatch(/check the scheme \(http or https\)/);
    });
  });
});
