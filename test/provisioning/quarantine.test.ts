import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createProvisioningHandler,
  MemoryUserStore,
  UserConflictError,
  type UserStore,
} from "../../src/provisioning/index.ts";
import { installInMemoryOpenTelemetry } from "../support/open-telemetry.ts";
import { quarantinedHandler, quarantineScenarios } from "../support/quarantine-scenarios.ts";

quarantineScenarios("MemoryUserStore", {
  create: async (rules) => new MemoryUserStore(rules),
});

describe("the quarantine option", () => {
  // Catches: an option accepted over a store that cannot keep anything (every conflict then lost).
  it("refuses at construction a store without the quarantine methods, naming them", () => {
    const memory = new MemoryUserStore();
    const store: UserStore = {
      upsert: (patch) => memory.upsert(patch),
      delete: (uuid) => memory.delete(uuid),
      listQuarantined: (options) => memory.listQuarantined(options),
      releaseQuarantined: (uuid) => memory.releaseQuarantined(uuid),
    };
    expect(() => createProvisioningHandler({ store, quarantine: true })).toThrow(
      /quarantine is true but the store has no writeQuarantined, deleteQuarantined/,
    );
    expect(() => createProvisioningHandler({ store })).not.toThrow();
  });

  // Catches: a failure to keep answered with success (the message lost) instead of 503.
  it("answers 503 when the store's step fails, keeping nothing", async () => {
    const store = new MemoryUserStore({ unique: ["email"] });
    const app = quarantinedHandler(store);
    await app.create({ uuid: "a", email: "x@x.io" });
    store.writeQuarantined = async () => {
      throw new Error("disk full");
    };
    expect((await app.create({ uuid: "b", email: "x@x.io" })).status).toBe(503);
    expect(await app.handler.quarantined()).toEqual([]);
  });

  // Catches: a store error other than a conflict taken into the quarantine (it is retriable).
  // Catches: a conflict that names no value woken by nothing, not even a retry.
  it("tries a conflict tied to no value on retryQuarantined() and on the user's next message", async () => {
    const store = new MemoryUserStore({ unique: ["username"] });
    const app = quarantinedHandler(store);
    await app.create({ uuid: "a", username: "sam" });
    await app.create({ uuid: "b", username: "sam" });
    // The holder leaves without a step that says so (by hand, in the database).
    await store.upsert({ uuid: "a", username: "samuel" });
    await app.create({ uuid: "other" });
    expect(await store.get("b")).toBeUndefined();
    expect(await app.handler.retryQuarantined()).toEqual({ released: 1, kept: 0 });
    expect(await store.get("b")).toEqual({ uuid: "b", username: "sam" });
  });

  it("reports a failing onQuarantine hook to onError without changing the answer", async () => {
    const errors: unknown[] = [];
    const store = new MemoryUserStore({ unique: ["email"] });
    const app = quarantinedHandler(store, {
      onQuarantine: () => {
        throw new Error("pager down");
      },
      onError: (error) => void errors.push(error),
    });
    await app.create({ uuid: "a", email: "x@x.io" });
    expect((await app.create({ uuid: "b", email: "x@x.io" })).status).toBe(201);
    expect(errors).toEqual([new Error("pager down")]);
  });

  it("has an empty listing and nothing to retry without the option", async () => {
    const handler = createProvisioningHandler({ store: new MemoryUserStore() });
    expect(await handler.quarantined()).toEqual([]);
    expect(await handler.retryQuarantined()).toEqual({ released: 0, kept: 0 });
    expect(handler.stats().quarantine).toBeUndefined();
  });
});

describe("the quarantine under OpenTelemetry", () => {
  let otel: ReturnType<typeof installInMemoryOpenTelemetry>;
  beforeAll(() => {
    otel = installInMemoryOpenTelemetry();
  });
  afterAll(() => otel.stop());

  it("counts kept, released and discarded messages", async () => {
    const app = quarantinedHandler(new MemoryUserStore({ unique: ["email"] }));
    await app.create({ uuid: "a", email: "x@x.io" });
    await app.create({ uuid: "b", email: "x@x.io" });
    await app.create({ uuid: "c", email: "x@x.io" });
    await app.remove("c");
    await app.remove("a");
    const points = await otel.metric("platform_integration.provisioning.quarantine");
    const byEvent = Object.fromEntries(
      points.map((point) => [
        point.attributes["platform_integration.quarantine.event"],
        point.value,
      ]),
    );
    expect(byEvent).toEqual({ kept: 2, released: 1, discarded: 1 });
  });
});

describe("UserConflictError", () => {
  it("carries the field and the cause, and its name", () => {
    const cause = new Error("duplicate key");
    const error = new UserConflictError("the email is taken", { field: "email", cause });
    expect([error.name, error.field, error.cause, error.message]).toEqual([
      "UserConflictError",
      "email",
      cause,
      "the email is taken",
    ]);
    expect(new UserConflictError("fk").field).toBeUndefined();
  });
});

describe("MemoryUserStore's rules", () => {
  // Catches: a case-sensitive email index, an index on a field not asked for, and values of a
  // deleted or deactivated user still held.
  it("holds unique fields, email without ASCII case, and frees them on delete", async () => {
    const store = new MemoryUserStore({ unique: ["username", "email"] });
    await store.upsert({ uuid: "a", username: "ann", email: "Ann@X.io", firstName: "A" });
    await expect(store.upsert({ uuid: "b", email: "aNN@x.IO" })).rejects.toMatchObject({
      name: "UserConflictError",
      field: "email",
    });
    await expect(store.upsert({ uuid: "b", username: "ann" })).rejects.toMatchObject({
      field: "username",
    });
    expect(await store.get("b")).toBeUndefined();
    await store.upsert({ uuid: "b", username: "Ann", firstName: "A" });
    await store.upsert({ uuid: "a", email: null });
    await store.upsert({ uuid: "b", email: "ann@x.io" });
    await store.delete("b");
    await store.upsert({ uuid: "c", email: "ann@x.io", username: "Ann" });
  });

  it("refuses unique fields it cannot hold and an unknown onDelete", () => {
    expect(() => new MemoryUserStore({ unique: ["password" as "email"] })).toThrow(TypeError);
    expect(() => new MemoryUserStore({ onDelete: "archive" as "delete" })).toThrow(TypeError);
  });
});
