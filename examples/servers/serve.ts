// What every example server shares: the shape of `start`, which the tests call in-process and
// the command line calls through main.ts, and listening with node:http.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { UserStore } from "platform-integration/provisioning";
import type { ScimUserStore } from "platform-integration/scim";
import type { ReadableUserStore } from "platform-integration/testing";

/** Where a server listens and where it keeps users. */
export interface StartOptions {
  /** 0 picks a free port; the real one is in {@link RunningServer.url}. */
  port: number;
  /** The address to listen on. Default: every interface, as a server in a container needs. */
  host?: string | undefined;
  store: UserStore & ReadableUserStore;
  /**
   * Also serve GET /v1/user/:uuid, the read route of `platform-integration conformance
   * --read-user`: a test aid that answers anyone with the stored users (passwords aside), so it is
   * off unless asked for (READ_USER_ROUTE=1 on the command line).
   */
  readUserRoute?: boolean;
  /**
   * Also serve SCIM 2.0 at /scim/v2 from the same store, for identity providers (Entra ID, Okta)
   * that hold this bearer token (SCIM_TOKEN on the command line). Off without it: SCIM has no
   * open default.
   */
  scimToken?: string | undefined;
}

/**
 * The store, for SCIM: its PUT replaces a user whole, which needs the store's `replace` (every
 * bundled store has it). Checked, so that a store without it fails at start, not at the first PUT.
 */
export function scimStore(store: StartOptions["store"]): ScimUserStore {
  if (typeof store.replace !== "function") {
    throw new TypeError("SCIM needs a store with replace(), for PUT: the bundled stores have it");
  }
  return store as ScimUserStore;
}

/** A server that is listening. */
export interface RunningServer {
  /** The Provisioning API's base URL: what the release's `identity.provisioner` holds. */
  url: string;
  /** Stops accepting connections and resolves once the requests under way are answered. */
  close(): Promise<void>;
}

/** The `start` function each example exports. */
export type Start = (options: StartOptions) => Promise<RunningServer>;

/** The base URL of a server on `host` (every interface when absent) and `port`, plus `path`. */
export function serverUrl(host: string | undefined, port: number, path: string): string {
  const name =
    host === undefined || host === "0.0.0.0" || host === "::"
      ? "localhost"
      : host.includes(":")
        ? `[${host}]`
        : host;
  return `http://${name}:${port}${path}`;
}

/**
 * Starts a node:http server (Express, Koa and @hono/node-server all make one) and stops it
 * gracefully: `close()` ends idle keep-alive connections at once and gives the requests under way
 * ten seconds, after which their connections are cut. The platform sends again what was not
 * answered, so a cut request is delayed, never lost.
 */
export async function listen(
  server: Server,
  { port, host }: Pick<StartOptions, "port" | "host">,
  path: string,
): Promise<RunningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port: actual } = server.address() as AddressInfo;
  return {
    url: serverUrl(host, actual, path),
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        setTimeout(() => server.closeAllConnections(), 10_000).unref();
      }),
  };
}
