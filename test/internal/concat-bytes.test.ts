import { describe, expect, it } from "vitest";
import { concatBytes } from "../../src/internal/concat-bytes.ts";

describe("concatBytes", () => {
  it("joins chunks in order, each after the last (not each at offset 0)", () => {
    const chunks = [Uint8Array.of(1, 2), Uint8Array.of(3), Uint8Array.of(4, 5, 6)];
    expect([...concatBytes(chunks, 6)]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("hands a lone chunk back as it is, without a copy", () => {
    const chunk = Uint8Array.of(7, 8);
    expect(concatBytes([chunk], 2)).toBe(chunk);
  });

  it("gives an empty array for no chunks", () => {
    expect(concatBytes([], 0)).toEqual(new Uint8Array(0));
  });
});
