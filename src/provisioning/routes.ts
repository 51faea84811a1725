// Routing: which operation a request target names, relative to the handler's base path.
import { trimTrailingSlashes } from "../internal/url.ts";
import type { ProvisioningOperation } from "./types.ts";

/** A route of the Provisioning API; `user` is `/v1/user/:uuid`. */
export interface Route {
  readonly name: "ping" | "create" | "modify" | "reset" | "user";
  /** The raw last path segment: the uuid of a delete. */
  readonly segment: string;
}

const pingRoute: Route = { name: "ping", segment: "ping" };
const createRoute: Route = { name: "create", segment: "create" };
const modifyRoute: Route = { name: "modify", segment: "modify" };
const resetRoute: Route = { name: "reset", segment: "reset" };
const userPrefix = "/v1/user/";

/** The route of a path relative to the base path; a switch compares without hashing the path. */
function fixedRoute(rest: string, reset: boolean): Route | undefined {
  switch (rest) {
    case "/v1/user/create":
      return createRoute;
    case "/v1/user/modify":
      return modifyRoute;
    case "/v1/ping":
      return pingRoute;
    case "/v1/reset":
      return reset ? resetRoute : undefined;
  }
  return undefined;
}

/**
 * The operation a route and method name: `/v1/user/:uuid` and any DELETE are a delete (the
 * handler answers 405 to a DELETE of another route, counted and traced as a delete).
 */
export function operationOf(found: Route, method: string): ProvisioningOperation {
  return found.name === "user" || method === "DELETE" ? "delete" : found.name;
}

/** The base path as the handler keeps it: empty, or a leading slash and no trailing one. */
export function normalizeBasePath(basePath: string | undefined): string {
  const normalized = trimTrailingSlashes(basePath ?? "");
  if (normalized !== "" && !normalized.startsWith("/")) {
    throw new TypeError(`basePath must start with "/": "${normalized}"`);
  }
  return normalized;
}

/** Routes paths under `basePath`, with or without a trailing slash, query ignored. */
export interface Router {
  /** The route a request target names, or undefined (an unknown path, or one outside the base path). */
  route(path: string): Route | undefined;
  /**
   * Whether a request target is the API's to answer: with a base path, every path under it (an
   * unknown one gets the API's JSON 404 rather than a framework's page); without one, only the
   * API's routes, so that an application's own routes beside it (its own `/v1/...`) still work.
   */
  owns(path: string): boolean;
}

/** Builds the router; `/v1/reset` is a route only when `reset` is served. */
export function createRouter(basePath: string, reset: boolean): Router {
  const router: Router = {
    route(path) {
      if (!path.startsWith(basePath)) return undefined;
      const query = path.indexOf("?");
      let end = query === -1 ? path.length : query;
      if (path.charCodeAt(end - 1) === 47 /* "/" */) end--;
      const rest = end === path.length && basePath === "" ? path : path.slice(basePath.length, end);
      const fixed = fixedRoute(rest, reset);
      if (fixed !== undefined) return fixed;
      if (rest.length > userPrefix.length && rest.startsWith(userPrefix)) {
        return { name: "user", segment: rest.slice(userPrefix.length) };
      }
      return undefined;
    },
    owns(path) {
      if (basePath === "") return router.route(path) !== undefined;
      if (!path.startsWith(basePath)) return false;
      // "/ldap/auth" owns "/ldap/auth", "/ldap/auth/..." and "/ldap/auth?...", not "/ldap/authors".
      const next = path.charCodeAt(basePath.length);
      return Number.isNaN(next) || next === 47 /* "/" */ || next === 63 /* "?" */;
    },
  };
  return router;
}
