import type { Logger } from "../internal/logger.ts";
import type { ServedHandler } from "../provisioning/handler-options.ts";
import type { UserStore, UserStoreReads } from "../users/user-store.ts";
import type { ScimAuthenticate } from "./auth.ts";

/**
 * What a SCIM server needs of a store: the writes of every `UserStore` and `replace` (SCIM writes
 * whole records, and its `active: false` deactivates without deleting), and the reads;
 * `findUsers`, when the store has it, finds users by userName and externalId without reading
 * every user, and `listPage` reads one page of `GET /Users` (without a filter) and its total
 * instead of every user. The bundled stores (Memory, SQLite, PostgreSQL) have all of it.
 */
export type ScimUserStore = UserStore & Required<Pick<UserStore, "replace">> & UserStoreReads;

/** What `onError` learns besides the error. */
export interface ScimErrorContext {
  /** The request's method and path under the base path (no query: a filter may hold a name). */
  method: string;
  path: string;
  /** 503 when the store failed, 500 when the SDK or a hook did. */
  status: 500 | 503;
}

/** Options of {@link createScimHandler}. `store` and one of `token` or `authenticate` are required. */
export interface ScimHandlerOptions {
  /** Where users are kept: the same store as the Provisioning API's. */
  store: ScimUserStore;
  /**
   * The bearer token the identity provider sends (`Authorization: Bearer <token>`), compared in
   * constant time. Give this or `authenticate`; with neither, the handler throws at construction.
   */
  token?: string | undefined;
  /** Your own check of a request (an OAuth access token, a per-tenant token): false answers 401. */
  authenticate?: ScimAuthenticate | undefined;
  /**
   * Where SCIM is served. Default `"/scim/v2"`; `""` when a framework strips the mount path
   * (Express's `app.use("/scim/v2", …)`, a Fastify `prefix`, koa-mount): the Node adapters tell
   * the handler that mount, and the URLs it answers with name it.
   */
  basePath?: string | undefined;
  /**
   * The absolute URL the identity provider calls the server at (`https://app.example.com/scim/v2`),
   * for `meta.location`, the `Location` header and the discovery documents. Default:
   * path-absolute locations, the mount the Node adapter reports then `basePath`
   * (`/scim/v2/Users/…`): a request's Host header is never trusted for them. Give it when
   * something the handler cannot see strips a path in front of it: a reverse proxy, Hono's
   * `app.mount()` (which rewrites the request `fetch` gets).
   */
  baseUrl?: string | undefined;
  /** The largest body accepted, in bytes; larger ones answer 413. Default 1 MiB. */
  bodyLimit?: number | undefined;
  /** The most users one page of `GET /Users` returns (`filter.maxResults`). Default 200. */
  maxResults?: number | undefined;
  /** Receives every error that answered 500 or 503. Default: one line on `logger.error`. */
  onError?: ((error: unknown, context: ScimErrorContext) => void) | undefined;
  /** Where failures are reported. Default: errors on the console. */
  logger?: Logger | undefined;
}

/**
 * A SCIM 2.0 server, independent of any HTTP server: `fetch` for Web servers (Bun, Deno, Workers,
 * Hono, Next.js), and the plain-data core of {@link ServedHandler} (`handle`, `owns`, `basePath`,
 * `bodyLimit`), which `toNodeHandler`, `toFastifyPlugin` and `toKoaMiddleware` serve as they
 * serve the Provisioning handler. Every member is bound.
 */
export interface ScimHandler extends ServedHandler {
  /** Answers a Web Request. */
  fetch(request: Request, context?: unknown): Promise<Response>;
}
