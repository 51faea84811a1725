import { describe, expect, it } from "vitest";
import { MemoryUserStore, userRecordSchema } from "../../src/provisioning/index.ts";

describe("userRecordSchema", () => {
  it("accepts what a store returns, extra fields included", async () => {
    const store = new MemoryUserStore();
    const { user } = await store.upsert({
      uuid: "u1",
      username: "bob",
      email: "bob@acme.com",
      extra: { memberOf: ["admins"], level: 3 },
    });
    expect(userRecordSchema.parse(user)).toEqual(user);
  });

  it.each([
    ["a missing uuid", { username: "bob" }],
    ["an empty uuid", { uuid: "" }],
    ["a number field", { uuid: "u1", email: 5 }],
    ["an undefined field", { uuid: "u1", email: undefined }],
    ["a non-JSON extra value", { uuid: "u1", extra: { at: new Date(0) } }],
  ])("refuses %s", (_name, value) => {
    expect(userRecordSchema.safeParse(value).success).toBe(false);
  });
});

// That UserRecord is exactly what userRecordSchema parses: user-record.test-d.ts.
