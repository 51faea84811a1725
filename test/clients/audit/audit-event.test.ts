import { describe, expect, it } from "vitest";
import {
  decodeAuditEvent,
  encodeAuditEvent,
  utf8Length,
} from "../../../src/clients/audit/audit-event.ts";

describe("audit event encoding", () => {
  it("round-trips an event through its wire JSON", () => {
    const event = {
      action: "user.login.success",
      name: "user.login",
      ipAddress: "::1",
      description: 'said "hi"',
    };
    const body = encodeAuditEvent(event, undefined);
    expect(JSON.parse(body)).toEqual({
      action: "user.login.success",
      name: "user.login",
      ip_address: "::1",
      description: 'said "hi"',
    });
    expect(decodeAuditEvent(body)).toEqual(event);
  });

  it("measures UTF-8 bytes as TextEncoder does", () => {
    const encoder = new TextEncoder();
    for (const text of ["", "plain ascii", "é", "日本語", "emoji 👍 and é", '{"a":"\\u0000"}']) {
      expect(utf8Length(text), text).toBe(encoder.encode(text).length);
    }
  });
});
