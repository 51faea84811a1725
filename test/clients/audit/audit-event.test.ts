import { describe, expect, it } from "vitest";
import {
  auditEventEncoder,
  auditEventPath,
  decodeAuditEvent,
  deliverAuditEvent,
  encodeAuditEvent,
  utf8Length,
} from "../../../src/clients/audit/audit-event.ts";
import { createIntegrationApi } from "../../../src/clients/integration-api/http.ts";

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

  // Wrong implementation caught: any high surrogate taken as the start of a pair, so a lone one
  // before a non-ASCII character swallows it (4 bytes instead of 3 + 2).
  it("counts a lone surrogate as TextEncoder does, as U+FFFD", () => {
    const encoder = new TextEncoder();
    for (const text of ["\ud800é", "é\ud800", "\udc00é", "\udc00\ud800é", "\ud83d\ud83d\udc4d"]) {
      expect(utf8Length(text), JSON.stringify(text)).toBe(encoder.encode(text).length);
    }
  });

  // Wrong implementation caught: the object check dropped, so `null` fails on destructuring and a
  // number as an event without an action, neither saying what an event is.
  it("says what an event is when given something else, and what each bad field holds", () => {
    const encode = (event: unknown) => () =>
      encodeAuditEvent(event as Parameters<typeof encodeAuditEvent>[0], undefined, 1000);
    expect(encode(null)).toThrow(
      new TypeError("An audit event is an object with at least an action, got null."),
    );
    expect(encode(42)).toThrow(
      new TypeError("An audit event is an object with at least an action, got number."),
    );
    expect(encode({ action: "" })).toThrow(/non-empty string .*; got an empty string\.$/);
    expect(encode({ action: null })).toThrow(/; got null\.$/);
    expect(encode({ action: "a", name: 7 })).toThrow(
      new TypeError("The audit event's name must be a string, got number."),
    );
    expect(encode({ action: "a", description: null })).toThrow(
      new TypeError("The audit event's description must be a string, got null."),
    );
  });
});

// The admission and the route that the in-memory client and the pg-boss one share.
describe("an audit client's event rules", () => {
  // Wrong implementations caught: another default cap than 16 KiB, the catalogue ignored, a
  // zero cap taken.
  it("admits events of at most 16 KiB of JSON by default, from the catalogue when there is one", () => {
    const encode = auditEventEncoder({});
    const wrapper = encode({ action: "a" }).bytes;
    const fill = (bytes: number) => ({
      action: "a",
      description: "x".repeat(bytes - wrapper - 17),
    });
    expect(encode(fill(16 * 1024)).bytes).toBe(16 * 1024);
    expect(() => encode(fill(16 * 1024 + 1))).toThrow(RangeError);
    const catalogued = auditEventEncoder({ actions: { login: "user.login" }, maxEventBytes: 64 });
    expect(JSON.parse(catalogued({ action: "user.login" }).body)).toEqual({ action: "user.login" });
    expect(() => catalogued({ action: "user.logout" })).toThrow(/not in the client's catalogue/);
    expect(() => auditEventEncoder({ maxEventBytes: 0 })).toThrow(
      /maxEventBytes must be at least 1/,
    );
  });

  // Wrong implementations caught: another route, the body re-serialized, the API's own retries
  // left on under the delivery loop (a 503 would then be sent more than once per attempt).
  it("delivers an event's JSON as one POST to /audit/v1/event per attempt", async () => {
    const seen: string[] = [];
    const answers = [503, 204];
    const api = createIntegrationApi({
      baseUrl: "http://127.0.0.1:9",
      retry: { limit: 3, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: async (request: Request) => {
        seen.push(`${request.method} ${new URL(request.url).pathname} ${await request.text()}`);
        return new Response(null, { status: answers.shift() ?? 500 });
      },
    });
    const body = '{"action":"a"}';
    const retried: unknown[] = [];
    const settled = await deliverAuditEvent(api, body, {
      signal: new AbortController().signal,
      onRetry: (error) => retried.push(error),
    });
    expect(settled).toEqual({ outcome: "delivered" });
    expect(auditEventPath).toBe("/audit/v1/event");
    expect(seen).toEqual([`POST /audit/v1/event ${body}`, `POST /audit/v1/event ${body}`]);
    expect(retried).toHaveLength(1);
  });
});
