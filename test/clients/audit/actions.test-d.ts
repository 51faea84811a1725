import { describe, expectTypeOf, it } from "vitest";
import { type AuditActionOf, defineAuditActions } from "../../../src/clients/audit/index.ts";

describe("defineAuditActions", () => {
  it("keeps each action's literal type, and AuditActionOf is their union", () => {
    const actions = defineAuditActions({
      userLogin: "user.login.success",
      reportExport: "report.export",
    });
    expectTypeOf(actions.userLogin).toEqualTypeOf<"user.login.success">();
    expectTypeOf<AuditActionOf<typeof actions>>().toEqualTypeOf<
      "user.login.success" | "report.export"
    >();
  });
});
