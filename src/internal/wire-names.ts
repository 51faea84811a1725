// The one rule that turns a TypeScript (camelCase) field name into the platform's snake_case wire
// name, shared by the Provisioning API's user record and the Integration API's records.

/** `firstName` → `first_name`, `releaseSequence` → `release_sequence`. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`);
}
