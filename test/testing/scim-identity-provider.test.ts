import { describe, expect, it } from "vitest";
import { createDirectorySync } from "../../src/ldap/index.ts";
import { MemoryUserStore, type UserRecord } from "../../src/provisioning/index.ts";
import { createScimHandler } from "../../src/scim/index.ts";
import type { DirectorySource } from "../../src/sync/source.ts";
import { createPlatformSimulator, createScimIdentityProvider } from "../../src/testing/index.ts";

import { serveForEachTest } from "../support/serve-fetch-handler.ts";
import { createScimFixture, type ScimDefects } from "./scim-fixture.ts";

const startServer = serveForEachTest();
const token = "s3cret-token-for-tests";
const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const listSchema = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

const jane: UserRecord = {
  uuid: "97e86d2d-jane",
  userId: "4711",
  username: "jdoe",
  firstName: "Jane",
  lastName: "Doe",
  fullName: "Jane Doe",
  email: "jane@acme.test",
};
const bob: UserRecord = { uuid: "c0ffee-bob", username: "bob", email: "bob@acme.test" };

const byExternalId = (fixture: ReturnType<typeof createScimFixture>, uuid: string) =>
  [...fixture.users.values()].find((user) => user.externalId === uuid);
const operations = (fixture: ReturnType<typeof createScimFixture>) =>
  fixture.requests
    .filter((request) => request.method === "PATCH")
    .map((request) => request.body.Operations);

function simulate(defects: ScimDefects = {}, scim = {}) {
  const fixture = createScimFixture({ token, defects });
  const platform = createPlatformSimulator({ target: fixture, scim: { token, ...scim } });
  return { fixture, platform };
}

