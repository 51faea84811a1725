import type { HttpHandler } from "msw";
import { joinUrl, normalizeApiBaseUrl } from "../internal/url.ts";
import {
  buildFakeIntegrationApi,
  type FakeIntegrationApi,
  type FakeIntegrationApiOptions,
} from "../testing/fake-integration-api.ts";
import {
  buildFakeSdkApi,
  type FakeSdkApi,
  type FakeSdkApiOptions,
} from "../testing/fake-sdk-api.ts";
import { msw } from "./load-msw.ts";

/** Where the handlers listen, and the fake's starting state. */
export interface IntegrationApiHandlersOptions extends FakeIntegrationApiOptions {
  /**
   * The Integration API base URL your app reads from PLATFORM_INTEGRATIONAPI: scheme, host and
   * port, without a path (the platform's never has one), e.g. `https://platform.test`.
   */
  baseUrl: string | URL;
}

/** The msw handlers, and the fake state behind them. */
export interface IntegrationApiHandlers {
  /** Pass them to `setupServer(...handlers)` or `setupWorker(...handlers)`. */
  handlers: HttpHandler[];
  /**
   * Set versions, updates, users and the license; read audit events, logins and start-up
   * statuses; inject failures; reset between tests.
   */
  api: FakeIntegrationApi;
}

/**
 * msw request handlers for the platform's Integration API (Version, Audit, Identity, Status,
 * License and Console), over a fake state (see `createFakeIntegrationApi` in
 * `platform-integration/testing` for its behaviour). They answer exactly the documented
 * endpoints under `baseUrl`; anything else is left to msw's
 * unhandled-request strategy. An injected network error becomes msw's `HttpResponse.error()`, so
 * the app's `fetch` rejects as it would on a dropped connection. Works with msw 2.7+ and 3.
 *
 * @example
 * ```ts
 * import { setupServer } from "msw/node";
 * import { createIntegrationApiHandlers } from "platform-integration/msw";
 *
 * const { handlers, api } = createIntegrationApiHandlers({
 *   baseUrl: "https://platform.test",
 *   updates: [{ version: "2.0.0", releaseSequence: 2 }],
 * });
 * const server = setupServer(...handlers);
 * beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
 * afterEach(() => api.reset());
 * afterAll(() => server.close());
 *
 * it("records the login", async () => {
 *   await app.login("bob");
 *   expect(api.auditEvents).toContainEqual(expect.objectContaining({ action: "user.login" }));
 * });
 * ```
 */
export function createIntegrationApiHandlers(
  options: IntegrationApiHandlersOptions,
): IntegrationApiHandlers {
  const { baseUrl, ...fakeOptions } = options;
  let base: string;
  try {
    base = normalizeApiBaseUrl(baseUrl);
  } catch (error) {
    throw new TypeError(`baseUrl ${(error as Error).message}`);
  }
  const { api, routes } = buildFakeIntegrationApi(fakeOptions);
  // The fake answers an injected network error with Response.error(), which is what msw's
  // HttpResponse.error() returns: msw fails the request with a network error.
  const resolver = ({ request }: { request: Request }) => api.respond(request);
  return {
    api,
    handlers: [
      // Each route the fake answers, as the fake names it: the handlers know no endpoint.
      ...routes.map(({ method, path }) =>
        msw.http[method.toLowerCase() as Lowercase<typeof method>](joinUrl(base, path), resolver),
      ),
      // What the Integration API answers there, so that a client's "auto" with this baseUrl
      // (which asks GET /healthz) decides "integration" once, as against the platform.
      msw.http.all(joinUrl(base, "/healthz"), resolver),
    ],
  };
}

/** Where the newer API's handlers listen, and the fake's starting state. */
export interface SdkApiHandlersOptions extends FakeSdkApiOptions {
  /**
   * The newer service's base URL as the app reaches it: scheme, host and port without a path.
   * Default `http://replicated:3000`, the service's default address.
   */
  baseUrl?: string | URL;
}

/** The msw handlers of the newer API, and the fake state behind them. */
export interface SdkApiHandlers {
  /** Pass them to `setupServer(...handlers)` or `setupWorker(...handlers)`. */
  handlers: HttpHandler[];
  /** Set releases, updates, the license and the modes; read metrics, tags and bundles; inject failures. */
  api: FakeSdkApi;
}

/**
 * msw request handlers for the platform's newer in-cluster API (the SDK service) and the admin
 * console's compatibility license endpoint, over a fake state (see `createFakeSdkApi` in
 * `platform-integration/testing`): the replay cache, read-only mode, air gap, stale answers,
 * integration mode (its status and mock data) and older service versions included.
 *
 * @example
 * ```ts
 * import { setupServer } from "msw/node";
 * import { createSdkApiHandlers } from "platform-integration/msw";
 *
 * const { handlers, api } = createSdkApiHandlers({ updates: [{ version: "2.0.0" }] });
 * const server = setupServer(...handlers);
 * // the app's createVersionClient({ api: "sdk" }) now reads 2.0.0 as pending
 * ```
 */
export function createSdkApiHandlers(options: SdkApiHandlersOptions = {}): SdkApiHandlers {
  const { baseUrl = "http://replicated:3000", ...fakeOptions } = options;
  let base: string;
  try {
    base = normalizeApiBaseUrl(baseUrl);
  } catch (error) {
    throw new TypeError(`baseUrl ${(error as Error).message}`);
  }
  const { api, servicePaths } = buildFakeSdkApi(fakeOptions);
  const resolver = ({ request }: { request: Request }) => api.respond(request);
  return {
    api,
    // Each path the fake serves, as it names them; every method reaches the fake, which answers
    // an unlisted one 405 as the service does.
    handlers: servicePaths.map((path) => msw.http.all(joinUrl(base, path), resolver)),
  };
}
