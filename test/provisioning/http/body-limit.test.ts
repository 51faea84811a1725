import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  bodyTooLarge,
  declaresMoreThan,
  defaultBodyLimit,
  payloadTooLarge,
  readNodeBodyAsync,
  readWebBody,
  resolveBodyLimit,
  withinBodyLimit,
} from "../../../src/provisioning/http/body-limit.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../../src/provisioning/index.ts";

const text = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : new TextDecoder().decode(bytes);

describe("the body limit", () => {
  it("defaults to 1 MiB, the handler's default, and refuses what is not a byte count", () => {
    expect(defaultBodyLimit).toBe(1024 * 1024);
    expect(resolveBodyLimit(undefined)).toBe(defaultBodyLimit);
    expect(createProvisioningHandler({ store: new MemoryUserStore() }).bodyLimit).toBe(
      defaultBodyLimit,
    );
    expect(resolveBodyLimit(0)).toBe(0);
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => resolveBodyLimit(bad)).toThrow(
        new TypeError("bodyLimit must be a non-negative integer number of bytes"),
      );
    }
  });

  it("answers 413 payload_too_large past it, as JSON, and closes the connection", () => {
    const answer = bodyTooLarge("this server (8 bytes)");
    expect(answer).toMatchObject({ status: 413, closeConnection: true });
    expect(JSON.parse(answer.body as string)).toEqual({
      error: "payload_too_large",
      message: "The body exceeds the size limit of this server (8 bytes)",
    });
    expect(payloadTooLarge).toMatchObject({ status: 413, closeConnection: true });
    expect(JSON.parse(payloadTooLarge.body as string)).toMatchObject({
      error: "payload_too_large",
    });
  });

  it("holds a request handed to the core to it: its bytes, or a parsed body's declared length", () => {
    const request = (fields: { body?: Uint8Array; json?: unknown; length?: string }) => ({
      method: "POST",
      path: "/v1/user/create",
      headers: fields.length === undefined ? [] : ["Content-Length", fields.length],
      body: fields.body,
      json: fields.json,
    });
    expect(withinBodyLimit(request({ body: new Uint8Array(4) }), 4)).toBe(true);
    expect(withinBodyLimit(request({ body: new Uint8Array(5) }), 4)).toBe(false);
    expect(withinBodyLimit(request({}), 0)).toBe(true);
    // A parser in front read the body: only its declared length is left to judge.
    expect(withinBodyLimit(request({ json: {}, length: "4" }), 4)).toBe(true);
    expect(withinBodyLimit(request({ json: {}, length: "5" }), 4)).toBe(false);
    expect(withinBodyLimit(request({ json: {}, body: new Uint8Array(5) }), 4)).toBe(true);
  });

  it("refuses a declared length past the limit, and only that", () => {
    expect(declaresMoreThan("11", 10)).toBe(true);
    expect(declaresMoreThan("10", 10)).toBe(false);
    expect(declaresMoreThan(undefined, 10)).toBe(false);
    expect(declaresMoreThan(null, 0)).toBe(false);
  });

  it("reads a Node stream up to the limit, in chunks, and refuses one past it", async () => {
    expect(
      text(
        await readNodeBodyAsync(
          Readable.from([Buffer.from("ab"), Buffer.from("cd")]),
          undefined,
          4,
        ),
      ),
    ).toBe("abcd");
    expect(
      await readNodeBodyAsync(Readable.from([Buffer.from("abc"), Buffer.from("de")]), undefined, 4),
    ).toBeUndefined();
    expect(await readNodeBodyAsync(Readable.from([Buffer.from("a")]), "5", 4)).toBeUndefined();
    expect(text(await readNodeBodyAsync(Readable.from([]), undefined, 4))).toBe("");
    // Chunks that reach the limit exactly, then one byte more: refused, never cut to the limit.
    expect(
      await readNodeBodyAsync(Readable.from([Buffer.from("abcd"), Buffer.from("e")]), undefined, 4),
    ).toBeUndefined();
  });

  it("rejects when the Node stream fails before its end (the client went away)", async () => {
    const gone = new Readable({
      read() {
        this.destroy(new Error("aborted"));
      },
    });
    await expect(readNodeBodyAsync(gone, undefined, 4)).rejects.toThrow("aborted");
  });

  it("reads a Web body with or without a declared length, and refuses one past the limit", async () => {
    const post = (
      body: string | ReadableStream<Uint8Array>,
      headers: Record<string, string> = {},
    ) => new Request("http://x/", { method: "POST", body, headers, duplex: "half" } as RequestInit);
    const stream = (...parts: string[]) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
          controller.close();
        },
      });
    expect(text(await readWebBody(post("abcd"), "4", 4))).toBe("abcd");
    expect(await readWebBody(post("abcde"), "5", 4)).toBeUndefined();
    // A declared length that lies low is caught after reading.
    expect(await readWebBody(post("abcde"), "3", 4)).toBeUndefined();
    expect(text(await readWebBody(post(stream("ab", "cd")), null, 4))).toBe("abcd");
    expect(await readWebBody(post(stream("ab", "cde")), null, 4)).toBeUndefined();
    expect(text(await readWebBody(new Request("http://x/"), null, 4))).toBe("");
  });
});
