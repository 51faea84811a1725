// The one rule that turns a TypeScript (camelCase) field name into the platform's snake_case wire
// name, shared by the Provisioning API's user record and the Integration API's records. Plain
// data, no zod: a client that only writes a record (the audit event) derives its wire names here
// without bundling the schema that the fake reads it with.

/** `firstName` → `first_name`, `releaseSequence` → `release_sequence`. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`);
}

/** Each name's wire name by `rule` (snake_case unless given). */
export function wireNamesOf<const Name extends string>(
  names: readonly Name[],
  rule: (name: string) => string = snakeCase,
): { readonly [Key in Name]: string } {
  return Object.fromEntries(names.map((name) => [name, rule(name)])) as {
    readonly [Key in Name]: string;
  };
}
