// Entra ID's and Okta's published test sequences (shared/SCIM.md §3, §4), run against a SCIM
// server at `url` over real HTTP: every adapter and every bundled store runs them.
import { expect } from "vitest";
import { enterprise, entraUser, errorSchema, patchOp, token } from "./helpers.ts";

type Call = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: read loosely; toMatchObject checks the members
  body: any;
}>;

/** A client for the SCIM server at `url` (its base path included, no trailing slash). */
export function client(url: string, contentType = "application/scim+json"): Call {
  return async (method, path, body, headers = {}) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": contentType }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text === "" ? undefined : JSON.parse(text),
    };
  };
}

const filtered = (filter: string) => `/Users?filter=${encodeURIComponent(filter)}`;

/** Entra ID's provisioning cycle for one user, then a second one, as its tutorial lists it. */
export async function entraSequence(call: Call, suffix = ""): Promise<void> {
  // 1. Test Connection: an unknown GUID filtered, an empty list.
  const probe = await call("GET", filtered(`userName eq "${crypto.randomUUID()}"`));
  expect(probe.status).toBe(200);
  expect(probe.body).toMatchObject({ totalResults: 0 });
  expect(probe.headers.get("content-type")).toMatch(/^application\/scim\+json/);
  // 2-3. Look the user up by the matching attribute, none, create it.
  const userName = `ryan${suffix}@contoso.com`;
  expect((await call("GET", filtered(`userName eq "${userName}"`))).body.totalResults).toBe(0);
  const created = await call("POST", "/Users", entraUser(userName, `ext-${suffix}`));
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  expect(created.headers.get("location")).toMatch(new RegExp(`/Users/${id}$`));
  // 4. Read it back, by id, by userName and by externalId.
  expect((await call("GET", `/Users/${id}`)).body).toMatchObject({
    id,
    userName,
    externalId: `ext-${suffix}`,
    active: true,
  });
  expect((await call("GET", filtered(`externalId eq "ext-${suffix}"`))).body.Resources[0].id).toBe(
    id,
  );
  expect(
    (await call("GET", filtered(`emails[type eq "work"].value eq "${userName}@example.com"`))).body
      .totalResults,
  ).toBe(1);
  // 5. PATCH: one Replace per attribute, a value path, a manager added.
  const patch = (...Operations: unknown[]) =>
    call("PATCH", `/Users/${id}`, { schemas: [patchOp], Operations });
  const patched = await patch(
    { op: "Replace", path: 'emails[type eq "work"].value', value: `new${suffix}@contoso.com` },
    { op: "Replace", path: "name.familyName", value: "Smith" },
    { op: "Add", path: `${enterprise}:manager`, value: [{ $ref: null, value: "manager-id" }] },
    { op: "Remove", path: "roles" },
  );
  expect(patched.status).toBe(200);
  expect(patched.body).toMatchObject({
    name: { familyName: "Smith" },
    emails: [{ value: `new${suffix}@contoso.com` }],
    [enterprise]: { manager: { value: "manager-id" } },
  });
  // 6. Disable (string boolean), read it back inactive; a later PATCH keeps it inactive.
  expect((await patch({ op: "Replace", path: "active", value: "False" })).status).toBe(200);
  expect((await call("GET", `/Users/${id}`)).body.active).toBe(false);
  await patch({ op: "replace", value: { "name.givenName": "Ry" } });
  expect((await call("GET", `/Users/${id}`)).body).toMatchObject({
    active: false,
    name: { givenName: "Ry" },
  });
  expect((await call("GET", filtered(`userName eq "${userName}"`))).body.totalResults).toBe(1);
  // Reactivate.
  expect((await patch({ op: "replace", value: { active: true } })).body.active).toBe(true);
  // A duplicate create answers 409, an unknown id 404.
  const duplicate = await call("POST", "/Users", entraUser(userName, "other"));
  expect(duplicate.status).toBe(409);
  expect(duplicate.body).toMatchObject({
    schemas: [errorSchema],
    status: "409",
    scimType: "uniqueness",
  });
  expect((await call("GET", "/Users/00000000-0000-0000-0000-000000000000")).status).toBe(404);
  // Hard delete: 204, then 404.
  expect((await call("DELETE", `/Users/${id}`)).status).toBe(204);
  expect((await call("GET", `/Users/${id}`)).status).toBe(404);
  expect((await call("GET", filtered(`userName eq "${userName}"`))).body.totalResults).toBe(0);
}

