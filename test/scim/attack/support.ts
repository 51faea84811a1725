// Attack helpers: a SCIM client over a handler's Web entry, its paths under the base path.
import type { ScimHandler } from "../../../src/scim/index.ts";
import { type Answer, patchOp, scim, token } from "../helpers.ts";

export { type Answer, patchOp, token };

export function clientOf(handler: Pick<ScimHandler, "fetch">, base = "/scim/v2") {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    scim(handler, method, `${base}${path}`, body, headers);
}
