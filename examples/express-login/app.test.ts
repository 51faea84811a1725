import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createConsoleClient } from "platform-integration/console";
import { createIdentityClient } from "platform-integration/identity";
import { createFakeIntegrationApi, fakeIdentityDefaults } from "platform-integration/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createLoginApp, type Logger } from "./app.ts";
import { LoginThrottle } from "./login-throttle.ts";
import { runWithStartupStatus } from "./startup-status.ts";

const { username, password } = fakeIdentityDefaults.user;
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A logger that keeps every line, to check that no password reaches it. */
function recordingLogger() {
  const lines: string[] = [];
  const logger: Logger = {
    info: (message, fields) => void lines.push(JSON.stringify({ message, ...fields })),
    error: (message, fields) => void lines.push(JSON.stringify({ message, ...fields })),
  };
  return { lines, logger };
}

/** The app on a real port, its clients calling the fake Integration API in-process. */
async function start() {
  const api = createFakeIntegrationApi();
  let now = 0;
  const throttle = new LoginThrottle({ maxFailures: 3, lockoutMs: 60_000, now: () => now });
  const { lines, logger } = recordingLogger();
  const app = createLoginApp({
    identity: createIdentityClient({
      baseUrl: "http://platform.test",
      fetch: api.fetch,
      source: fakeIdentityDefaults.source,
    }),
    throttle,
    logger,
    ready: () => true,
  });
  const server = createServer(app).listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const login = async (name: string, secret: string) => {
    const response = await fetch(`${url}/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: name, password: secret }),
    });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };
  return {
    api,
    lines,
    login,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("POST /login", () => {
  it("logs in a directory user and returns the groups", async () => {
    const { login } = await start();
    expect(await login(username, password)).toMatchObject({
      status: 200,
      body: { username: "bob", groups: ["users"] },
    });
  });

  it("answers the same 401 for a wrong password and an unknown user", async () => {
    const { login } = await start();
    const wrong = await login(username, "wrong");
    const unknown = await login("nobody", "wrong");
    expect(wrong).toMatchObject({ status: 401 });
    expect(unknown.body).toEqual(wrong.body);
  });

  it("locks the account after 3 failures without asking the directory again, then unlocks", async () => {
    const { api, login, advance } = await start();
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await login(username, `guess-${attempt}`)).status).toBe(401);
    }
    const locked = await login("BOB", password);
    expect(locked.status).toBe(429);
    expect(locked.headers.get("retry-after")).toBe("60");
    // The right password while locked is refused too, and the directory was not asked.
    expect(api.identity.loginAttempts).toHaveLength(3);

    advance(60_000);
    expect((await login(username, password)).status).toBe(200);
    // A success resets the count: two more failures do not lock.
    await login(username, "again-1");
    await login(username, "again-2");
    expect((await login(username, password)).status).toBe(200);
  });

  it("answers 503 when the Identity API is down, and never logs the password", async () => {
    const { api, login, lines } = await start();
    api.failNext(1, { status: 500 });
    const secret = "Very-Secret-pw-1";
    expect(await login(username, secret)).toMatchObject({ status: 503 });
    await login(username, secret);
    expect(lines.some((line) => line.includes("login unavailable"))).toBe(true);
    expect(lines.some((line) => line.includes("login failed"))).toBe(true);
    expect(lines.join("\n")).not.toContain(secret);
  });

  it("answers 400 to a malformed or empty login without counting it", async () => {
    const { api, login } = await start();
    expect((await login(username, "")).status).toBe(400);
    expect((await login("", password)).status).toBe(400);
    expect(api.identity.loginAttempts).toEqual([]);
  });
});

describe("LoginThrottle", () => {
  it("forgets the oldest username beyond maxTracked, so memory stays bounded", () => {
    const throttle = new LoginThrottle({ maxFailures: 1, maxTracked: 2, now: () => 0 });
    throttle.recordFailure("a");
    throttle.recordFailure("b");
    throttle.recordFailure("c");
    expect(throttle.retryAfterMs("a")).toBe(0);
    expect(throttle.retryAfterMs("c")).toBeGreaterThan(0);
  });
});

describe("runWithStartupStatus", () => {
  const platform = () => {
    const api = createFakeIntegrationApi();
    const client = createConsoleClient({ baseUrl: "http://platform.test", fetch: api.fetch });
    return { api, client };
  };

  it("shows the initial sync's progress in the console, then done", async () => {
    const { api, client } = platform();
    const result = await runWithStartupStatus(
      client,
      async (progress) => {
        for (let done = 0; done <= 2; done++) {
          progress(done, 2);
          await new Promise((resolve) => setImmediate(resolve));
        }
        return "synced";
      },
      { label: "Initial sync" },
    );
    expect(result).toBe("synced");
    const messages = api.console.startupStatuses.map((status) => status.message);
    expect(messages).toContain("Initial sync: 2 of 2");
    expect(messages.at(-1)).toBe("Initial sync: done");
    expect(api.console.startupStatuses.every((status) => status.severity === undefined)).toBe(true);
  });

  it("sends only the latest waiting update, in order: a fast task sends two", async () => {
    const { api, client } = platform();
    await runWithStartupStatus(
      client,
      async (progress) => {
        for (let done = 0; done <= 100; done++) progress(done, 100);
      },
      { label: "Sync" },
    );
    const messages = api.console.startupStatuses.map((status) => status.message);
    expect(messages).toEqual(["Sync: 100 of 100", "Sync: done"]);
  });

  it("shows a failure with severity error and rethrows it", async () => {
    const { api, client } = platform();
    const failure = runWithStartupStatus(
      client,
      async () => {
        throw new Error("the directory is unreachable");
      },
      { label: "Initial sync" },
    );
    await expect(failure).rejects.toThrow("the directory is unreachable");
    expect(api.console.startupStatus).toEqual({
      message: "Initial sync failed: the directory is unreachable",
      severity: "error",
    });
  });

  it("keeps starting when the console cannot be updated", async () => {
    const { api, client } = platform();
    api.failNext(10, { status: 503 });
    const errors: unknown[] = [];
    const result = await runWithStartupStatus(client, async () => 42, {
      label: "Sync",
      onStatusError: (error) => errors.push(error),
    });
    expect(result).toBe(42);
    expect(errors.length).toBeGreaterThan(0);
  });
});
