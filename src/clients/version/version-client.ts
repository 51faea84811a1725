import type { CallOptions, IntegrationApiOptions } from "../integration-api/client-options.ts";
import { duration } from "../integration-api/client-options.ts";
import { isConfigurationError } from "../integration-api/errors.ts";
import { createIntegrationApi } from "../integration-api/http.ts";
import { sleep } from "../integration-api/timers.ts";
import {
  type CurrentVersion,
  readCurrentVersion,
  readUpdates,
  type VersionUpdateList,
} from "./version-records.ts";

/** Options of {@link createVersionClient}. */
export type VersionClientOptions = IntegrationApiOptions;

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
   * `ConfigurationError` (no base URL, an untrusted certificate...), which polling again cannot
   * fix: it is reported once and the iteration ends. Without `onError`, the first failure (after
   * the client's retries) ends the iteration by throwing.
   */
  onError?: ((error: unknown) => void) | undefined;
}

/** The Version API: read the running version, list pending updates, apply one. */
export interface VersionClient {
  /** The version now running. */
  current(options?: CallOptions): Promise<CurrentVersion>;
  /**
   * The updates available to install, in the platform's order; items that cannot be applied (no
   * valid release sequence) are set aside in the list's `invalid`, with their raw JSON.
   */
  updates(options?: CallOptions): Promise<VersionUpdateList>;
  /**
   * Installs the pending update with this release sequence, at once: it may cause downtime. It is
   * never retried automatically; after a timeout, check `current()` before calling it again.
   *
   * @throws RangeError before any request when `sequence` is not a positive integer.
   */
  apply(sequence: number, options?: CallOptions): Promise<ApplyResult>;
  /**
   * Polls the pending updates and yields the list whenever it changes (first at once), for
   * applications that tell their users about updates. Its timer never keeps the process alive.
   */
  watchUpdates(options?: WatchUpdatesOptions): AsyncIterableIterator<VersionUpdateList>;
}

/**
 * Creates a client of the platform's Version API (on Node, Bun, Deno and Workers). The base URL
 * is the `baseUrl` option, else the PLATFORM_INTEGRATIONAPI environment variable.
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
export function createVersionClient(options?: VersionClientOptions): VersionClient {
  const api = createIntegrationApi(options);

  async function updates(options: CallOptions = {}) {
    return readUpdates(
      await api.request("GET", "/version/v1/updates", { ...options, retry: true }),
    );
  }

  return {
    async current(options = {}) {
      return readCurrentVersion(
        await api.request("GET", "/version/v1/current", { ...options, retry: true }),
      );
    },

    async updates(options) {
      return (await updates(options)).updates;
    },

    async apply(sequence, options = {}) {
      if (typeof sequence !== "number" || !Number.isSafeInteger(sequence) || sequence < 1) {
        throw new RangeError(
          `apply() takes the release sequence of a pending update, a positive integer; got ${typeof sequence === "number" ? sequence : typeof sequence}.`,
        );
      }
      const { status, body } = await api.request("PUT", `/version/v1/${sequence}`, {
        ...options,
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
            yield list;
          }
        } catch (error) {
          if (signal?.aborted) return;
          if (onError === undefined) throw error;
          onError(error);
          if (isConfigurationError(error)) return;
        }
        await sleep(interval, signal);
      }
    },
  };
}
