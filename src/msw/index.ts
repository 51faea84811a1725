import { type HttpHandler, http } from "msw";
import { joinUrl, normalizeBaseUrl } from "../internal/url.ts";
import {
  createFakeIntegrationApi,
  type FakeIntegrationApi,
  type FakeIntegrationApiOptions,
} from "../testing/fake-integration-api.ts";

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
    base = normalizeBaseUrl(baseUrl);
  } catch (error) {
    throw new TypeError(`baseUrl ${(error as Error).message}`);
  }
  if (base !== new URL(base).origin) {
    throw new TypeError(
      `baseUrl must be the Integration API base, scheme, host and port without a path: got ${base}.`,
    );
  }
  const api = createFakeIntegrationApi(fakeOptions);
  // The fake answers an injected network error with Response.error(), which is what msw's
  // HttpResponse.error() returns: msw fails the request with a network error.
  const resolver = ({ request }: { request: Request }) => api.respond(request);
  return {
    api,
    handlers: [
      http.get(joinUrl(base, "/version/v1/current"), resolver),
      http.get(joinUrl(base, "/version/v1/updates"), resolver),
      http.put(joinUrl(base, "/version/v1/:sequence"), resolver),
      http.post(joinUrl(base, "/audit/v1/event"), resolver),
      http.get(joinUrl(base, "/identity/v1/sources"), resolver),
      http.post(joinUrl(base, "/identity/v1/login"), resolver),
      http.get(joinUrl(base, "/identity/v1/user/:username"), resolver),
      http.get(joinUrl(base, "/identity/v1/user/:username/exists"), resolver),
      http.put(joinUrl(base, "/status/v1/startup"), resolver),
      http.get(joinUrl(base, "/license/v1/license"), resolver),
      http.get(joinUrl(base, "/license/v1/field/:name"), resolver),
      http.get(joinUrl(base, "/console/v1/option"), resolver),
    ],
  };
}
