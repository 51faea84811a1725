import { describe, expect, it } from "vitest";
import {
  createProvisioningHandler,
  type Logger,
  MemoryUserStore,
} from "../../src/provisioning/index.ts";
import { createPlatformSimulator, runConformance } from "../../src/testing/index.ts";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const app = (quarantine: boolean, unique: ("username" | "email")[] = ["email"]) => {
  const store = new MemoryUserStore({ unique });
  const handler = createProvisioningHandler({ store, quarantine, logger: quiet });
  return { store, handler };
};

describe("the platform simulator on a swap of unique values", () => {
  // Catches: a report that cannot tell a stalled application from a completed one.
  it("reports the application stalled when it refuses the swap, for every cycle", async () => {
    const { handler } = app(false);
    const platform = createPlatformSimulator({ target: handler });
    platform.addUser({ uuid: "a", email: "a@x.io" });
    platform.addUser({ uuid: "b", email: "b@x.io" });
    expect((await platform.sync()).completed).toBe(true);
    platform.swapValues("email", "a", "b");
    for (let cycle = 0; cycle < 2; cycle++) {
      const report = await platform.sync();
      expect([report.completed, report.stalled, report.remaining]).toEqual([false, true, 2]);
      expect(report.stoppedAt).toMatchObject({
        status: 503,
        message: { kind: "modify", uuid: "a" },
      });
    }
  });

  it("completes the swap against the quarantine, both users ending with the right emails", async () => {
    const { handler, store } = app(true);
    const platform = createPlatformSimulator({
      target: handler,
      readUser: (uuid) => store.get(uuid),
    });
    platform.addUser({ uuid: "a", email: "a@x.io" });
    platform.addUser({ uuid: "b", email: "b@x.io" });
    await platform.sync();
    platform.swapValues("email", "a", "b");
    const report = await platform.sync();
    expect([report.completed, report.stalled]).toEqual([true, undefined]);
    expect((await platform.verify()).differences).toEqual([]);
    expect([(await store.get("a"))?.email, (await store.get("b"))?.email]).toEqual([
      "b@x.io",
      "a@x.io",
    ]);
  });

  it("leaves stalled out of a cycle its signal aborted", async () => {
    const { handler } = app(false);
    const platform = createPlatformSimulator({ target: handler });
    platform.addUser({ uuid: "a" });
    const report = await platform.sync({ signal: AbortSignal.abort() });
    expect(report.completed).toBe(false);
    expect(report.stalled).toBeUndefined();
  });
});

describe("runConformance({ conflicts: true })", () => {
  const swap = "a swap of two users' emails does not stall the directory";

  // Catches: a check that passes an application answering 503 to the swap.
  it("fails an application with a unique email and no quarantine, at the swap", async () => {
    const { handler, store } = app(false);
    const report = await runConformance(handler, {
      conflicts: true,
      readUser: (uuid) => store.get(uuid),
    });
    const result = report.results.find((each) => each.name === swap);
    expect(result?.passed).toBe(false);
    expect(result?.actual).toMatch(/503/);
    expect(report.passed).toBe(false);
  });

  it("passes it with the quarantine, reading both users back swapped", async () => {
    const { handler, store } = app(true);
    const report = await runConformance(handler, {
      conflicts: true,
      readUser: (uuid) => store.get(uuid),
    });
    expect(report.results.filter((each) => !each.passed)).toEqual([]);
    expect(report.results.at(-1)).toMatchObject({ name: swap, passed: true, effects: "verified" });
  });

  // The README says the conflict check is off by default "since not every application holds
  // emails unique": the default checks must then suit one that does. Catches: a default check
  // that gives two users (or two checks' users) one email or username, which such an
  // application refuses with 503 without the quarantine.
  it("leaves the check out by default, and the default checks pass a unique username and email without quarantine", async () => {
    const { handler, store } = app(false, ["username", "email"]);
    const report = await runConformance(handler, { readUser: (uuid) => store.get(uuid) });
    expect(report.results.map((each) => each.name)).not.toContain(swap);
    expect(report.results.filter((each) => !each.passed)).toEqual([]);
    expect(report.results).toHaveLength(23);
    expect(report.passed).toBe(true);
  });
});
