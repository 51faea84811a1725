import type { JsonValue } from "type-fest";
import * as z from "zod/mini";
import { type UserFieldName, userFieldNames } from "./user-record.ts";

function buildSchema() {
  const text = z.exactOptional(z.string());
  const fields = Object.fromEntries(userFieldNames.map((name) => [name, text])) as {
    [Field in UserFieldName]: typeof text;
  };
  return z.object({
    uuid: z.string().check(z.minLength(1)),
    ...fields,
    // zod's JSON type is a subset of type-fest's JsonValue, the one the store contract speaks.
    extra: z.exactOptional(z.record(z.string(), z.json() as z.ZodMiniType<JsonValue>)),
    deactivatedAt: z.exactOptional(z.string()),
  });
}

/**
 * The zod schema of a stored `UserRecord`; a type test pins its output to that interface. Use it to check users read back from a store
 * that does not enforce the shape itself (a JSON column, a cache). The Provisioning API does not
 * parse the wire with it: the wire carries snake_case names and lenient types, handled by a
 * hand-written check that is several times faster on the hot path. Importing it costs the
 * zod/mini bundle only where it is used.
 *
 * @example
 * ```ts
 * const user = userRecordSchema.parse(JSON.parse(row.data));
 * ```
 */
export const userRecordSchema = /* @__PURE__ */ buildSchema();
