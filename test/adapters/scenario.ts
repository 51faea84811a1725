// One scenario for every server: the platform's calls and the bad input it must survive, over a
// real loopback connection. Each adapter test starts its server and hands over the base URL.
import { expect } from "vitest";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningHandler,
} from "../../src/provisioning/index.ts";

/** The limit every scenario server uses, small so that the 413 case stays cheap. */
export const scenarioBodyLimit = 4096;

export interface ScenarioServer {
  /** Where the Provisioning API is served, without a trailing slash: `http://127.0.0.1:1234/ldap`. */
  url: string;
  close(): Promise<void>;
}

export interface ScenarioOptions {
  /** Passed to the handler when the server does not strip its mount path itself. */
  basePath?: string;
  /**
   * A body parser in front answers bad JSON itself (Express's `express.json()`): only the status
   * is checked then, not the body.
   */
  parserInFront?: boolean;
  /** Middleware hands paths outside the API on to the framework, which answers 404 its own way. */
  passesOn?: boolean;
}

/** Runs the scenario against a server that `start` builds around the given handler. */
export async function runScenario(
  start: (handler: ProvisioningHandler) => Promise<ScenarioServer>,
  options: ScenarioOptions = {},
): Promise<void> {
  const store = new MemoryUserStore();
  const handler = createProvisioningHandler({
    store,
    bodyLimit: scenarioBodyLimit,
    reset: true,
    ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
  });
  const server = await start(handler);
  try {
    await scenario(server.url, store, options);
  } finally {
    await server.close();
  }
}

const json = { "content-type": "application/json" };

async function scenario(url: string, store: MemoryUserStore, options: ScenarioOptions) {
  // Bytes, not a string: fetch would add text/plain to a string body sent without a content type.
  const call = (
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = json,
  ) =>
    fetch(`${url}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: new TextEncoder().encode(body) }),
    });
  const expectError = async (response: Response, status: number, error: string) => {
    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({ error, message: expect.any(String) });
  };

  expect((await call("GET", "/v1/ping")).status).toBe(204);
  const head = await call("HEAD", "/v1/ping/");
  expect(head.status).toBe(204);

  const bob = {
    uuid: "97e86d2d-b076",
    username: "bob",
    first_name: "Bob",
    password: "password123",
  };
  expect((await call("POST", "/v1/user/create", JSON.stringify(bob))).status).toBe(201);
  // Redelivered create, then a partial modify: absent fields keep their value.
  expect((await call("POST", "/v1/user/create/", JSON.stringify(bob))).status).toBe(201);
  const modify = { uuid: bob.uuid, password: "newpassword456", department: "R&D" };
  expect((await call("POST", "/v1/user/modify", JSON.stringify(modify))).status).toBe(204);
  expect(await store.get(bob.uuid)).toEqual({
    uuid: bob.uuid,
    username: "bob",
    firstName: "Bob",
    password: "newpassword456",
    extra: { department: "R&D" },
  });

  // A modify of a missing user creates it; an array creates each; no content type is JSON too.
  const odd = "CN=Ödön/Zoë?#%20+&";
  const missing = JSON.stringify({ uuid: odd, email: "z@example.com" });
  expect((await call("POST", "/v1/user/modify", missing)).status).toBe(204);
  const many = JSON.stringify([{ uuid: "a1" }, { uuid: "a2", full_name: "A Two" }]);
  expect((await call("POST", "/v1/user/create?batch=1", many, {})).status).toBe(201);
  expect((await store.list()).map((user) => user.uuid)).toEqual([bob.uuid, odd, "a1", "a2"]);

  expect((await call("DELETE", `/v1/user/${encodeURIComponent(odd)}`)).status).toBe(204);
  expect((await call("DELETE", `/v1/user/${encodeURIComponent(odd)}`)).status).toBe(204);
  expect(await store.get(odd)).toBeUndefined();

  const unknown = await call("GET", "/v1/unknown");
  if (options.passesOn) expect(unknown.status).toBe(404);
  else await expectError(unknown, 404, "not_found");
  const wrongMethod = await call("GET", "/v1/user/create");
  expect(wrongMethod.headers.get("allow")).toBe("POST, DELETE");
  await expectError(wrongMethod, 405, "method_not_allowed");
  // Behind a parser, a body that is not a user record may be what the parser made of one: 500.
  await expectError(
    await call("POST", "/v1/user/create", JSON.stringify({ username: "x" })),
    options.parserInFront ? 500 : 400,
    options.parserInFront ? "internal_error" : "invalid_uuid",
  );
  // Any content type is read as JSON (fetch sends text/plain for a string); a browser is refused.
  const textPlain = { "content-type": "text/plain;charset=UTF-8" };
  const plain = JSON.stringify({ uuid: "plain" });
  expect((await call("POST", "/v1/user/create", plain, textPlain)).status).toBe(201);
  const fromPage = { ...textPlain, origin: "https://evil.example" };
  await expectError(await call("POST", "/v1/user/create", plain, fromPage), 403, "forbidden");
  expect((await call("DELETE", "/v1/user/plain")).status).toBe(204);
  const badJson = await call("POST", "/v1/user/create", '{"uuid": "x", password: "secret-1"}');
  const tooLarge = await call(
    "POST",
    "/v1/user/create",
    JSON.stringify({ uuid: "big", extra: "x".repeat(scenarioBodyLimit) }),
  );
  if (options.parserInFront) {
    expect(badJson.status).toBe(400);
    expect(await badJson.text()).not.toContain("secret-1");
    expect(tooLarge.status).toBe(413);
  } else {
    await expectError(badJson, 400, "invalid_json");
    await expectError(tooLarge, 413, "payload_too_large");
  }
  expect(await store.get("big")).toBeUndefined();

  expect((await call("POST", "/v1/reset")).status).toBe(204);
  expect(await store.list()).toEqual([]);
}
