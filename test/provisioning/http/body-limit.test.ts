import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  declaresMoreThan,
  readNodeBodyAsync,
  readWebBody,
} from "../../../src/provisioning/http/body-limit.ts";

const text = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : new TextDecoder().decode(bytes);

describe("the body limit", () => {
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
