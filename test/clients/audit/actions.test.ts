import { describe, expect, expectTypeOf, it } from "vitest";
import { type AuditActionOf, defineAuditActions } from "../../../src/clients/audit/index.ts";

describe("defineAuditActions", () => {
  it("returns a frozen catalogue whose values keep their literal types", () => {
    const actions = defineAuditActions({
      userLogin: "user.login.success",
      reportExport: "report.export",
    });
    expect(actions).toEqual({ userLogin: "user.login.success", reportExport: "report.export" });
    expect(Object.isFrozen(actions)).toBe(true);
    expectTypeOf(actions.userLogin).toEqualTypeOf<"user.login.success">();
    expectTypeOf<AuditActionOf<typeof actions>>().toEqualTypeOf<
      "user.login.success" | "report.export"
    >();
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
