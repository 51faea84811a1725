// Equality of JSON data for the contract checks, in plain code: the runtime-neutral testing entry
// imports no node: module (node:assert is not there on every runtime the SDK supports).

/**
 * True when `actual` and `expected` are the same JSON data: equal primitives (`Object.is`, so
 * `-0` and `0` differ as assert's deepStrictEqual has them), arrays of equal items, or objects with
 * the same own keys (in any order) holding equal values. A key set to `undefined` is not absent.
 */
export function jsonEqual(actual: unknown, expected: unknown): boolean {
  if (Object.is(actual, expected)) return true;
  if (typeof actual !== "object" || typeof expected !== "object") return false;
  if (actual === null || expected === null) return false;
  if (Array.isArray(actual) !== Array.isArray(expected)) return false;
  if (Object.getPrototypeOf(actual) !== Object.getPrototypeOf(expected)) return false;
  const keys = Object.keys(actual);
  if (keys.length !== Object.keys(expected).length) return false;
  return keys.every(
    (key) =>
      Object.hasOwn(expected, key) &&
      jsonEqual(
        (actual as Record<string, unknown>)[key],
        (expected as Record<string, unknown>)[key],
      ),
  );
}

/** Throws an error that shows both values unless they are the same JSON data. */
export function assertJsonEqual(actual: unknown, expected: unknown, what: string): void {
  if (!jsonEqual(actual, expected)) {
    throw new Error(`${what}: got ${show(actual)}, expected ${show(expected)}`);
  }
}

function show(value: unknown): string {
  return value === undefined ? "undefined" : JSON.stringify(value);
}
