import { setupServer } from "msw/node";
import { createIntegrationApiHandlers } from "platform-integration/msw";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { audit, installUpdate, onLogin, updateBanner } from "./app.ts";

// The platform sets PLATFORM_INTEGRATIONAPI before the app starts, and the app's clients choose
// their API when they are created, as app.ts is imported: so it is set before that import.
vi.hoisted(() => vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://platform.test"));

const baseUrl = "https://platform.test";
const { handlers, api } = createIntegrationApiHandlers({
  baseUrl,
  current: { version: "1.0.0", releaseSequence: 1 },
  updates: [{ version: "1.1.0", releaseSequence: 2, releaseNotes: "Faster sync" }],
});
const server = setupServer(...handlers);
const bob = { id: "97e86d2d-b076-4d87-b4f6-5e2ce4534d6a", username: "bob" };

beforeAll(() => {
  vi.stubEnv("PLATFORM_INTEGRATIONAPI", baseUrl);
  // Any request to anything else fails the test: the app talks to the platform and nothing more.
  server.listen({ onUnhandledFrame: "error" });
});
afterEach(async () => {
  // Events still in the background queue belong to the test that recorded them.
  await audit.flush();
  api.reset();
  vi.restoreAllMocks();
});
afterAll(() => {
  server.close();
  vi.unstubAllEnvs();
});

describe("audit events", () => {
  it("records a login with the user's address", async () => {
    onLogin(bob, "203.0.113.7");
    await audit.flush(); // record() returns at once; the event is sent in the background
    expect(api.auditEvents).toEqual([
      {
        action: "user.login.success",
        name: "user.login",
        title: "User Login Success",
        description: `${bob.id} (bob) logged in`,
        ipAddress: "203.0.113.7",
      },
    ]);
  });

  it("still arrive after the Integration API fails and drops the connection", async () => {
    api.failNext(1, { status: 503 });
    api.failNext(1, { networkError: true });
    onLogin(bob, "203.0.113.7");
    expect(await audit.flush()).toBe(true);
    expect(api.auditEvents).toMatchObject([{ action: "user.login.success" }]);
  });

  it("that the platform rejects are reported, not lost silently", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    api.failNext(1, { status: 400 });
    onLogin(bob, undefined);
    await audit.flush();
    expect(api.auditEvents).toEqual([]);
    expect(logged).toHaveBeenCalledWith("audit: dropped 1 event(s) (rejected)", [
      expect.objectContaining({ action: "user.login.success" }),
    ]);
  });
});

describe("the update banner", () => {
  it("names the pending updates", async () => {
    expect(await updateBanner()).toBe("An update is available: 1.1.0.");
    api.setUpdates([
      { version: "1.1.0", releaseSequence: 2 },
      { version: "1.2.0", releaseSequence: 3 },
    ]);
    expect(await updateBanner()).toBe("Updates are available: 1.1.0, 1.2.0.");
  });

  it("is absent when nothing is pending", async () => {
    api.setUpdates([]);
    expect(await updateBanner()).toBeUndefined();
  });

  it("is absent while the Version API fails, and back once it answers", async () => {
    const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
    api.failNext(2, { status: 503 }); // the first call and its one retry
    expect(await updateBanner()).toBeUndefined();
    api.failNext(2, { networkError: true });
    expect(await updateBanner()).toBeUndefined();
    expect(warned).toHaveBeenCalledTimes(2);
    expect(warned.mock.calls[0]?.[0]).toMatch(/^Update banner unavailable: HttpError: .* 503/);

    expect(await updateBanner()).toBe("An update is available: 1.1.0.");
  });

  it("goes once the update is installed", async () => {
    expect(await installUpdate(2)).toBe("1.1.0");
    expect(api.current).toMatchObject({ version: "1.1.0", releaseSequence: 2 });
    expect(await updateBanner()).toBeUndefined();
  });

  it("follows an update installed from the platform console", async () => {
    api.setUpdates([
      { version: "1.1.0", releaseSequence: 2 },
      { version: "1.2.0", releaseSequence: 3 },
    ]);
    api.apply(2); // installs 1.1.0; 1.2.0 stays pending
    expect(await updateBanner()).toBe("An update is available: 1.2.0.");
  });
});
