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
    const { body, bytes } = encodeAuditEvent(event, undefined, 1000);
    expect(bytes).toBe(body.length);
    expect(JSON.parse(body)).toEqual({
      action: "user.login.success",
      name: "user.login",
      ip_address: "::1",
      description: 'said "hi"',
    });
    expect(decodeAuditEvent(body)).toEqual(event);
  });

  it("returns the UTF-8 size of its JSON, and refuses an event over the limit", () => {
    const event = { action: "a", description: "日本語" };
    const { body, bytes } = encodeAuditEvent(event, undefined, 100);
    expect(bytes).toBe(new TextEncoder().encode(body).length);
    expect(bytes).toBeGreaterThan(body.length);
    expect(encodeAuditEvent(event, undefined, bytes).bytes).toBe(bytes);
    expect(() => encodeAuditEvent(event, undefined, bytes - 1)).toThrow(RangeError);
  });

  it("measures UTF-8 bytes as TextEncoder does", () => {
    const encoder = new TextEncoder();
    const boundaries = "\u007f \u0080 \u07ff \u0800 \uffff \u{10000} \u{10ffff}";
    for (const text of [
      "",
      "plain ascii",
      "é",
      "日本語",
      "emoji 👍 and é",
      '{"a":"\\u0000"}',
      boundaries,
    ]) {
      expect(utf8Length(text), text).toBe(encoder.encode(text).length);
    }
  });
});
