import { runConformance } from "platform-integration/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { byUuid, syncDirectory } from "../servers/full-sync.ts";
import * as route from "./app/ldap/auth/[...path]/route.ts";
import { store } from "./lib/provisioning.ts";

type RouteHandler = (
  request: Request,
  context: { params: Promise<{ path: string[] }> },
) => Promise<Response>;

/**
 * Calls the route module as Next.js does for app/ldap/auth/[...path]/route.ts: the request, at
 * its full URL, goes to the export named after its method, with the decoded catch-all segments
 * as params; a method without an export answers 405. The simulator and the conformance suite
 * address the API's root, so requests are moved under /ldap/auth first.
 */
const nextRoute = {
  async fetch(request: Request): Promise<Response> {
    const { pathname, search, origin } = new URL(request.url);
    const exports = route as Record<string, RouteHandler | undefined>;
    const handler = exports[request.method];
    if (handler === undefined) return new Response(null, { status: 405 });
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const routed = new Request(`${origin}/ldap/auth${pathname}${search}`, {
      method: request.method,
      headers: request.headers,
      ...(body === undefined ? {} : { body }),
    });
    const path = pathname.split("/").slice(1).map(decodeURIComponent);
    return handler(routed, { params: Promise.resolve({ path }) });
  },
};

describe("the Next.js route handler", () => {
  beforeEach(() => store.reset());

  it("exports a handler for each method of the API, and nothing else", () => {
    expect(Object.keys(route).sort()).toEqual(["DELETE", "GET", "HEAD", "POST"]);
    for (const handler of Object.values(route)) expect(handler).toBeTypeOf("function");
  });

  it("passes every conformance check, effects included", async () => {
    const report = await runConformance(nextRoute, { readUser: (uuid) => store.get(uuid) });
    expect(report.results.filter((result) => !result.passed)).toEqual([]);
    expect(report.passed).toBe(true);
  });

  it("ends a simulated sync with the directory's users in the store", async () => {
    const platform = await syncDirectory(nextRoute);
    expect(byUuid(await store.list())).toEqual(byUuid(platform.users()));
  });

  it("answers HEAD on ping, and 404 outside the API under its folder", async () => {
    const head = await route.HEAD(
      new Request("http://localhost/ldap/auth/v1/ping", { method: "HEAD" }),
    );
    expect(head.status).toBe(204);
    const other = await route.GET(new Request("http://localhost/ldap/auth/v2/ping"));
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: "not_found" });
  });
});
