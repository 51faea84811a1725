// A deep copy of JSON data in plain code. structuredClone serializes through the engine's
// transfer machinery, which for the small records a store hands out cost more than the request
// around it (12 % of a SCIM PATCH on MemoryUserStore); this walks the value once.

/**
 * A deep copy of a JSON value: arrays and plain objects copied, primitives as they are. An own key
 * `__proto__` (as JSON.parse makes one) stays an own data property of the copy, as
 * structuredClone keeps it, never reaching the copy's prototype. Values that are not JSON data
 * (class instances, Maps) are not supported: the stores hold JSON only.
 */
export function jsonCopy<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const items = new Array(value.length);
    for (let index = 0; index < value.length; index++) items[index] = jsonCopy(value[index]);
    return items as T;
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = jsonCopy((value as Record<string, unknown>)[key]);
    if (key === "__proto__") {
      Object.defineProperty(copy, key, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else copy[key] = item;
  }
  return copy as T;
}