describe("createPlatformSimulator with scim (the SCIM fake identity provider)", () => {
  it('pushes a directory as Entra does: POST, PATCH Replace per attribute, active "False"', async () => {
    const { fixture, platform } = simulate();
    platform.addUser(jane);
    platform.addUser(bob);
    expect(await platform.sync()).toMatchObject({ completed: true, remaining: 0 });
    expect(byExternalId(fixture, jane.uuid)).toMatchObject({
      userName: "jdoe",
      active: true,
      name: { givenName: "Jane", familyName: "Doe", formatted: "Jane Doe" },
      displayName: "Jane Doe",
      emails: [{ primary: true, type: "work", value: "jane@acme.test" }],
      [enterprise]: { employeeNumber: "4711" },
    });
    // Entra's connection test first: a filter on a random GUID.
    expect(fixture.requests[0]?.path).toMatch(
      /^\/Users\?filter=userName%20eq%20%22[0-9a-f-]{36}%22$/,
    );

    platform.changeUser({
      uuid: jane.uuid,
      lastName: "Roe",
      email: "jroe@acme.test",
      fullName: null,
    });
    platform.removeUser(bob.uuid);
    expect(await platform.sync()).toMatchObject({ completed: true });
    expect(operations(fixture)).toEqual([
      [
        { op: "Replace", path: "name.familyName", value: "Roe" },
        { op: "Remove", path: "displayName" },
        { op: "Replace", path: 'emails[type eq "work"].value', value: "jroe@acme.test" },
      ],
      [{ op: "Replace", path: "active", value: "False" }],
    ]);
    expect(byExternalId(fixture, jane.uuid)).toMatchObject({
      name: { familyName: "Roe" },
      emails: [{ value: "jroe@acme.test" }],
    });
    expect(byExternalId(fixture, jane.uuid)?.displayName).toBeUndefined();
    // Deactivated, not deleted: nothing destructive by default.
    expect(byExternalId(fixture, bob.uuid)).toMatchObject({ active: false });
    expect(await platform.verify()).toEqual({
      checked: 2,
      complete: true,
      differenceCount: 0,
      differences: [],
    });
  });

  it("enables a removed user the directory holds again, and deletes with onRemove: delete", async () => {
    const { fixture, platform } = simulate({}, { onRemove: "delete" });
    platform.addUser(bob);
    await platform.sync();
    platform.removeUser(bob.uuid);
    expect(await platform.sync()).toMatchObject({ completed: true });
    expect(byExternalId(fixture, bob.uuid)).toBeUndefined();
    expect(fixture.requests.at(-1)?.method).toBe("DELETE");

    const soft = simulate();
    soft.platform.addUser(bob);
    await soft.platform.sync();
    soft.platform.removeUser(bob.uuid);
    await soft.platform.sync();
    soft.platform.addUser({ ...bob, email: "robert@acme.test" });
    expect(await soft.platform.sync()).toMatchObject({ completed: true });
    expect(byExternalId(soft.fixture, bob.uuid)).toMatchObject({
      active: true,
      emails: [{ value: "robert@acme.test" }],
    });
    expect(soft.fixture.users.size).toBe(1);
  });

  it("plays Okta: PUT of the whole user for a change, PATCH without path to deactivate", async () => {
    const { fixture, platform } = simulate({}, { profile: "okta" });
    platform.addUser(jane);
    await platform.sync();
    platform.changeUser({ uuid: jane.uuid, firstName: "Janet" });
    platform.removeUser(jane.uuid);
    expect(await platform.sync()).toMatchObject({ completed: true });
    const [put, patch] = fixture.requests.filter((each) => ["PUT", "PATCH"].includes(each.method));
    expect(put?.body).toMatchObject({
      userName: "jdoe",
      name: { givenName: "Janet" },
      active: true,
    });
    expect(patch?.body.Operations).toEqual([{ op: "replace", value: { active: false } }]);
    expect(byExternalId(fixture, jane.uuid)).toMatchObject({
      active: false,
      name: { givenName: "Janet" },
    });
  });

  it("stops the sync at a SCIM failure, with the service's status and body", async () => {
    const { platform } = simulate({ storeFailureAs400: true });
    platform.addUser(jane);
    await platform.sync();
    platform.changeUser({ uuid: jane.uuid, lastName: "Roe" });
    const report = await platform.sync();
    expect(report).toMatchObject({
      completed: false,
      stalled: true,
      stoppedAt: { message: { kind: "modify" }, status: 400, body: { scimType: "invalidValue" } },
    });
  });

  it("takes only a listed user whose externalId is the uuid; two of them stop the sync", async () => {
    // A service that ignores the filter lists every user: the one whose externalId is the uuid
    // is the directory user, others are never written over, and two answering it are ambiguous.
    const listed = (externalIds: string[]) => {
      const calls: string[] = [];
      const fetch = async (request: Request) => {
        calls.push(`${request.method} ${new URL(request.url).pathname}`);
        if (request.method !== "GET") return new Response(null, { status: 204 });
        const Resources = externalIds.map((externalId, at) => ({ id: `id-${at}`, externalId }));
        return Response.json(
          { schemas: [listSchema], totalResults: Resources.length, Resources },
          { headers: { "content-type": "application/scim+json" } },
        );
      };
      return { idp: createScimIdentityProvider({ target: { fetch }, token }), calls };
    };
    const remove = new Request("http://idp/v1/user/u-1", { method: "DELETE" });
    const one = listed(["someone-else", "u-1"]);
    expect((await one.idp.fetch(remove.clone())).status).toBe(204);
    expect(one.calls.filter((call) => call !== "GET /Users")).toEqual(["PATCH /Users/id-1"]);
    expect(await one.idp.readUser("u-1")).toMatchObject({ uuid: "u-1" });
    const two = listed(["u-1", "u-1"]);
    const answer = await two.idp.fetch(remove.clone());
    expect(answer.status).toBe(502);
    expect(await answer.json()).toMatchObject({ error: "unexpected_scim_answer" });
    expect(two.calls).toEqual(["GET /Users"]);
    await expect(two.idp.readUser("u-1")).rejects.toThrow(/2 users have the externalId/);
  });

  it("takes a list cut off at the 64 KiB read for an unexpected answer, never for no such user", async () => {
    // A service that ignores the filter and lists more than the read: the user may be in the
    // part not read. Neither POST (a duplicate) nor "gone" may follow; the sync stops at a 502.
    const calls: string[] = [];
    const Resources = Array.from({ length: 200 }, (_, at) => ({
      id: `id-${at}`,
      externalId: `other-${at}`,
      title: "x".repeat(400),
    }));
    const fetch = async (request: Request) => {
      calls.push(`${request.method} ${new URL(request.url).pathname}`);
      if (request.method !== "GET") return new Response(null, { status: 201 });
      return Response.json(
        { schemas: [listSchema], totalResults: Resources.length, Resources },
        { headers: { "content-type": "application/scim+json" } },
      );
    };
    const idp = createScimIdentityProvider({ target: { fetch }, token });
    const platform = createPlatformSimulator({ target: idp });
    platform.addUser(jane);
    const report = await platform.sync();
    expect(report).toMatchObject({
      completed: false,
      stoppedAt: {
        message: { kind: "create" },
        status: 502,
        body: { error: "unexpected_scim_answer", message: expect.stringMatching(/cut off/) },
      },
    });
    await expect(idp.readUser(jane.uuid)).rejects.toThrow(/cut off at 64 KiB/);
    const remove = new Request(`http://idp/v1/user/${jane.uuid}`, { method: "DELETE" });
    expect((await idp.fetch(remove)).status).toBe(502);
    expect(calls.filter((call) => call !== "GET /Users")).toEqual([]);
  });

  it("answers a taken userName's 409 as the sync's stop, and reset with 501", async () => {
    const { platform } = simulate();
    platform.addUser(jane);
    platform.addUser({ uuid: "other", username: "JDOE" });
    const report = await platform.sync();
    expect(report.stoppedAt).toMatchObject({ status: 409, body: { scimType: "uniqueness" } });
    expect((await platform.reset()).stoppedAt).toMatchObject({
      message: { kind: "reset" },
      status: 501,
    });
  });

  it("fills createScimHandler's store over HTTP; the directory sync drives it too", async () => {
    const store = new MemoryUserStore({ onDelete: "deactivate" });
    const handler = createScimHandler({ store, token });
    const server = await startServer(handler.fetch);
    const platform = createPlatformSimulator({ target: `${server.url}/scim/v2`, scim: { token } });
    platform.addUser(jane);
    platform.addUser(bob);
    expect(await platform.sync()).toMatchObject({ completed: true });
    platform.changeUser({ uuid: jane.uuid, email: "jroe@acme.test" });
    platform.removeUser(bob.uuid);
    expect(await platform.sync()).toMatchObject({ completed: true });
    expect(await platform.verify()).toEqual({
      checked: 2,
      complete: true,
      differenceCount: 0,
      differences: [],
    });
    const [stored] = await store.list();
    expect(stored).toMatchObject({ username: "jdoe", email: "jroe@acme.test", lastName: "Doe" });

    const users = [{ ...jane, uuid: "from-ldap" }];
    const source: DirectorySource = {
      identity: "memory",
      async *read() {
        yield {
          users: users.map((user) => ({
            ...user,
            username: `${user.username}2`,
            email: "j2@acme.test",
          })),
          skipped: [],
        };
      },
    };
    const idp = createScimIdentityProvider({ target: handler, token });
    const sync = createDirectorySync({ source, target: idp, state: ":memory:" });
    try {
      expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 1 });
      expect(await idp.readUser("from-ldap")).toMatchObject({ username: "jdoe2" });
    } finally {
      await sync.close();
    }
  });
});
