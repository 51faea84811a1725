import { describe, expect, it } from "vitest";
import { defineAuditActions } from "../../../src/clients/audit/index.ts";

describe("defineAuditActions", () => {
  // The literal types: actions.test-d.ts.
  it("returns a frozen catalogue of the names given", () => {
    const actions = defineAuditActions({
      userLogin: "user.login.success",
      reportExport: "report.export",
    });
    expect(actions).toEqual({ userLogin: "user.login.success", reportExport: "report.export" });
    expect(Object.isFrozen(actions)).toBe(true);
  });

  it.each([
    ["an empty name", ""],
    ["spaces", "user login"],
    ["a control character", "user.login\n"],
    ["more than 128 characters", "a".repeat(129)],
    ["a non-string", 42],
  ])("rejects %s", (_, action) => {
    expect(() => defineAuditActions({ bad: action as string })).toThrow(
      /Audit action bad must be a short readable name/,
    );
  });

  it("accepts a name of exactly 128 characters", () => {
    const action = "a".repeat(128);
    expect(defineAuditActions({ long: action }).long).toBe(action);
  });

  it("rejects two keys with the same action", () => {
    expect(() => defineAuditActions({ login: "user.login", signIn: "user.login" })).toThrow(
      'Audit actions login and signIn are both "user.login": each action needs its own name.',
    );
  });
});
