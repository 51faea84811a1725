import { describe, expect, it } from "vitest";
import { jsonCopy } from "../../src/internal/json-copy.ts";

describe("jsonCopy", () => {
  it("copies objects and arrays at every depth, sharing nothing with the original", () => {
    const original = { a: 1, b: { c: [1, { d: "x" }], e: null, f: true }, g: [] as unknown[] };
    const copy = jsonCopy(original);
    expect(copy).toEqual(original);
    expect(copy).not.toBe(original);
    expect(copy.b).not.toBe(original.b);
    expect(copy.b.c).not.toBe(original.b.c);
    expect(copy.b.c[1]).not.toBe(original.b.c[1]);
    (copy.b.c[1] as { d: string }).d = "changed";
    copy.g.push(1);
    expect(original.b.c[1]).toEqual({ d: "x" });
    expect(original.g).toEqual([]);
  });

  it("returns primitives as they are", () => {
    for (const value of ["s", 0, -0, 1.5, true, null, undefined]) {
      expect(Object.is(jsonCopy(value), value)).toBe(true);
    }
  });

  it("keeps an own __proto__ key (as JSON.parse makes one) an own key, never the prototype", () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true},"nested":{"__proto__":[1]}}');
    const copy = jsonCopy(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(copy.nested)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, "__proto__")).toBe(true);
    expect(Object.keys(copy)).toEqual(["__proto__", "nested"]);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
    expect(copy).toEqual(structuredClone(parsed));
  });

  it("keeps a key set to undefined, as structuredClone does", () => {
    expect(Object.hasOwn(jsonCopy({ a: undefined }), "a")).toBe(true);
  });
});
