// onChange after a failure: the platform sends the message again, and the hook must then see the
// change with its true type, although the store already holds the user.
import { describe, expect, it, vi } from "vitest";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningChange,
} from "../../src/provisioning/index.ts";
import { call } from "./helpers.ts";

/** A handler whose onChange fails while `failing` is true, recording what it accepted. */
function setup() {
  const store = new MemoryUserStore();
  const accepted: ProvisioningChange[] = [];
  const state = { failing: true };
  const handler = createProvisioningHandler({
    store,
    reset: true,
    onError: vi.fn(),
    onChange: (change) => {
      if (state.failing) throw new Error("audit log unavailable");
      accepted.push(change);
    },
  });
  return { store, handler, accepted, state };
}

describe("onChange after its own failure", () => {
  // Catches: the type taken from the store's `created` alone, which is false on the redelivery.
  it("reports a redelivered create whose first hook call failed as created, then updates as updated", async () => {
    const { handler, accepted, state, store } = setup();
    const bob = { uuid: "u1", username: "bob" };
    expect((await call(handler, "POST", "/v1/user/create", bob)).status).toBe(500);
    expect(await store.get("u1")).toEqual(bob);
    state.failing = false;
    expect((await call(handler, "POST", "/v1/user/create", bob)).status).toBe(201);
    expect((await call(handler, "POST", "/v1/user/create", bob)).status).toBe(201);
    expect(accepted).toEqual([
      { type: "created", uuid: "u1", user: bob },
      { type: "updated", uuid: "u1", user: bob },
    ]);
  });

  // Catches: a creation remembered only for the same message, or forgotten after the first retry.
  it("keeps the creation through several failures and reports it on a modify too", async () => {
    const { handler, accepted, state } = setup();
    expect((await call(handler, "POST", "/v1/user/modify", { uuid: "u1" })).status).toBe(500);
    expect((await call(handler, "POST", "/v1/user/modify", { uuid: "u1" })).status).toBe(500);
    state.failing = false;
    const modify = { uuid: "u1", email: "a@example.com" };
    expect((await call(handler, "POST", "/v1/user/modify", modify)).status).toBe(204);
    expect(accepted).toEqual([{ type: "created", uuid: "u1", user: modify }]);
  });

  // Catches: an update's failure turning its redelivery into a creation.
  it("reports a redelivered update as updated", async () => {
    const { handler, accepted, state } = setup();
    state.failing = false;
    await call(handler, "POST", "/v1/user/create", { uuid: "u1" });
    state.failing = true;
    expect((await call(handler, "POST", "/v1/user/modify", { uuid: "u1" })).status).toBe(500);
    state.failing = false;
    expect((await call(handler, "POST", "/v1/user/modify", { uuid: "u1" })).status).toBe(204);
    expect(accepted.map((change) => change.type)).toEqual(["created", "updated"]);
  });

  // Catches: the record of one uuid leaking onto another.
  it("keeps each uuid's creation apart", async () => {
    const { handler, accepted, state } = setup();
    await call(handler, "POST", "/v1/user/create", { uuid: "u1" });
    state.failing = false;
    await call(handler, "POST", "/v1/user/create", { uuid: "u2" });
    await call(handler, "POST", "/v1/user/create", { uuid: "u2" });
    await call(handler, "POST", "/v1/user/create", { uuid: "u1" });
    expect(accepted.map(({ type, uuid }) => `${type} ${uuid}`)).toEqual([
      "created u2",
      "updated u2",
      "created u1",
    ]);
  });

  // Catches: a delete that drops the unreported creation, so the hook never sees it.
  it("reports an unreported creation before the user's deletion", async () => {
    const { handler, accepted, state } = setup();
    await call(handler, "POST", "/v1/user/create", { uuid: "u1", username: "bob" });
    state.failing = false;
    expect((await call(handler, "DELETE", "/v1/user/u1")).status).toBe(204);
    expect((await call(handler, "DELETE", "/v1/user/u1")).status).toBe(204);
    expect(accepted).toEqual([
      { type: "created", uuid: "u1", user: { uuid: "u1", username: "bob" } },
      { type: "deleted", uuid: "u1" },
      { type: "deleted", uuid: "u1" },
    ]);
  });

  // Catches: the creation lost when the hook refuses it again on the delete.
  it("keeps the creation when the hook fails again on the delete", async () => {
    const { handler, accepted, state } = setup();
    await call(handler, "POST", "/v1/user/create", { uuid: "u1" });
    expect((await call(handler, "DELETE", "/v1/user/u1")).status).toBe(500);
    state.failing = false;
    expect((await call(handler, "DELETE", "/v1/user/u1")).status).toBe(204);
    expect(accepted.map((change) => change.type)).toEqual(["created", "deleted"]);
  });

  // Catches: a reset that keeps stale creations, reported later for users the re-sync creates.
  it("forgets unreported creations on a reset", async () => {
    const { handler, accepted, state } = setup();
    await call(handler, "POST", "/v1/user/create", { uuid: "u1" });
    state.failing = false;
    expect((await call(handler, "POST", "/v1/reset")).status).toBe(204);
    // Kept, the creation would be reported before this delete.
    await call(handler, "DELETE", "/v1/user/u1");
    await call(handler, "POST", "/v1/user/create", { uuid: "u1" });
    await call(handler, "POST", "/v1/user/modify", { uuid: "u1" });
    expect(accepted.map((change) => change.type)).toEqual([
      "reset",
      "deleted",
      "created",
      "updated",
    ]);
  });
});
