import { pathSegment } from "../../internal/url.ts";
import type { CallOptions, IntegrationApiOptions } from "../integration-api/client-options.ts";
import { ConfigurationError, isHttpError, isPlatformApiError } from "../integration-api/errors.ts";
import { createIntegrationApi } from "../integration-api/http.ts";
import { type Capabilities, capabilitiesOf } from "../sdk-api/api-selection.ts";
import {
  type IdentitySource,
  type IdentityUser,
  readExists,
  readSources,
  readUser,
} from "./read-identity.ts";

/** Options of {@link createIdentityClient}. */
export interface IdentityClientOptions extends IntegrationApiOptions {
  /**
   * The source every call uses unless it passes its own: for an application that authenticates
   * against one of several sources. Without it, calls that pass no source ask `sources()` first
   * (its answer is kept for a minute) and fail when there are several.
   */
  source?: IdentitySource | undefined;
}

/** Options of `login()`, `user()` and `exists()`. */
export interface IdentityCallOptions extends CallOptions {
  /**
   * The directory to use, from `sources()`: sent as the `hostname` and `base_dn` query
   * parameters, which the platform requires when it has several sources.
   */
  source?: IdentitySource | undefined;
}

/** What a user typed into a login form. */
export interface Credentials {
  username: string;
  password: string;
}

/**
 * The outcome of `login()`. A refused login is an expected outcome, not an exception:
 * `invalid-credentials` when the platform answered 401 (wrong password, unknown or locked user),
 * `missing-credentials` when the username or password was empty, which is refused without a
 * request (an LDAP bind with an empty password is an anonymous bind, which some directories accept).
 */
export type LoginResult =
  | { authenticated: true; user: IdentityUser }
  | { authenticated: false; reason: "invalid-credentials" | "missing-credentials" };

/** The Identity API: authenticate the platform's directory users and look them up. */
export interface IdentityClient {
  /**
   * What this client's API can serve: it talks to the Integration API only (the newer install
   * methods have no such service), so check `capabilities` of a Version or License client to
   * know whether this one applies.
   */
  readonly capabilities: Readonly<Capabilities>;
  /** The enabled directories (LDAP sources), in the platform's order. */
  sources(options?: CallOptions): Promise<IdentitySource[]>;
  /**
   * Checks a username and password against the directory. Never retried (a retried login counts
   * twice against the directory's lockout), and the password appears in no error, message or
   * body this client produces. Counting failures and locking accounts is the application's job.
   *
   * @throws ConfigurationError when no source is given and the platform has several.
   * @throws HttpError for any answer but 200 and 401; NetworkError, CallTimeoutError as any call.
   */
  login(credentials: Credentials, options?: IdentityCallOptions): Promise<LoginResult>;
  /**
   * The directory's record of a user, or undefined when there is none (404). A 401 (an
   * `HttpError`) means the platform's own search account was refused by the directory.
   */
  user(username: string, options?: IdentityCallOptions): Promise<IdentityUser | undefined>;
  /** Whether the directory has this user (an unknown user is `false`, not an error). */
  exists(username: string, options?: IdentityCallOptions): Promise<boolean>;
}

const sourcesCacheMs = 60_000;

/**
 * Creates a client of the platform's Identity API, with the TLS, time-out, retry and error
 * behaviour of every other client of the platform. Users synced through the Provisioning API arrive
 * without passwords: log them in here.
 *
 * @example
 * ```ts
 * import { createIdentityClient } from "platform-integration/identity";
 *
 * const identity = createIdentityClient({ tls: { ca: process.env.PLATFORM_CA } });
 * const result = await identity.login({ username: "bob", password: form.password });
 * if (result.authenticated) startSession(result.user.username, result.user.groups);
 * else showError("Wrong username or password");
 * ```
 */
