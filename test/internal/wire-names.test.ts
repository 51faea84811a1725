import { describe, expect, it } from "vitest";
import { auditEventWireNames } from "../../src/clients/audit/audit-event-schema.ts";
import { snakeCase, wireNamesOf } from "../../src/internal/wire-names.ts";
import { wireFieldNames } from "../../src/provisioning/wire.ts";
import { userWireNames } from "../../src/users/user-record.ts";

describe("the wire naming rule", () => {
  it("turns each capital into an underscore and its lower case, and leaves the rest", () => {
    expect(snakeCase("passwordFormat")).toBe("password_format");
    expect(snakeCase("releaseSequence")).toBe("release_sequence");
    expect(snakeCase("email")).toBe("email");
  });

  it("maps each name by the rule, or by the rule given", () => {
    expect(wireNamesOf(["userId", "email"])).toEqual({ userId: "user_id", email: "email" });
    expect(wireNamesOf(["dn"], (name) => name.toUpperCase())).toEqual({ dn: "DN" });
  });

  it("gives the Provisioning API's user table and the audit event the platform's names", () => {
    expect(userWireNames).toEqual({
      userId: "user_id",
      username: "username",
      firstName: "first_name",
      lastName: "last_name",
      fullName: "full_name",
      passwordFormat: "password_format",
      password: "password",
      email: "email",
    });
    // The lenient reader's table is the user record's, not a copy of it.
    expect(wireFieldNames).toBe(userWireNames);
    expect(auditEventWireNames).toEqual({
      name: "name",
      title: "title",
      description: "description",
      ipAddress: "ip_address",
      action: "action",
    });
  });
});
