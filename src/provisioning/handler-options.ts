// The Provisioning API handler's public shape: its options (store, hooks, guards, limits,
// quarantine) and the handler it returns.
import type { Logger } from "../internal/logger.ts";
import type {
  QuarantinedUser,
  QuarantineEvent,
  QuarantineRetry,
} from "../users/quarantine-types.ts";
import type { UserPatch } from "../users/user-record.ts";
import type { UserStore } from "../users/user-store.ts";
import type { Authorize } from "./authorize.ts";
import type { ProvisioningTelemetryOptions } from "./observe.ts";
import type { ProvisioningStats } from "./stats.ts";
import type {
  ProvisioningChange,
  ProvisioningErrorContext,
  ProvisioningRequest,
  ProvisioningResponse,
} from "./types.ts";

/** Options of {@link createProvisioningHandler}. Only `store` is required. */
export interface ProvisioningHandlerOptions {
  /** Where users are kept: {@link MemoryUserStore} for tests, your database otherwise. */
  store: UserStore;
  /**
   * The path of the platform's `provisioner` URL (`https://host/ldap/auth` gives `/ldap/auth`).
   * Leave it empty when the framework already strips a mount prefix (Express `app.use("/ldap",
   * ...)`, Fastify `prefix`, Hono `mount`). Default `""`.
   */
  basePath?: string | undefined;
  /** The largest body accepted, in bytes; larger ones answer 413. Default 1 MiB. */
  bodyLimit?: number | undefined;
  /**
   * A guard run before every operation: false answers 403. Off by default, because the platform
   * sends no credentials. See {@link sharedSecret} and {@link allowAddresses}.
   */
  authorize?: Authorize;
  /**
   * Serves `POST /v1/reset` with the store's `reset()` (which deletes every user). Off by
   * default: the route then answers 404 like any unknown one and deletes nothing, since the
   * Provisioning API has no credentials and one unauthenticated POST would wipe every user. Turn it
   * on together with the release's `identity.enable_reset_request: "true"`. Setting `onReset`
   * turns it on too. Default `false`.
   */
  reset?: boolean;
  /**
   * Answers requests from web browsers. Off by default: a request carrying an `Origin` header or
   * `Sec-Fetch-Site: cross-site` or `same-site` answers 403, because the platform is a server,
   * never a browser, and the API reads bodies of any content type, which a web page could make
   * a visitor's browser post to an application on the internal network (CSRF). Default `false`.
   */
  allowBrowsers?: boolean;
  /**
   * Rewrites a patch before it is stored, in the user's turn: hash a clear-text password,
   * drop fields you must not keep. Return the patch to store, with the same uuid.
   */
  transform?: (
    patch: UserPatch,
    context: { operation: "create" | "modify" },
  ) => UserPatch | Promise<UserPatch>;
  /**
   * Runs after each change is stored, in order per user: revoke sessions on `deleted`, write an
   * audit event. If it throws, the request answers 500 and the platform delivers the message again,
   * so the hook runs at least once per change and must tolerate a repeat. A creation it failed to
   * accept is reported as `created` again on the next write of that user (the redelivery, or a
   * later modify), and before that user's `deleted`; the handler keeps that record in memory, so a
   * restart (or a redelivery that reaches another replica) in between reports it as `updated`.
   */
  onChange?: (change: ProvisioningChange) => void | Promise<void>;
  /**
   * Runs on `POST /v1/reset` instead of `store.reset()`, and serves that route. The platform
   * sends it (when the release sets `identity.enable_reset_request`) after the directory
   * configuration changed, then creates every user again. Deleting every user is the simple
   * answer; to keep user data, mark users instead and remove those the re-sync does not create
   * again. If it throws, the reset answers 500 and is sent again.
   */
  onReset?: () => void | Promise<void>;
  /**
   * Keeps the directory flowing past a record the store refuses for good: a message refused with
   * a {@link UserConflictError} (a unique email held by another user) is kept in the store's
   * quarantine and answered with its success status, instead of a 503 that pauses the platform at
   * that message for ever. The store keeps one pending record per user, every kept message merged
   * in order; later creates and modifies of that uuid merge into it and are tried with it at once,
   * and a delete of that uuid applies and discards it, in one atomic store step. A kept record
   * clears every unique field it moves the stored user off (the directory moved the user off
   * those values), so that swaps and rotations resolve once their last message arrives: a step
   * that frees a value tries again the oldest user waiting for it (the next, if that one cannot
   * take it), so a write costs the same however many users are kept. `onChange` reports every stored change, a field cleared by a conflict
   * included. The store must implement the quarantine methods (the bundled stores do): the option
   * throws a TypeError at construction otherwise. Default `false`: a conflict answers 503, and the
   * log says once per user that this option exists. See docs/provisioning.md, "Conflicts".
   */
  quarantine?: boolean;
  /**
   * Runs when a message enters the quarantine (`kept`), a pending user applies from it
   * (`released`) or is discarded by its delete (`discarded`): alert someone, open a ticket. The
   * record never carries the password. If it throws, `onError` sees it; the answer does not
   * change. It may call `handler.retryQuarantined()`: a user whose turn is held then (the one the
   * hook is about) is tried right after the current step, never waited for; called from a hook
   * of a retry pass, it joins that pass (answered at once) and never starts another.
   */
  onQuarantine?: (event: QuarantineEvent) => void | Promise<void>;
  /**
   * Receives every error that answered 500 or 503, so none is lost. Default: one line on
   * `logger.error`, with the user's password and credential headers cut out of the error's text.
   * Passwords never appear in the SDK's own errors; your store's errors are passed as they are.
   */
  onError?: (error: unknown, context: ProvisioningErrorContext) => void;
  /**
   * Where the handler reports failures (console, pino, winston: any object with `debug`, `info`,
   * `warn` and `error`). It never receives a password, a shared secret or a bearer token.
   * Default: errors on the console.
   */
  logger?: Logger;
  /**
   * OpenTelemetry settings. When `@opentelemetry/api` is installed, every request gets a SERVER
   * span and metrics (operations by type and status, request duration, store latency); uuids
   * stay out of spans unless `includeUuid` is set.
   */
  telemetry?: ProvisioningTelemetryOptions;
}

