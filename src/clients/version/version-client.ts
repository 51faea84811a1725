import type { JsonValue } from "type-fest";
import type { CallOptions, IntegrationApiOptions } from "../integration-api/client-options.ts";
import { duration } from "../integration-api/client-options.ts";
import { isConfigurationError, type PlatformApiKind } from "../integration-api/errors.ts";
import { sleep } from "../integration-api/timers.ts";
import { type ApiMembers, openApiSelection, withApiMembers } from "../sdk-api/api-client.ts";
import { type ApiOption, type Capabilities, requireCapability } from "../sdk-api/api-selection.ts";
import { sdkRequest } from "../sdk-api/sdk-answers.ts";
import {
  type CurrentVersion,
  readCurrentVersion,
  readUpdates,
  type SdkCurrentVersion,
  type SdkVersionUpdate,
  type VersionUpdate,
  type VersionUpdateList,
} from "./read-version.ts";
import { readSdkCurrentVersion, readSdkUpdates } from "./sdk-api-version.ts";

/** Options of {@link createVersionClient}. */
export interface VersionClientOptions extends IntegrationApiOptions {
  /**
   * Which API to talk to (default `"auto"`): see {@link ApiOption}. On `"sdk"` the pending
   * updates carry no release sequence and `apply()` rejects with an `UnsupportedOperationError`;
   * on `"kots"` every call does (that endpoint serves the license only).
   */
  api?: ApiOption | undefined;
}

/** What `apply()` resolves to: the platform documents neither the status nor the body. */
export interface ApplyResult {
  /** The 2xx status the platform answered. */
  status: number;
  /** The response body as text (often empty). */
  body: string;
}

/** Options of `watchUpdates()`. */
export interface WatchUpdatesOptions {
  /** How long to wait between two polls, in milliseconds. Default 60,000. */
  intervalMs?: number | undefined;
  /** Ends the iteration (without an error) when aborted. */
  signal?: AbortSignal | undefined;
  /**
   * Called with each failed poll, after which watching goes on, except after a
   * `ConfigurationError` (no base URL, an untrusted certificate...) or an
   * `UnsupportedOperationError`, which polling again cannot fix: it is reported once and the
   * iteration ends. Without `onError`, the first failure (after the client's retries) ends the
   * iteration by throwing.
   */
  onError?: ((error: unknown) => void) | undefined;
}

/** The running version's record on each API. */
export type CurrentVersionOf<Api extends PlatformApiKind> = Api extends "integration"
  ? CurrentVersion
  : SdkCurrentVersion;

/** A pending update's record on each API: only the Integration API's carries a sequence. */
export type VersionUpdateOf<Api extends PlatformApiKind> = Api extends "integration"
  ? VersionUpdate
  : SdkVersionUpdate;

/**
 * What `apply()` takes: an update as `updates()` returns it, on whichever API, or its release
 * sequence. One type on every API, so that `version.apply(update)` compiles on a client whose API
 * is not known yet; an update of the newer API has no sequence, and `apply()` says at run time,
 * without a request, that this API installs through the admin console or `helm upgrade`.
 */
export type ApplyTarget = number | VersionUpdate | SdkVersionUpdate;

/** The Version API on one of the platform's APIs; see {@link VersionClient}. */
export interface VersionClientOf<Api extends PlatformApiKind> {
  /**
   * The API this client talks to, decided at its first use (or by the `api` option). With
   * "auto" and a `baseUrl`, what answers there decides, at the first call: reading `api`
   * before then throws; `await detectApi()` decides it.
   */
  readonly api: Api;
  /** What that API can serve: on `"sdk"`, `apply` is false. Read as `api` is. */
  readonly capabilities: Readonly<Capabilities>;
  /**
   * Decides the API now (with "auto" and a `baseUrl`, by asking `GET /healthz` there once) and
   * resolves with it.
   */
  detectApi(options?: CallOptions): Promise<Api>;
  /**
   * The newer service's version, from its `GET /healthz` (`"1.19.1"`), to gate features an older
   * service lacks; undefined on the Integration API, which names none.
   */
  serviceVersion(options?: CallOptions): Promise<string | undefined>;
  /** The version now running. */
  current(options?: CallOptions): Promise<CurrentVersionOf<Api>>;
  /**
   * The updates available to install, in the platform's order; items that cannot be read (on
   * the Integration API: no valid release sequence) are set aside in the list's `invalid`, with
   * their raw JSON. On the newer API the list is `[]` in an air gap.
   */
  updates(options?: CallOptions): Promise<VersionUpdateList<VersionUpdateOf<Api>>>;
  /**
   * Installs a pending update, given as `updates()` returned it or by its release sequence, at
   * once: it may cause downtime. It is never retried automatically; after a timeout, check
   * `current()` before calling it again. Only the Integration API installs updates: elsewhere it
   * rejects at once, without a request, with an `UnsupportedOperationError`.
   *
   * `apply(update.releaseSequence)` compiles only where the client's type says the Integration
   * API (`api: "integration"`, or after `if (version.api === "integration")`): on the newer API
   * an update has no sequence. `apply(update)` compiles on every client.
   *
   * @throws RangeError before any request when the sequence is not a positive integer.
   */
  apply(update: ApplyTarget, options?: CallOptions): Promise<ApplyResult>;
  /**
   * Polls the pending updates and yields the list whenever it changes (first at once), for
   * applications that tell their users about updates. Its timer never keeps the process alive.
   */
  watchUpdates(
    options?: WatchUpdatesOptions,
  ): AsyncIterableIterator<VersionUpdateList<VersionUpdateOf<Api>>>;
}

