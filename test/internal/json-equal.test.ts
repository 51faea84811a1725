import { describe, expect, it } from "vitest";
import { assertJsonEqual, jsonEqual } from "../../src/internal/json-equal.ts";

describe("jsonEqual", () => {
  it("compares objects by their own keys in any order, and nested values deeply", () => {
    expect(jsonEqual({ a: 1, b: { c: [1, null] } }, { b: { c: [1, null] }, a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, b: { c: [1, null] } }, { a: 1, b: { c: [1] } })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: 1, b: 2 }, { a: 1, c: 2 })).toBe(false);
  });

  it("tells a key set to undefined from an absent one, as deepStrictEqual does", () => {
    expect(jsonEqual({ uuid: "u1", username: undefined }, { uuid: "u1" })).toBe(false);
    expect(jsonEqual({ uuid: "u1" }, { uuid: "u1", username: undefined })).toBe(false);
  });

  it("keeps types apart: strings and numbers, arrays and objects, null and objects", () => {
    expect(jsonEqual("3", 3)).toBe(false);
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
    expect(jsonEqual(0, -0)).toBe(false);
    expect(jsonEqual(Number.NaN, Number.NaN)).toBe(true);
  });

  it("treats a __proto__ key as a plain key, and a different prototype as a difference", () => {
    const withProto = JSON.parse('{"__proto__":{"x":1}}');
    expect(jsonEqual(withProto, JSON.parse('{"__proto__":{"x":1}}'))).toBe(true);
    expect(jsonEqual(withProto, {})).toBe(false);
    expect(jsonEqual(Object.create(null), {})).toBe(false);
  });

  it("throws an error that shows both values, for assertJsonEqual", () => {
    expect(() => assertJsonEqual({ a: 1 }, { a: 2 }, "the user")).toThrow(
      'the user: got {"a":1}, expected {"a":2}',
    );
    expect(() => assertJsonEqual(undefined, { a: 2 }, "the user")).toThrow(
      'the user: got undefined, expected {"a":2}',
    );
    expect(() => assertJsonEqual([1, { b: 2 }], [1, { b: 2 }], "same")).not.toThrow();
  });
});