export function createIdentityClient(options: IdentityClientOptions = {}): IdentityClient {
  const { source: defaultSource, ...apiOptions } = options;
  if (defaultSource !== undefined) checkSource(defaultSource);
  const api = createIntegrationApi(apiOptions);
  let cachedSources: { at: number; sources: Promise<IdentitySource[]> } | undefined;

  async function sources(call: CallOptions = {}) {
    return readSources(await api.request("GET", "/identity/v1/sources", { ...call, retry: true }));
  }

  /** The query string that selects the source, after checking that one is needed. */
  async function sourceQuery({ source, signal }: IdentityCallOptions): Promise<string> {
    const chosen = source ?? defaultSource;
    if (chosen !== undefined) {
      checkSource(chosen);
      return `?${new URLSearchParams({ hostname: chosen.hostname, base_dn: chosen.baseDn })}`;
    }
    if (cachedSources === undefined || Date.now() - cachedSources.at > sourcesCacheMs) {
      // Shared by the calls that arrive meanwhile, so no one caller's signal may abort it.
      const pending = sources();
      cachedSources = { at: Date.now(), sources: pending };
      pending.catch(() => {
        if (cachedSources?.sources === pending) cachedSources = undefined;
      });
    }
    const list = await cachedSources.sources;
    signal?.throwIfAborted();
    if (list.length > 1) {
      const names = list.map(({ hostname, baseDn }) => `${hostname} (${baseDn})`).join(", ");
      throw new ConfigurationError(
        `The platform has ${list.length} identity sources: ${names}. Pass { source } (one of sources()) to this call, or the source option to createIdentityClient.`,
      );
    }
    return "";
  }

  return {
    capabilities: capabilitiesOf("integration"),
    sources,

    async login(credentials, call = {}) {
      const { username, password } = credentials ?? {};
      if (typeof username !== "string" || typeof password !== "string") {
        throw new TypeError("login() takes { username, password }, both strings.");
      }
      if (username === "" || password === "") {
        return { authenticated: false, reason: "missing-credentials" };
      }
      // Outside the try: a 401 or 404 of the sources request is no answer about this user.
      const query = await sourceQuery(call);
      try {
        const response = await api.request("POST", `/identity/v1/login${query}`, {
          ...callOptions(call),
          json: JSON.stringify({ username, password }),
          retry: false,
        });
        return { authenticated: true, user: readUser(response) };
      } catch (error) {
        if (isHttpError(error) && error.status === 401) {
          return { authenticated: false, reason: "invalid-credentials" };
        }
        throw withoutSecret(error, password);
      }
    },

    async user(username, call = {}) {
      const path = `/identity/v1/user/${pathSegment("username", username)}`;
      const query = await sourceQuery(call);
      try {
        return readUser(
          await api.request("GET", `${path}${query}`, { ...callOptions(call), retry: true }),
        );
      } catch (error) {
        if (isHttpError(error) && error.status === 404) return undefined;
        throw error;
      }
    },

    async exists(username, call = {}) {
      const path = `/identity/v1/user/${pathSegment("username", username)}/exists`;
      const query = await sourceQuery(call);
      return readExists(
        await api.request("GET", `${path}${query}`, { ...callOptions(call), retry: true }),
      );
    },
  };
}

function callOptions({ signal, timeoutMs }: IdentityCallOptions): CallOptions {
  return {
    ...(signal === undefined ? {} : { signal }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}

function checkSource(source: IdentitySource): void {
  if (
    typeof source !== "object" ||
    source === null ||
    typeof source.hostname !== "string" ||
    typeof source.baseDn !== "string"
  ) {
    throw new TypeError("source must be { hostname, baseDn }, both strings, as sources() gives.");
  }
}

/**
 * Removes the password from the body an error carries: a server that echoes the request in an
 * error answer must not put the password into the application's logs. The JSON-escaped form is
 * removed too, as an echoed body would carry it.
 */
function withoutSecret(error: unknown, password: string): unknown {
  if (!isPlatformApiError(error) || !("body" in error) || typeof error.body !== "string") {
    return error;
  }
  const forms = [password, JSON.stringify(password).slice(1, -1)];
  let body = error.body;
  for (const form of forms) body = body.split(form).join("[redacted]");
  Object.defineProperty(error, "body", { value: body, enumerable: true });
  return error;
}
