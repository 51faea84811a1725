import { describe, expect, it } from "vitest";
import { ProvisioningError } from "../../src/provisioning/index.ts";

describe("ProvisioningError", () => {
  it("derives its status from its code and keeps the cause", () => {
    const cause = new Error("db");
    const error = new ProvisioningError("store_unavailable", "Try later", { cause });
    expect(error).toBeInstanceOf(Error);
    expect([error.name, error.code, error.status, error.message]).toEqual([
      "ProvisioningError",
      "store_unavailable",
      503,
      "Try later",
    ]);
    expect(error.cause).toBe(cause);
    expect(new ProvisioningError("invalid_user", "x").status).toBe(400);
  });
});