/**
 * The Version API: read the running version, list pending updates, apply one. Without a type
 * argument, the union of the clients of each API, told apart by `api`:
 * `if (version.api === "integration") await version.apply(update.releaseSequence)`, or
 * `await version.apply(update)` on any client.
 */
export type VersionClient<Api extends PlatformApiKind = PlatformApiKind> =
  Api extends PlatformApiKind ? VersionClientOf<Api> : never;

/**
 * Creates a client of the platform's Version API (on Node, Bun, Deno and Workers), on the API
 * the `api` option selects: the Integration API (`baseUrl`, else PLATFORM_INTEGRATIONAPI) or the
 * newer in-cluster SDK service (`baseUrl`, else PLATFORM_SDK_API, else http://replicated:3000);
 * "auto" with a `baseUrl` asks the address once which one it is (see {@link ApiOption}).
 *
 * @example
 * ```ts
 * import { createVersionClient } from "platform-integration/version";
 *
 * const version = createVersionClient({ tls: { ca: process.env.PLATFORM_CA } });
 * const { version: label, releaseDate } = await version.current();
 * for (const update of await version.updates()) console.log(update.version, update.releaseNotes);
 * ```
 */
export function createVersionClient<Api extends PlatformApiKind>(
  options: VersionClientOptions & { api: Api },
): VersionClient<Api>;
export function createVersionClient(options?: VersionClientOptions): VersionClient;
export function createVersionClient(options: VersionClientOptions = {}): VersionClient {
  const selection = openApiSelection(options);

  async function updates(
    call: CallOptions = {},
  ): Promise<{ updates: VersionUpdateList<VersionUpdate | SdkVersionUpdate>; raw: JsonValue[] }> {
    const { kind, api } = await selection.select(call);
    requireCapability(kind, "updates", "version.updates");
    if (kind === "integration") {
      return readUpdates(await api.request("GET", "/version/v1/updates", { ...call, retry: true }));
    }
    const endpoint = { operation: "version.updates", feature: "the app updates" };
    return readSdkUpdates(
      await sdkRequest(api, kind, "GET", "/api/v1/app/updates", endpoint, { ...call, retry: true }),
    );
  }

  const client = withApiMembers(selection, "version", {
    async current(call = {}) {
      const { kind, api } = await selection.select(call);
      requireCapability(kind, "currentVersion", "version.current");
      if (kind === "integration") {
        return readCurrentVersion(
          await api.request("GET", "/version/v1/current", { ...call, retry: true }),
        );
      }
      const endpoint = { operation: "version.current", feature: "the app info" };
      return readSdkCurrentVersion(
        await sdkRequest(api, kind, "GET", "/api/v1/app/info", endpoint, { ...call, retry: true }),
      );
    },

    async updates(call) {
      return (await updates(call)).updates as VersionUpdateList<SdkVersionUpdate>;
    },

    async apply(update, call = {}) {
      const { kind, api } = await selection.select(call);
      requireCapability(kind, "apply", "version.apply");
      const sequence =
        typeof update === "object" && update !== null ? update.releaseSequence : update;
      if (typeof sequence !== "number" || !Number.isSafeInteger(sequence) || sequence < 1) {
        throw new RangeError(
          `apply() takes the release sequence of a pending update, a positive integer; got ${typeof sequence === "number" ? sequence : typeof sequence}.`,
        );
      }
      const { status, body } = await api.request("PUT", `/version/v1/${sequence}`, {
        ...call,
        retry: false,
      });
      return { status, body };
    },

    async *watchUpdates({ intervalMs, signal, onError } = {}) {
      const interval = duration("intervalMs", intervalMs, 60_000);
      let last: string | undefined;
      while (signal?.aborted !== true) {
        try {
          const { updates: list, raw } = await updates(signal === undefined ? {} : { signal });
          const key = JSON.stringify(raw);
          if (key !== last) {
            last = key;
            yield list as VersionUpdateList<SdkVersionUpdate>;
          }
        } catch (error) {
          if (signal?.aborted) return;
          if (onError === undefined) throw error;
          onError(error);
          if (isConfigurationError(error) || isUnsupported(error)) return;
        }
        await sleep(interval, signal);
      }
    },
  } satisfies Omit<VersionClientOf<PlatformApiKind>, keyof ApiMembers>);
  return client as VersionClient;
}

function isUnsupported(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === "UnsupportedOperationError";
}