/** Okta's SCIM 2.0 spec test (Okta-SCIM-20-SPEC-Test.json), application/json bodies. */
export async function oktaSequence(call: Call, suffix = ""): Promise<void> {
  const userName = `okta${suffix}@example.com`;
  const oktaUser = {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    userName,
    name: { givenName: "Okta", familyName: "User" },
    emails: [{ primary: true, value: userName, type: "work" }],
    displayName: "Okta User",
    locale: "en-US",
    externalId: `00u${suffix}`,
    groups: [],
    password: "1mP@ssw0rd",
    active: true,
  };
  const created = await call("POST", "/Users", oktaUser);
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({
    active: true,
    userName,
    name: { givenName: "Okta", familyName: "User" },
  });
  expect(created.body.password).toBeUndefined();
  const id = created.body.id as string;
  // The first page: numeric paging fields, a user with id, names, userName, active, emails.
  const page = await call("GET", "/Users?count=1&startIndex=1");
  expect(page.status).toBe(200);
  expect(page.body).toMatchObject({
    startIndex: 1,
    itemsPerPage: 1,
    totalResults: expect.any(Number),
  });
  expect(page.body.Resources[0]).toMatchObject({
    id: expect.any(String),
    userName: expect.any(String),
    active: expect.any(Boolean),
    meta: { resourceType: "User", location: expect.any(String) },
  });
  expect((await call("GET", `/Users/${id}`)).body).toMatchObject({ id, userName });
  for (let time = 0; time < 2; time++) {
    const unknown = await call(
      "GET",
      `${filtered(`userName eq "no-such-${crypto.randomUUID()}"`)}&startIndex=1&count=100`,
    );
    expect(unknown.body.totalResults).toBe(0);
  }
  expect((await call("POST", "/Users", oktaUser)).status).toBe(409);
  const upper = await call("GET", filtered(`userName eq "${userName.toUpperCase()}"`));
  expect(upper.status).toBe(200);
  expect(upper.body.totalResults).toBe(1);
  // Profile update by PUT of the whole user; deactivation by PATCH without path.
  const put = await call("PUT", `/Users/${id}`, {
    ...oktaUser,
    id,
    name: { givenName: "Changed", familyName: "User" },
  });
  expect(put.status).toBe(200);
  expect(put.body).toMatchObject({
    id,
    name: { givenName: "Changed" },
    externalId: `00u${suffix}`,
  });
  const off = await call("PATCH", `/Users/${id}`, {
    schemas: [patchOp],
    Operations: [{ op: "replace", value: { active: false } }],
  });
  expect(off.body.active).toBe(false);
  // AIW apps PUT everything, active false included: it stays inactive, then true reactivates.
  expect((await call("PUT", `/Users/${id}`, { ...oktaUser, active: false })).body.active).toBe(
    false,
  );
  expect((await call("PUT", `/Users/${id}`, oktaUser)).body.active).toBe(true);
  // Wrong token, unknown user.
  const refused = await call("GET", "/Users", undefined, { authorization: "non-token" });
  expect(refused.status).toBe(401);
  expect(refused.body).toMatchObject({
    schemas: [errorSchema],
    status: "401",
    detail: expect.any(String),
  });
  const missing = await call("GET", "/Users/00919288221112222");
  expect(missing.status).toBe(404);
  expect(missing.body).toMatchObject({
    schemas: [errorSchema],
    status: "404",
    detail: expect.any(String),
  });
}

/** A client of a handler's Web entry, without a server (the stores' runs). */
export function handlerClient(
  handler: { fetch(request: Request): Promise<Response> },
  basePath = "/scim/v2",
): Call {
  return async (method, path, body, headers = {}) => {
    const response = await handler.fetch(
      new Request(`http://127.0.0.1${basePath}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text === "" ? undefined : JSON.parse(text),
    };
  };
}
