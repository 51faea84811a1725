import { type AddressInfo, createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { type ConformanceReport, runConformance } from "../../src/testing/index.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";
import { createScimFixture, type ScimDefects } from "./scim-fixture.ts";

const startServer = serveForEachTest();

/** A port on 127.0.0.1 that nothing listens on (it did a moment ago). */
async function closedPort() {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
const token = "s3cret-token-for-tests";

const failed = (report: ConformanceReport) =>
  report.results.filter((result) => !result.passed).map((result) => result.name);
const result = (report: ConformanceReport, start: string) =>
  report.results.find((each) => each.name.startsWith(start));

async function check(defects: ScimDefects) {
  const fixture = createScimFixture({ token, defects });
  const report = await runConformance(fixture, { scim: { token } });
  return { report, fixture };
}

describe("runConformance with scim", () => {
  it("passes a correct SCIM service over HTTP, reads every effect back and deletes its users", async () => {
    const fixture = createScimFixture({ token, basePath: "/scim/v2" });
    const server = await startServer(fixture.fetch);
    const report = await runConformance(`${server.url}/scim/v2`, { scim: { token } });
    expect(failed(report)).toEqual([]);
    expect(report.results.filter((each) => each.warning !== undefined)).toEqual([]);
    expect(report).toMatchObject({ passed: true, effectsVerified: true, leftBehind: [] });
    expect(report.results.length).toBe(23);
    expect(report.results.map((each) => each.name.split(":")[0])).toContain("Okta");
    expect(fixture.users.size).toBe(0);
  });

  it("says per step what was sent, expected and came", async () => {
    const { report } = await check({ duplicateIs200: true });
    const duplicate = result(report, "Okta: the same create again");
    expect(duplicate).toMatchObject({
      passed: false,
      rule: expect.stringContaining("RFC 7644 §3.3"),
      expected: expect.stringContaining("same create again: 409"),
      actual: expect.stringMatching(/same create again: 200 \{/),
    });
  });

  it.each<[string, ScimDefects, string[]]>([
    [
      "a 400 for a store failure",
      { storeFailureAs400: true },
      ['Entra: PATCH "Replace"', 'Entra: PATCH "Add"', "Entra: disable", "Okta: deactivate"],
    ],
    [
      "a dropped externalId",
      { dropExternalId: true },
      ["Entra: create answers 201", "Entra: filter by externalId", "Okta: PUT"],
    ],
    [
      "a PATCH that reactivates",
      { patchReactivates: true },
      ["Entra: a PATCH of another attribute"],
    ],
    [
      "a 404 for a deactivated user",
      { deactivatedIs404: true },
      ["Entra: disable", "Entra: a PATCH of another", "Okta: deactivate"],
    ],
    ["a 200 where 409 is due", { duplicateIs200: true }, ["Okta: the same create again"]],
    [
      "Entra's string booleans refused",
      { refuseStringBooleans: true },
      ["Entra: create with string booleans", "Entra: disable", "Entra: enable again"],
    ],
  ])("fails a service with %s, at the checks it breaks", async (_name, defects, broken) => {
    const { report, fixture } = await check(defects);
    expect(report.passed).toBe(false);
    for (const start of broken) expect(result(report, start)?.passed, start).toBe(false);
    // The rest still pass: each verdict names the defect, not a cascade.
    expect(report.results.filter((each) => each.passed).length).toBeGreaterThan(10);
    expect(report.leftBehind).toEqual([]);
    // A service that answers 404 for a deactivated user answers so to its delete too.
    if (!defects.deactivatedIs404) expect(fixture.users.size).toBe(0);
  });

  it("stops at the connection test for a refused token or a wrong base URL", async () => {
    const fixture = createScimFixture({ token, basePath: "/scim/v2" });
    const server = await startServer(fixture.fetch);
    const refused = await runConformance(`${server.url}/scim/v2`, { scim: { token: "wrong" } });
    expect(refused.results).toHaveLength(1);
    expect(refused.stoppedEarly).toMatch(/token was refused/);
    const wrongBase = await runConformance(server.url, { scim: { token } });
    expect(wrongBase.stoppedEarly).toMatch(/Check the base URL: the part before \/Users/);
    const nothing = await runConformance(`http://127.0.0.1:${await closedPort()}/scim/v2`, {
      scim: { token },
    });
    expect(nothing.stoppedEarly).toMatch(/Nothing answers there/);
    expect(nothing.passed).toBe(false);
  });

  it("stops at a connection test answered past the 64 KiB read, and names the cap", async () => {
    // A finite answer just past the cap (a service that never ends is cut there too): no check
    // can judge what it could not read whole.
    const huge = {
      fetch: async () =>
        new Response(`{"Resources":[${'"x",'.repeat(20_000)}"x"]}`, {
          headers: { "content-type": "application/scim+json" },
        }),
    };
    const report = await runConformance(huge, { scim: { token } });
    expect(report.results).toHaveLength(1);
    expect(report.passed).toBe(false);
    expect(report.stoppedEarly).toMatch(/more than 64 KiB \(read up to there and cut off\)/);
  });

  it("reads a page of users up to 4 MiB, and warns of a longer one as cut at the cap", async () => {
    // The pagination check's pages (count 2 or 100) padded past the 64 KiB every other answer
    // is read up to: 100 users with their enterprise attributes make such a page. Past 4 MiB,
    // what was not read is not judged: a warning, never a failure of the service.
    const padded = (bytes: number) => {
      const fixture = createScimFixture({ token });
      return {
        fetch: async (request: Request) => {
          const answer = await fixture.fetch(request);
          const query = new URL(request.url).searchParams;
          const page = query.has("startIndex") && query.get("count") !== "1";
          if (!page || query.has("filter") || answer.status !== 200) return answer;
          const list = (await answer.json()) as Record<string, unknown>;
          return Response.json(
            { ...list, padding: "x".repeat(bytes) },
            { headers: { "content-type": "application/scim+json" } },
          );
        },
      };
    };
    const pagination = "Pagination";
    const long = await runConformance(padded(200 * 1024), { scim: { token } });
    expect(failed(long)).toEqual([]);
    expect(result(long, pagination)?.warning).toBeUndefined();
    const longer = await runConformance(padded(4 * 1024 * 1024), { scim: { token } });
    expect(failed(longer)).toEqual([]);
    expect(result(longer, pagination)).toMatchObject({
      passed: true,
      warning: expect.stringMatching(/not judged/),
      actual: expect.stringMatching(/startIndex=1&count=2: cut at the cap, longer than 4 MiB/),
    });
  });

  it("warns, without a token, that a wrong one was not tried", async () => {
    const open = createScimFixture({ token });
    const handler = {
      fetch: (request: Request) => {
        const headers = new Headers(request.headers);
        if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
        return open.fetch(new Request(request, { headers }));
      },
    };
    const report = await runConformance(handler, { scim: {} });
    expect(result(report, "Okta: a wrong token")).toMatchObject({
      passed: true,
      warning: expect.stringMatching(/--token/),
    });
  });

  it("refuses readUser and conflicts with scim", async () => {
    const fixture = createScimFixture({ token });
    await expect(
      runConformance(fixture, { scim: { token }, readUser: () => undefined }),
    ).rejects.toThrow(/Provisioning API's options/);
    await expect(runConformance(fixture, { scim: { token }, conflicts: true })).rejects.toThrow(
      TypeError,
    );
  });
});
