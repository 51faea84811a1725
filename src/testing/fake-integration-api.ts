import { createFakeAudit, type FakeAuditEvent } from "../clients/audit/fake.ts";
import {
  createFakeConsole,
  type FakeConsoleApi,
  type FakeStartupStatus,
} from "../clients/console/fake.ts";
import {
  createFakeIdentity,
  type FakeIdentityApi,
  type FakeIdentityInit,
  type FakeLoginAttempt,
} from "../clients/identity/fake.ts";
import {
  createFailureQueue,
  type FakeFailure,
  type FakeRoute,
  fetchThrough,
  jsonError,
  matchRoutes,
} from "../clients/integration-api/fake-answers.ts";
import {
  createFakeLicense,
  type FakeLicense,
  type FakeLicenseApi,
} from "../clients/license/fake.ts";
import {
  createFakeVersion,
  type FakeCurrentVersion,
  type FakeCurrentVersionInit,
  type FakeUpdate,
  type FakeUpdateInit,
  type FakeVersionOptions,
} from "../clients/version/fake.ts";

// The fake Integration API: each client folder's fake (its routes and state, built from that
// client's records) composed behind one router, which adds what is the platform's and no
// record's: unknown paths and methods, injected failures, the Accept check.

export type { FakeFailure } from "../clients/integration-api/fake-answers.ts";

/** The fake's starting state and hooks; see {@link createFakeIntegrationApi}. */
export interface FakeIntegrationApiOptions extends FakeVersionOptions {
  /** Called with every audit event accepted, as it arrives. */
  onAuditEvent?: (event: FakeAuditEvent) => void;
  /** The Identity API's sources, users and groups (default: user bob, password password123). */
  identity?: FakeIdentityInit;
  /** Called with every login answered (200 or 401): the username and outcome, never the password. */
  onLogin?: (attempt: FakeLoginAttempt) => void;
  /** Called with every start-up status the Status API receives. */
  onStartupStatus?: (status: FakeStartupStatus) => void;
  /** The license the License API serves (default: `fakeLicenseDefault`). */
  license?: FakeLicense;
  /** The Console API's options by name, e.g. `{ "tls.authority.cert": pem }` (default: none). */
  consoleOptions?: Record<string, string>;
}

/** A fake of the platform's Integration API: its state, and a Web-standard request handler. */
export interface FakeIntegrationApi {
  /**
   * Answers a request to the Version or Audit API. An injected network error is answered with
   * `Response.error()`, the Fetch standard's network error: msw turns it into a failed request, a
   * server adapter drops the connection.
   */
  respond(request: Request): Promise<Response>;
  /**
   * A drop-in `fetch` that calls the fake in-process, without a server or msw: pass it as a
   * client's `fetch` option. An injected network error rejects with a `TypeError`, as `fetch` does.
   */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** A copy of the running release. */
  readonly current: FakeCurrentVersion;
  /** A copy of the pending updates, by ascending release sequence. */
  readonly updates: readonly FakeUpdate[];
  /** A copy of the audit events received, oldest first. */
  readonly auditEvents: readonly FakeAuditEvent[];
  setCurrent(current: FakeCurrentVersionInit): void;
  /** Replaces the pending updates; release sequences must be distinct. */
  setUpdates(updates: readonly FakeUpdateInit[]): void;
  /**
   * Applies a pending update as PUT /version/v1/:sequence does: it becomes the current version,
   * installed now, and it and every earlier pending update leave the list. Throws when no pending
   * update has that sequence.
   */
  apply(sequence: number): FakeCurrentVersion;
  /**
   * Makes the next `count` calls to an endpoint fail (unknown paths do not count). Failures queue:
   * `failNext(2, { status: 503 })` then `failNext(1, { networkError: true })` fails three calls.
   */
  failNext(count: number, failure: FakeFailure): void;
  /** The Identity API's directory and the logins it answered. */
  readonly identity: FakeIdentityApi;
  /** The start-up statuses received (Status API) and the console options served (Console API). */
  readonly console: FakeConsoleApi;
  /** The license the License API serves. */
  readonly license: FakeLicenseApi;
  /**
   * Back to the state given at creation: no audit events, logins or start-up statuses, no queued
   * failures.
   */
  reset(): void;
}

