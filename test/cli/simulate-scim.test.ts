import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/run.ts";
import { MemoryUserStore } from "../../src/provisioning/index.ts";
import { createScimHandler } from "../../src/scim/index.ts";
import { createFakeIo } from "../support/fake-io.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";
import { createScimFixture } from "../testing/scim-fixture.ts";

const startServer = serveForEachTest();
const token = "s3cret-token-for-tests";

describe("platform-integration simulate --scim", () => {
  it("pushes a generated directory into a SCIM service, then reads every user back", async () => {
    const store = new MemoryUserStore({ onDelete: "deactivate" });
    const server = await startServer(createScimHandler({ store, token }).fetch);
    const io = createFakeIo();
    const args = ["simulate", "--scim", `${server.url}/scim/v2`, "--token", token, "--users", "30"];
    expect(await run(args, io)).toBe(0);
    expect(io.out).toMatch(
      /^Simulating Entra ID's SCIM push against http:\/\/127\.0\.0\.1:\d+\/scim\/v2: 30 users/,
    );
    expect(io.out).toMatch(/Sync completed/);
    expect(io.out).not.toMatch(/not verified/);
    expect(io.out + io.err).not.toContain(token);
    // Deleted users are deactivated, not deleted: the store keeps every one it was given.
    expect(await store.count({ includeDeactivated: true })).toBeGreaterThanOrEqual(30);
  });

  it("stops at the service's refusal and says its status", async () => {
    const fixture = createScimFixture({ token, defects: { refuseStringBooleans: true } });
    const server = await startServer(fixture.fetch);
    const io = createFakeIo();
    const args = [
      "simulate",
      `--scim=${server.url}`,
      "--token",
      token,
      "--users",
      "5",
      "--changes",
      "5",
      "--seed",
      "2",
    ];
    expect(await run(args, io)).toBe(1);
    expect(io.out).toMatch(/Sync stopped at delete \S+ \(attempt 1\): status 400 .*invalidValue/);
  });

  it("refuses --read-user and a missing token", async () => {
    const io = createFakeIo();
    expect(await run(["simulate", "--scim", "http://h/scim", "--users", "1"], io)).toBe(2);
    expect(io.err).toMatch(/Missing --token/);
    const withReadUser = createFakeIo();
    const args = ["simulate", "--scim", "http://h/scim", "--token", "t", "--read-user", "x"];
    expect(await run(args, withReadUser)).toBe(2);
    expect(withReadUser.err).toMatch(/unknown option --read-user/);
  });
});
