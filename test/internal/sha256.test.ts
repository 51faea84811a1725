import { describe, expect, it } from "vitest";
import { sameDigest, sha256 } from "../../src/internal/sha256.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("sha256", () => {
  it("digests UTF-8 text at once on Node, as Web Crypto does", async () => {
    const digest = sha256("é token");
    expect(digest).toBeInstanceOf(Uint8Array);
    const web = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode("é token")),
    );
    expect(hex(digest as Uint8Array)).toBe(hex(web));
    expect(hex(sha256("") as Uint8Array)).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
  });

  it("sameDigest tells equal digests from any difference, the last byte or the length", () => {
    const a = sha256("a") as Uint8Array;
    const b = Uint8Array.from(a);
    expect(sameDigest(a, b)).toBe(true);
    b[31] = (b[31] as number) ^ 1;
    expect(sameDigest(a, b)).toBe(false);
    expect(sameDigest(a, a.subarray(0, 31))).toBe(false);
  });
});
