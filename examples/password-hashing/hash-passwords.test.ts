import { createProvisioningHandler, MemoryUserStore } from "platform-integration/provisioning";
import { describe, expect, it } from "vitest";
import { hashClearTextPassword, scryptFormat, verifyPassword } from "./hash-passwords.ts";

function setUp() {
  const store = new MemoryUserStore();
  const handler = createProvisioningHandler({ store, transform: hashClearTextPassword });
  const send = (path: string, body: unknown) =>
    handler.fetch(
      new Request(`http://app.test${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  return { store, send };
}

describe("hashClearTextPassword as the provisioning transform", () => {
  it("stores a scrypt hash that verifies the password, never the clear text", async () => {
    const { store, send } = setUp();
    const created = await send("/v1/user/create", {
      uuid: "97e86d2d",
      username: "bob",
      password: "password123",
    });
    expect(created.status).toBe(201);
    const user = (await store.get("97e86d2d"))!;
    expect(user.passwordFormat).toBe(scryptFormat);
    expect(JSON.stringify(await store.list())).not.toContain("password123");
    expect(await verifyPassword(user, "password123")).toBe(true);
    expect(await verifyPassword(user, "password124")).toBe(false);
  });

  it("keeps the hash through a modify without a password, and rehashes a new one", async () => {
    const { store, send } = setUp();
    await send("/v1/user/create", { uuid: "u1", password: "first" });
    const firstHash = (await store.get("u1"))!.password;
    expect((await send("/v1/user/modify", { uuid: "u1", email: "u1@x.test" })).status).toBe(204);
    expect((await store.get("u1"))!.password).toBe(firstHash);
    await send("/v1/user/modify", { uuid: "u1", password: "newpassword456" });
    expect(await verifyPassword((await store.get("u1"))!, "newpassword456")).toBe(true);
    expect(await verifyPassword((await store.get("u1"))!, "first")).toBe(false);
  });

  it("hashes a redelivered message again, and the password still verifies", async () => {
    const { store, send } = setUp();
    await send("/v1/user/create", { uuid: "u1", password: "s3cret" });
    const before = (await store.get("u1"))!.password;
    await send("/v1/user/create", { uuid: "u1", password: "s3cret" });
    expect((await store.get("u1"))!.password).not.toBe(before);
    expect(await verifyPassword((await store.get("u1"))!, "s3cret")).toBe(true);
  });

  it("stores a password the directory already hashed as sent, and treats 'plain' as clear text", async () => {
    const { store, send } = setUp();
    await send("/v1/user/create", {
      uuid: "u1",
      password: "$2b$10$abc",
      password_format: "bcrypt",
    });
    expect(await store.get("u1")).toMatchObject({
      password: "$2b$10$abc",
      passwordFormat: "bcrypt",
    });
    expect(await verifyPassword((await store.get("u1"))!, "$2b$10$abc")).toBe(false);
    await send("/v1/user/create", { uuid: "u2", password: "pw", password_format: "PLAIN" });
    expect(await verifyPassword((await store.get("u2"))!, "pw")).toBe(true);
  });
});