/**
 * The Provisioning API, independent of any server. Mount `fetch` where Web Requests are the
 * currency (Bun, Deno, Workers, Hono, Next.js), or use an adapter from `platform-integration/node`,
 * `/fastify` or `/koa`. Every member is bound: pass `handler.fetch` around freely.
 */
export interface ProvisioningHandler {
  /**
   * Answers a Web Request. The optional second argument supplies the peer address for
   * {@link allowAddresses}: `{ remoteAddress }`, or what Bun.serve (the server) and Deno.serve
   * (the connection info) pass to their fetch callback, so `Bun.serve({ fetch: handler.fetch })`
   * and `Deno.serve(handler.fetch)` need no glue.
   */
  fetch(request: Request, context?: unknown): Promise<Response>;
  /**
   * The plain-data core, for adapter authors: method, path, headers and body in; status, headers
   * and body out. It never rejects. An adapter checks {@link ProvisioningHandler.owns} first (to
   * pass other paths on without reading their body), reads the body up to `bodyLimit` (413 past
   * it), calls `handle`, writes the answer, and closes the connection after it when the answer's
   * `closeConnection` is set.
   */
  handle(request: ProvisioningRequest): Promise<ProvisioningResponse>;
  /**
   * Whether a request target is this API's to answer (any method): every path under a non-empty
   * `basePath` (unknown ones answer the API's JSON 404), else only the API's routes.
   */
  owns(path: string): boolean;
  /** The normalized base path: empty, or a leading slash and no trailing one. */
  readonly basePath: string;
  /** The largest body accepted, in bytes. */
  readonly bodyLimit: number;
  /**
   * Health figures since the handler was created, for a /healthz route: answers by operation and
   * status, when the last message came, the last error's code and time, requests in flight.
   */
  stats(): ProvisioningStats;
  /**
   * The users the quarantine holds (all replicas'), oldest first, each with its kept messages
   * merged, without their passwords; empty without the `quarantine` option.
   */
  quarantined(): Promise<QuarantinedUser[]>;
  /**
   * Tries every pending user again, oldest first, after you resolved a conflict by hand (the
   * handler itself tries only the users a write freed a value for). Resolves what applied and
   * what waits. Safe from a hook: it never waits for a user's turn; a user whose turn is held
   * (the hook's own) is tried right after the step that holds it. Calls coalesce: one pass runs
   * at a time, none inside another. A call from a hook of the pass in flight resolves at once
   * (`released: 0`, the pass covers it); any other call during a pass waits for the one pass
   * that follows it, shared by every such call.
   */
  retryQuarantined(): Promise<QuarantineRetry>;
}

/**
 * What the Node, Fastify and Koa adapters drive: the plain-data core, the route check and the
 * limits. A {@link ProvisioningHandler} has it, and so does the SCIM handler
 * (`platform-integration/scim`), which the same adapters serve.
 */
export type ServedHandler = Pick<
  ProvisioningHandler,
  "handle" | "owns" | "basePath" | "bodyLimit"
> & {
  /**
   * What `fetch` and the adapters answer for a request refused before `handle` reads it, in the
   * handler's own error form. Absent: the Provisioning API's answers. The SCIM handler gives SCIM
   * errors.
   */
  readonly edgeAnswers?: EdgeAnswers | undefined;
};

/**
 * The answers for requests an edge (`handler.fetch`, the Node, Fastify and Koa adapters) refuses
 * before the handler reads them: a body over `bodyLimit`, and what a body parser in front of the
 * handler (`express.json()`) rejected itself.
 */
export interface EdgeAnswers {
  /** A body over the handler's `bodyLimit`; the edge closes the connection after it. */
  readonly bodyTooLarge: ProvisioningResponse;
  /** body-parser's `entity.parse.failed`. */
  readonly invalidJson: ProvisioningResponse;
  /** body-parser's `entity.too.large`: the parser's own limit. */
  readonly parserTooLarge: ProvisioningResponse;
  /** body-parser's `charset.unsupported`. */
  readonly unsupportedCharset: ProvisioningResponse;
  /** body-parser's `encoding.unsupported`. */
  readonly unsupportedEncoding: ProvisioningResponse;
}
