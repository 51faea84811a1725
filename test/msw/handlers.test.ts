import { HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createVersionClient } from "../../src/clients/version/index.ts";
import { createIntegrationApiHandlers, createSdkApiHandlers } from "../../src/msw/index.ts";

const baseUrl = "https://platform.test";
const { handlers, api } = createIntegrationApiHandlers({
  baseUrl: `${baseUrl}/`,
  current: { version: "1.4.0", releaseSequence: 40, releaseNotes: "Current" },
  updates: [
    { version: "1.5.0", releaseSequence: 41, releaseDate: new Date("2024-01-02T03:04:05.678Z") },
  ],
});
const server = setupServer(...handlers);

beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => {
  server.resetHandlers();
  api.reset();
});
afterAll(() => server.close());

const json = { accept: "application/json" };

describe("createIntegrationApiHandlers", () => {
  // Issue 39's fixes, m4: a client's "auto" with this baseUrl asks GET /healthz; the handlers
  // answer it as the Integration API does, so the choice is made once and sticks.
  it("answers GET /healthz as the Integration API, so auto with this baseUrl decides once", async () => {
    const paths: string[] = [];
    const listener = ({ request }: { request: Request }) => {
      paths.push(new URL(request.url).pathname);
    };
    server.events.on("request:start", listener);
    try {
      const version = createVersionClient({ baseUrl });
      for (let call = 0; call < 3; call++) {
        expect((await version.current()).version).toBe("1.4.0");
      }
      expect(version.api).toBe("integration");
      expect(paths.filter((path) => path === "/healthz")).toHaveLength(1);
    } finally {
      server.events.removeListener("request:start", listener);
    }
  });

  it("serves the current version and the pending updates to a real fetch", async () => {
    const current = await fetch(`${baseUrl}/version/v1/current`, { headers: json });
    expect(current.status).toBe(200);
    expect(await current.json()).toMatchObject({ version: "1.4.0", release_sequence: 40 });
    const updates = await fetch(`${baseUrl}/version/v1/updates`, { headers: json });
    expect(await updates.json()).toEqual([
      {
        version: "1.5.0",
        release_sequence: 41,
        release_notes: "",
        release_date: "2024-01-02T03:04:05.6780000Z",
      },
    ]);
  });

  it("applies an update with PUT and moves the current version", async () => {
    const response = await fetch(`${baseUrl}/version/v1/41`, { method: "PUT", headers: json });
    expect(response.status).toBe(204);
    expect(api.current).toMatchObject({ version: "1.5.0", releaseSequence: 41 });
    expect(api.updates).toEqual([]);
    const again = await fetch(`${baseUrl}/version/v1/41`, { method: "PUT", headers: json });
    expect(again.status).toBe(404);
  });

  it("records audit events, answering 201 with an empty text/plain body", async () => {
    const response = await fetch(`${baseUrl}/audit/v1/event`, {
      method: "POST",
      headers: { ...json, "content-type": "application/json" },
      body: JSON.stringify({ action: "user.login", ip_address: "192.0.2.1" }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(response.headers.get("content-length")).toBe("0");
    expect(await response.text()).toBe("");
    expect(api.auditEvents).toEqual([{ action: "user.login", ipAddress: "192.0.2.1" }]);
  });

  it("turns an injected network error into a rejected fetch, then an injected status", async () => {
    api.failNext(1, { networkError: true });
    api.failNext(1, { status: 503 });
    await expect(fetch(`${baseUrl}/version/v1/current`, { headers: json })).rejects.toThrow(
      TypeError,
    );
    expect((await fetch(`${baseUrl}/version/v1/current`, { headers: json })).status).toBe(503);
    expect((await fetch(`${baseUrl}/version/v1/current`, { headers: json })).status).toBe(200);
  });

  it("leaves other origins, paths and methods to msw's unhandled-request strategy", async () => {
    const unhandled: string[] = [];
    const collect = ({ request }: { request: Request }) =>
      void unhandled.push(`${request.method} ${request.url}`);
    server.events.on("request:unhandled", collect);
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const [url, method] of [
        ["https://elsewhere.test/version/v1/current", "GET"],
        [`${baseUrl}/version/v2/current`, "GET"],
        [`${baseUrl}/audit/v1/event`, "GET"],
      ] as const) {
        await expect(fetch(url, { method })).rejects.toThrow();
      }
    } finally {
      quiet.mockRestore();
      server.events.removeListener("request:unhandled", collect);
    }
    expect(unhandled).toEqual([
      "GET https://elsewhere.test/version/v1/current",
      `GET ${baseUrl}/version/v2/current`,
      `GET ${baseUrl}/audit/v1/event`,
    ]);
  });

  it("serves the Identity, Status, License and Console endpoints to a real fetch", async () => {
    const post = (path: string, body: unknown, method = "POST") =>
      fetch(`${baseUrl}${path}`, {
        method,
        headers: { ...json, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const answers = [
      await fetch(`${baseUrl}/identity/v1/sources`, { headers: json }),
      await post("/identity/v1/login", { username: "bob", password: "password123" }),
      await post("/identity/v1/login", { username: "bob", password: "nope" }),
      await fetch(`${baseUrl}/identity/v1/user/bob`, { headers: json }),
      await fetch(`${baseUrl}/identity/v1/user/nobody`, { headers: json }),
      await fetch(`${baseUrl}/identity/v1/user/bob/exists`, { headers: json }),
      await post("/status/v1/startup", { message: "Ready" }, "PUT"),
      await fetch(`${baseUrl}/license/v1/license`, { headers: json }),
      await fetch(`${baseUrl}/license/v1/field/max_users`, { headers: json }),
      await fetch(`${baseUrl}/console/v1/option?name=hostname`, { headers: json }),
    ];
    expect(answers.map((response) => response.status)).toEqual([
      200, 200, 401, 200, 404, 200, 204, 200, 200, 400,
    ]);
    expect(await answers[5]?.text()).toBe("true");
    expect(api.identity.loginAttempts).toHaveLength(2);
    expect(api.console.startupStatus).toEqual({ message: "Ready" });
  });

  it("lets a test override one endpoint with server.use", async () => {
    server.use(http.get(`${baseUrl}/version/v1/updates`, () => HttpResponse.json({ items: [] })));
    const response = await fetch(`${baseUrl}/version/v1/updates`);
    expect(await response.json()).toEqual({ items: [] });
  });

  it("refuses a base URL with a path, which the platform's never has", () => {
    expect(() => createIntegrationApiHandlers({ baseUrl: `${baseUrl}/api` })).toThrow(
      "without a path",
    );
  });

  it("refuses a path for the newer API's handlers too, by the clients' own rule", () => {
    expect(() => createSdkApiHandlers({ baseUrl: "http://replicated:3000/api/v1" })).toThrow(
      "baseUrl must be the API's scheme, host and port without a path",
    );
  });
});
