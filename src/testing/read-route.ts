import { toWireUser } from "../platform/wire-user.ts";
import { errorResponse } from "../provisioning/errors.ts";
import type { ProvisioningHandler } from "../provisioning/handler-options.ts";
import type { ProvisioningResponse } from "../provisioning/types.ts";
import type { UserRecord } from "../users/user-record.ts";

/** A store that can look one user up: `MemoryUserStore`, or any `UserStore` with a `get`. */
export interface ReadableUserStore {
  get(uuid: string): UserRecord | undefined | Promise<UserRecord | undefined>;
}

const jsonHeaders = { "content-type": "application/json; charset=utf-8" } as const;
const userPath = /^\/v1\/user\/([^/?#]+)\/?(?:[?#]|$)/;

/**
 * A test aid: the same handler, plus `GET /v1/user/:uuid` (and HEAD) answering 200 with the
 * stored user as JSON in the wire's snake_case names, or 404, as `runConformance`'s `readUser`
 * and the CLI's `--read-user` expect. The password is never served. A user the store keeps
 * deactivated (`onDelete: "deactivate"`) is served with `deactivated_at`, which those readers
 * take as deleted.
 *
 * Only for a test environment: the platform never calls this route, and it answers anyone who
 * reaches the API, without the handler's `authorize` guard. Every other request goes to the
 * handler unchanged, so the result mounts with any adapter as the handler does.
 *
 * @example
 * ```ts
 * const store = new MemoryUserStore();
 * let handler = createProvisioningHandler({ store });
 * if (process.env.NODE_ENV === "test") handler = withReadUserRoute(handler, store);
 * // npx platform-integration conformance http://localhost:3000 \
 * //   --read-user "http://localhost:3000/v1/user/{uuid}"
 * ```
 */
export function withReadUserRoute(
  handler: ProvisioningHandler,
  store: ReadableUserStore,
): ProvisioningHandler {
  const read = async (method: string, path: string): Promise<ProvisioningResponse | undefined> => {
    if (method !== "GET" && method !== "HEAD") return undefined;
    if (!path.startsWith(handler.basePath)) return undefined;
    const segment = userPath.exec(path.slice(handler.basePath.length))?.[1];
    if (segment === undefined || segment === "create" || segment === "modify") return undefined;
    let uuid: string;
    try {
      uuid = decodeURIComponent(segment);
    } catch {
      return errorResponse("invalid_uuid", "The uuid in the path is not valid percent-encoding");
    }
    let user: UserRecord | undefined;
    try {
      user = await store.get(uuid);
    } catch {
      return errorResponse("store_unavailable", "The user store failed");
    }
    if (user === undefined) return errorResponse("not_found", "No user has this uuid");
    const { password: _password, deactivatedAt, ...served } = user;
    const wire = toWireUser(served);
    // The marker that tells a reader the user is deleted as the platform sees it (see ReadUser).
    if (deactivatedAt !== undefined) wire.deactivated_at = deactivatedAt;
    const body = method === "HEAD" ? undefined : JSON.stringify(wire);
    return { status: 200, headers: jsonHeaders, body };
  };
  return {
    ...handler,
    owns: (path) => handler.owns(path),
    handle: async (request) =>
      (await read(request.method, request.path)) ?? handler.handle(request),
    async fetch(request, context) {
      const { pathname, search } = new URL(request.url);
      const answer = await read(request.method, pathname + search);
      if (answer === undefined) return handler.fetch(request, context);
      return new Response(answer.body ?? null, { status: answer.status, headers: answer.headers });
    },
  };
}
