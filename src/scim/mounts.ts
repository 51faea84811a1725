// Where a request came in: the /Users operations and discovery documents whose URLs (`Location`,
// `meta.location`) lead back to it. A Node adapter passes the mount a framework stripped
// (Express's `app.use` path, a Fastify prefix, koa-mount), which the handler cannot see in its
// path; `fetch` has none. See docs/scim.md, "Under a framework's mount".
import { trimTrailingSlashes } from "../internal/url.ts";
import type { ProvisioningRequest } from "../provisioning/types.ts";
import { type Discovery, discoveryDocuments } from "./discovery.ts";
import type { ScimUserStore } from "./handler-options.ts";
import { createUserOperations } from "./users.ts";

/** What a request is served with: the /Users routes (operations, body limit) and discovery. */
export interface Place {
  routes: { users: ReturnType<typeof createUserOperations>; bodyLimit: number };
  discovery: Discovery;
}

/** How many mount paths a handler remembers the operations and documents of. */
const maxMounts = 16;

/**
 * The {@link Place} of each request. Under a mount the URLs name it, then `basePath`; `baseUrl`,
 * when given, wins. A few mounts are remembered; the one per-user lock is shared by all.
 */
export function placesOf(
  store: ScimUserStore,
  settings: {
    basePath: string;
    baseUrl: string | undefined;
    bodyLimit: number;
    maxResults: number;
  },
): (request: ProvisioningRequest) => Place {
  const { basePath, baseUrl, bodyLimit, maxResults } = settings;
  const locatedAt = (root: string) => (id: string) => `${root}/Users/${encodeURIComponent(id)}`;
  const root = baseUrl ?? basePath;
  const users = createUserOperations(store, locatedAt(root), maxResults);
  const atRoot: Place = {
    routes: { users, bodyLimit },
    discovery: discoveryDocuments(root, maxResults),
  };
  const mounts = new Map<string, Place>();
  return (request) => {
    const mount = request.mountPath;
    if (baseUrl !== undefined || mount === undefined || !mount.startsWith("/")) return atRoot;
    let place = mounts.get(mount);
    if (place === undefined) {
      const under = `${trimTrailingSlashes(mount)}${basePath}`;
      place = {
        routes: { users: users.locatedBy(locatedAt(under)), bodyLimit },
        discovery: discoveryDocuments(under, maxResults),
      };
      if (mounts.size < maxMounts) mounts.set(mount, place);
    }
    return place;
  };
}