/**
 * Creates a fake of the platform's Integration API (spec sections 4.2 and 4.3, and the Identity,
 * Status, License and Console APIs of the platform's docs: see each client folder's `fake.ts`)
 * as plain state and
 * a Web `Request` to `Response` handler, with the platform's wire formats: snake_case fields,
 * timestamps with seven fractional digits, the updates as a bare JSON array, `201` with an empty
 * text/plain body for an audit event, `400` when an Accept header is present but allows no JSON
 * (neither application/json nor any type). It imports nothing, so it runs on any runtime: behind
 * msw (`platform-integration/msw`), behind a server (`platform-integration mock-api`), or
 * in-process through {@link FakeIntegrationApi.fetch}.
 *
 * Beyond the spec, it answers what a platform would reject with a JSON error `{ error, message }`:
 * `400` for an audit body that is not a JSON object or a documented field that is not a string,
 * `415` for an audit body not sent as application/json, `404` for a sequence that is not pending,
 * `404` and `405` for unknown paths and methods. PUT /version/v1/:sequence answers `204`: the spec
 * shows no status or body, so a client must not depend on one.
 *
 * @example
 * ```ts
 * const api = createFakeIntegrationApi({
 *   current: { version: "1.4.0", releaseSequence: 40 },
 *   updates: [{ version: "1.5.0", releaseSequence: 41, releaseNotes: "Faster sync" }],
 * });
 * api.failNext(1, { status: 503 });
 * const response = await api.fetch("http://platform.test/version/v1/updates"); // 503
 * ```
 */
export function createFakeIntegrationApi(
  options: FakeIntegrationApiOptions = {},
): FakeIntegrationApi {
  return buildFakeIntegrationApi(options).api;
}

/**
 * {@link createFakeIntegrationApi}, with the routes it answers: the msw handlers are built from
 * them. Internal: not exported by `platform-integration/testing`.
 */
export function buildFakeIntegrationApi(options: FakeIntegrationApiOptions = {}): {
  api: FakeIntegrationApi;
  routes: readonly FakeRoute[];
} {
  const failures = createFailureQueue();
  const versionFake = createFakeVersion(options);
  const auditFake = createFakeAudit(options.onAuditEvent);
  const identityFake = createFakeIdentity(options.identity, options.onLogin);
  const consoleFake = createFakeConsole(options.consoleOptions, options.onStartupStatus);
  const licenseFake = createFakeLicense(options.license);
  const fakes = [versionFake, auditFake, identityFake, consoleFake, licenseFake];
  const routes: FakeRoute[] = fakes.flatMap((fake) => fake.routes);
  // Each API's prefix, as its routes name it, for the answer to an unknown path.
  const prefixes = [...new Set(routes.map(({ path }) => path.split("/").slice(0, 3).join("/")))];
  const served = `${prefixes.slice(0, -1).join(", ")} and ${prefixes.at(-1)}`;

  const respond = async (request: Request): Promise<Response> => {
    const matches = matchRoutes(routes, new URL(request.url).pathname);
    if (matches.length === 0) {
      return jsonError(404, "not_found", `No such endpoint: the fake serves ${served}.`);
    }
    const chosen = matches.find(({ route }) => route.method === request.method);
    if (chosen === undefined) {
      const allow = matches.map(({ route }) => route.method).join(", ");
      return jsonError(405, "method_not_allowed", `This endpoint answers ${allow}.`, {
        allow,
      });
    }
    const failure = failures.take();
    if (failure !== undefined) {
      if ("networkError" in failure) return Response.error();
      return jsonError(
        failure.status,
        "injected_failure",
        "This failure was injected with failNext().",
        failure.headers,
      );
    }
    if (!acceptsJson(request.headers.get("accept"))) {
      return jsonError(
        400,
        "not_acceptable",
        "The Accept header must allow application/json or */*.",
      );
    }
    return chosen.route.answer(request, chosen.segment);
  };

  const api: FakeIntegrationApi = {
    respond,
    fetch: fetchThrough(respond),
    get current() {
      return versionFake.api.current;
    },
    get updates() {
      return versionFake.api.updates;
    },
    get auditEvents() {
      return auditFake.events;
    },
    setCurrent: versionFake.api.setCurrent,
    setUpdates: versionFake.api.setUpdates,
    identity: identityFake.api,
    console: consoleFake.api,
    license: licenseFake.api,
    apply: versionFake.api.apply,
    failNext: failures.push,
    reset() {
      failures.clear();
      for (const fake of fakes) fake.reset();
    },
  };
  return { api, routes };
}

/** True when the Accept header is absent or allows JSON (q=0 excludes a range). */
function acceptsJson(accept: string | null): boolean {
  if (accept === null) return true;
  return accept.split(",").some((range) => {
    const [type = "", ...parameters] = range.split(";").map((part) => part.trim().toLowerCase());
    const quality = parameters.find((parameter) => parameter.startsWith("q="));
    if (quality !== undefined && Number(quality.slice(2)) === 0) return false;
    return type === "*/*" || type === "application/*" || type === "application/json";
  });
}
