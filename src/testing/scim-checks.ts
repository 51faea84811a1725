import type { JsonValue } from "type-fest";
import { jsonEqual } from "../internal/json-equal.ts";
import { describeAnswer } from "./conformance-session.ts";
import { filterString, scimMediaType, usersQuery } from "./scim-client.ts";
import {
  asObject,
  attribute,
  type ScimCheck,
  type ScimSession,
  show,
  urn,
  workEmail,
} from "./scim-session.ts";

// Every userName and email a check sends carries a mark no other user has, in this run or
// another (a user left behind by an interrupted run included): a server that holds userNames or
// emails unique passes every check but the one that means to conflict.
const userName = (text: string, mark: string) => `conformance-${text}-${mark}@example.invalid`;
const email = (text: string, mark: string) => `conformance-${text}-${mark}@example.invalid`;

/** The body Entra ID posts for a new user (its tutorial's step 3), with `active` as given. */
function entraUser(mark: string, active: JsonValue = true): Record<string, JsonValue> {
  return {
    schemas: [urn.user, urn.enterprise],
    externalId: crypto.randomUUID(),
    userName: userName("jdoe", mark),
    active,
    emails: [{ primary: true, type: "work", value: email("jdoe", mark) }],
    meta: { resourceType: "User" },
    name: { formatted: "Jane Doe", familyName: "Doe", givenName: "Jane" },
    roles: [],
  };
}

/** The body Okta posts for a new user (its SCIM 2.0 reference and spec test). */
function oktaUser(mark: string): Record<string, JsonValue> {
  return {
    schemas: [urn.user],
    userName: userName("okta", mark),
    name: { givenName: "Ola", familyName: "Nordmann" },
    emails: [{ primary: true, value: email("okta", mark), type: "work" }],
    displayName: "Ola Nordmann",
    locale: "en-US",
    externalId: `00u${mark}`,
    groups: [],
    password: "conformance-Password-1",
    active: true,
  };
}

const patchOp = (...operations: Record<string, JsonValue>[]) => ({
  schemas: [urn.patchOp],
  Operations: operations,
});

/** A step recorded only when it fails: the shape checks that would crowd a report. */
function must(s: ScimSession, expected: string, actual: string, passed: boolean): void {
  if (!passed) s.step(expected, actual, false);
}

/** Fails the check unless the user's attribute at `path` is `want` (absent for undefined). */
function expectAttribute(
  s: ScimSession,
  label: string,
  user: JsonValue | undefined,
  path: string,
  want: JsonValue | undefined,
): void {
  const got = path === "emails[work].value" ? workEmail(user) : attribute(user, path);
  const same = want === undefined ? got === undefined || got === null : jsonEqual(got, want);
  s.step(`${label}: ${path} ${show(want)}`, `${label}: ${path} ${show(got)}`, same);
}

/** POSTs a user, wants 201 with an id, and registers it for the clean-up. */
async function create(
  s: ScimSession,
  label: string,
  body: Record<string, JsonValue>,
  contentType = scimMediaType,
) {
  const answer = await s.call(label, { method: "POST", path: "/Users", body, contentType }, 201);
  const user = asObject(answer.body);
  const id = user?.id;
  if (typeof id === "string" && id !== "") s.track(id);
  must(
    s,
    `${label}: the user with an id`,
    `${label}: ${typeof id === "string" && id !== "" ? "the user with an id" : `id ${show(id)}`}`,
    typeof id === "string" && id !== "",
  );
  return { answer, user: user as Record<string, JsonValue>, id: id as string };
}

const userPath = (id: string) => `/Users/${encodeURIComponent(id)}`;

/** GETs a user by id, wants 200 with its id. */
async function read(s: ScimSession, label: string, id: string) {
  const answer = await s.call(label, { method: "GET", path: userPath(id) }, 200);
  const got = attribute(answer.body, "id");
  must(s, `${label}: id ${id}`, `${label}: id ${show(got)}`, got === id);
  return answer.body;
}

/** Filters users, wants 200 with a ListResponse whose numbers are numbers; its Resources. */
async function search(s: ScimSession, label: string, filter: string, parameters = {}) {
  const answer = await s.call(label, { method: "GET", path: usersQuery(filter, parameters) }, 200);
  return listResources(s, label, answer.body);
}

function listResources(s: ScimSession, label: string, body: JsonValue | undefined) {
  const list = asObject(body);
  const schemas = list?.schemas;
  must(
    s,
    `${label}: a ListResponse`,
    `${label}: schemas ${show(schemas)}`,
    Array.isArray(schemas) && schemas.includes(urn.listResponse),
  );
  const total = list?.totalResults;
  must(
    s,
    `${label}: totalResults a number`,
    `${label}: totalResults ${show(total)}`,
    typeof total === "number",
  );
  const resources = list?.Resources ?? [];
  must(
    s,
    `${label}: Resources a list`,
    `${label}: Resources ${show(resources)}`,
    Array.isArray(resources),
  );
  return { total: total as number, resources: resources as JsonValue[], list };
}

/** Fails the check unless a filter finds exactly the user `id`. */
async function findsOnly(s: ScimSession, label: string, filter: string, id: string) {
  const { total, resources } = await search(s, label, filter);
  const ids = resources.map((user) => asObject(user)?.id);
  s.step(
    `${label}: totalResults 1, the user ${id}`,
    `${label}: totalResults ${total}, ids ${show(ids as JsonValue)}`,
    total === 1 && ids.length === 1 && ids[0] === id,
  );
  return resources[0];
}

async function patch(s: ScimSession, label: string, id: string, body: JsonValue) {
  return s.call(label, { method: "PATCH", path: userPath(id), body }, [200, 204]);
}

/** Fails the check unless the answer is RFC 7644 §3.12's error form, `status` a string. */
function expectError(
  s: ScimSession,
  label: string,
  body: JsonValue | undefined,
  status: number,
  scimType?: string,
) {
  const error = asObject(body);
  const schemas = error?.schemas;
  const want = `${label}: the Error schema, status "${status}"${scimType ? `, scimType ${scimType}` : ""}`;
  const got = `${label}: schemas ${show(schemas)}, status ${show(error?.status)}${scimType ? `, scimType ${show(error?.scimType)}` : ""}`;
  s.step(
    want,
    got,
    Array.isArray(schemas) &&
      schemas.includes(urn.error) &&
      error?.status === String(status) &&
      (scimType === undefined || error?.scimType === scimType),
  );
}

const entraRule = "Entra ID's provisioning sequence (its SCIM tutorial)";
const oktaRule = "Okta's SCIM 2.0 spec test and reference";

/** Entra ID's sequence: test connection, match, create, get, PATCHes, disable, enable, delete. */
const entraChecks: ScimCheck[] = [
  {
    name: "Entra: test connection (a filter on a random GUID) answers 200, an empty list",
    rule: `${entraRule}, step 1; RFC 7644 §3.4.2`,
    async run(s) {
      const filter = `userName eq ${filterString(crypto.randomUUID())}`;
      const { total } = await search(s, "filter on a random GUID", filter);
      s.step("totalResults 0", `totalResults ${total}`, total === 0);
    },
  },
  {
    name: "Entra: create answers 201 with the user, its id and Location",
    rule: `${entraRule}, step 3; RFC 7644 §3.3`,
    async run(s) {
      const body = entraUser(s.mark());
      const { answer, user } = await create(s, "create", body);
      expectAttribute(s, "create", user, "userName", body.userName);
      expectAttribute(s, "create", user, "externalId", body.externalId);
      expectAttribute(s, "create", user, "active", true);
      const location = answer.headers?.location;
      const meta = attribute(user, "meta.location");
      s.step(
        `create: a Location header${meta === undefined ? "" : " equal to meta.location"}`,
        `create: Location ${show(location)}, meta.location ${show(meta)}`,
        location !== undefined && (meta === undefined || meta === location),
      );
    },
  },
  {
    name: 'Entra: create with string booleans ("active": "True") answers 201, active true',
    rule: `${entraRule} (AzureAD/SCIMReferenceCode#21); RFC 7643 §2.3.2 taken leniently`,
    async run(s) {
      const body = entraUser(s.mark(), "True");
      const { id } = await create(s, 'create with "active": "True"', body);
      expectAttribute(s, "get", await read(s, "get", id), "active", true);
    },
  },
  {
    name: "Entra: get by id answers 200 with what was created, externalId kept",
    rule: `${entraRule}, step 4; RFC 7644 §3.4.1, RFC 7643 §3.1`,
    async run(s) {
      const body = entraUser(s.mark());
      const { id } = await create(s, "create", body);
      const user = await read(s, "get", id);
      expectAttribute(s, "get", user, "userName", body.userName);
      expectAttribute(s, "get", user, "externalId", body.externalId);
      expectAttribute(s, "get", user, "name.givenName", "Jane");
      expectAttribute(s, "get", user, "name.familyName", "Doe");
      expectAttribute(s, "get", user, "emails[work].value", workEmail(body));
      expectAttribute(s, "get", user, "active", true);
    },
  },
  {
    name: "Entra: filter by userName finds the user",
    rule: `${entraRule}, step 2; RFC 7644 §3.4.2.2`,
    async run(s) {
      const body = entraUser(s.mark());
      const { id } = await create(s, "create", body);
      await findsOnly(
        s,
        "filter userName eq",
        `userName eq ${filterString(body.userName as string)}`,
        id,
      );
    },
  },
  {
    name: "Entra: filter by externalId finds the user",
    rule: `${entraRule}, step 2 (the matching attribute); RFC 7643 §3.1`,
    async run(s) {
      const body = entraUser(s.mark());
      const { id } = await create(s, "create", body);
      const filter = `externalId eq ${filterString(body.externalId as string)}`;
      await findsOnly(s, "filter externalId eq", filter, id);
    },
  },
  {
    name: 'Entra: PATCH "Replace" of emails[type eq "work"].value and name.familyName',
    rule: `${entraRule}, step 5; RFC 7644 §3.5.2.3 (op names case-insensitive for Entra)`,
    async run(s) {
      const mark = s.mark();
      const body = entraUser(mark);
      const { id } = await create(s, "create", body);
      await patch(
        s,
        "PATCH Replace",
        id,
        patchOp(
          { op: "Replace", path: 'emails[type eq "work"].value', value: email("jroe", mark) },
          { op: "Replace", path: "name.familyName", value: "Roe" },
        ),
      );
      const user = await read(s, "get", id);
      expectAttribute(s, "get", user, "emails[work].value", email("jroe", mark));
      expectAttribute(s, "get", user, "name.familyName", "Roe");
      expectAttribute(s, "get", user, "name.givenName", "Jane");
      expectAttribute(s, "get", user, "externalId", body.externalId);
    },
  },
  {
    name: 'Entra: PATCH "Add" of a single-valued attribute, then "Remove"',
    rule: `${entraRule} (Add for single-valued strings); RFC 7644 §3.5.2.1, §3.5.2.2`,
    async run(s) {
      const { id } = await create(s, "create", entraUser(s.mark()));
      const department = `${urn.enterprise}:department`;
      await patch(
        s,
        "PATCH Add",
        id,
        patchOp(
          { op: "Add", path: "title", value: "Engineer" },
          { op: "Add", path: department, value: "R&D" },
        ),
      );
      const added = await read(s, "get", id);
      expectAttribute(s, "get after Add", added, "title", "Engineer");
      expectAttribute(s, "get after Add", added, department, "R&D");
      await patch(s, "PATCH Remove", id, patchOp({ op: "Remove", path: "title" }));
      const removed = await read(s, "get", id);
      expectAttribute(s, "get after Remove", removed, "title", undefined);
      expectAttribute(s, "get after Remove", removed, department, "R&D");
    },
  },
  {
    name: "Entra: PATCH replace without path, its keys paths (aadOptscim062020)",
    rule: `${entraRule} (its SCIM compliance fixes); RFC 7644 §3.5.2.3`,
    async run(s) {
      const { id } = await create(s, "create", entraUser(s.mark()));
      const employeeNumber = `${urn.enterprise}:employeeNumber`;
      await patch(
        s,
        "PATCH replace, no path",
        id,
        patchOp({ op: "replace", value: { "name.givenName": "Janet", [employeeNumber]: "4711" } }),
      );
      const user = await read(s, "get", id);
      expectAttribute(s, "get", user, "name.givenName", "Janet");
      expectAttribute(s, "get", user, "name.familyName", "Doe");
      expectAttribute(s, "get", user, employeeNumber, "4711");
    },
  },
  {
    name: 'Entra: disable ("active": "False") keeps the user readable and inactive',
    rule: `${entraRule}, step 6 (users are read back active or not); RFC 7643 §4.1.1`,
    async run(s) {
      const body = entraUser(s.mark());
      const { id } = await create(s, "create", body);
      await patch(
        s,
        'PATCH Replace active "False"',
        id,
        patchOp({ op: "Replace", path: "active", value: "False" }),
      );
      expectAttribute(s, "get", await read(s, "get", id), "active", false);
      const filter = `externalId eq ${filterString(body.externalId as string)}`;
      const found = await findsOnly(s, "filter externalId eq", filter, id);
      expectAttribute(s, "filter externalId eq", found, "active", false);
    },
  },
  {
    name: "Entra: a PATCH of another attribute keeps a disabled user inactive",
    rule: `${entraRule} (a disabled user's changes still flow); RFC 7644 §3.5.2`,
    async run(s) {
      const { id } = await create(s, "create", entraUser(s.mark()));
      await patch(
        s,
        "PATCH active false",
        id,
        patchOp({ op: "replace", path: "active", value: false }),
      );
      await patch(
        s,
        "PATCH displayName",
        id,
        patchOp({ op: "Replace", path: "displayName", value: "Jane R. Doe" }),
      );
      const user = await read(s, "get", id);
      expectAttribute(s, "get", user, "displayName", "Jane R. Doe");
      expectAttribute(s, "get", user, "active", false);
    },
  },
  {
    name: 'Entra: enable again ("active": "True") makes the user active',
    rule: `${entraRule}, step 6; RFC 7643 §4.1.1`,
    async run(s) {
      const { id } = await create(s, "create", entraUser(s.mark()));
      await patch(
        s,
        'PATCH active "False"',
        id,
        patchOp({ op: "Replace", path: "active", value: "False" }),
      );
      await patch(
        s,
        'PATCH active "True"',
        id,
        patchOp({ op: "Replace", path: "active", value: "True" }),
      );
      expectAttribute(s, "get", await read(s, "get", id), "active", true);
    },
  },
  {
    name: "Entra: hard delete answers 204, then 404 for that id",
    rule: `${entraRule}, step 6 (DELETE on hard delete); RFC 7644 §3.6`,
    async run(s) {
      const { id } = await create(s, "create", entraUser(s.mark()));
      await s.call("delete", { method: "DELETE", path: userPath(id) }, 204);
      const gone = await s.call("get after delete", { method: "GET", path: userPath(id) }, 404);
      expectError(s, "get after delete", gone.body, 404);
    },
  },
];

/** Okta's spec test and reference: list, lookup, create, 409, case, PUT, (de)activation, 401. */
const oktaChecks: ScimCheck[] = [
  {
    name: "Okta: list with count=1&startIndex=1 answers a ListResponse, its paging numbers numbers",
    rule: `${oktaRule}; RFC 7644 §3.4.2.4`,
    async run(s) {
      await create(s, "create", oktaUser(s.mark()), "application/json");
      const label = "list count=1&startIndex=1";
      const answer = await s.call(
        label,
        { method: "GET", path: usersQuery(undefined, { count: 1, startIndex: 1 }) },
        200,
      );
      const { list, resources } = listResources(s, label, answer.body);
      const numbers = ["totalResults", "itemsPerPage", "startIndex"].map((name) => list?.[name]);
      s.step(
        `${label}: totalResults, itemsPerPage, startIndex numbers`,
        `${label}: ${numbers.map(show).join(", ")}`,
        numbers.every((number) => typeof number === "number"),
      );
      s.step(
        `${label}: 1 resource`,
        `${label}: ${resources.length} resources`,
        resources.length === 1,
      );
      const [first] = resources;
      for (const path of ["id", "userName", "name.givenName", "name.familyName", "active"]) {
        const value = attribute(first, path);
        s.step(
          `${label}: Resources[0].${path}`,
          `${label}: Resources[0].${path} ${show(value)}`,
          value !== undefined,
        );
      }
      const mail = workEmail(first);
      s.step(
        `${label}: Resources[0].emails[0].value`,
        `${label}: ${show(mail)}`,
        mail !== undefined,
      );
    },
  },
  {
    name: "Okta: filter on an unknown userName answers 200 with totalResults 0, twice",
    rule: `${oktaRule} (user lookup before create)`,
    async run(s) {
      const filter = `userName eq ${filterString(userName("nobody", s.mark()))}`;
      for (const label of ["filter unknown userName", "the same again"]) {
        const { total } = await search(s, label, filter, { startIndex: 1, count: 100 });
        s.step(`${label}: totalResults 0`, `${label}: totalResults ${total}`, total === 0);
      }
    },
  },
  {
    name: "Okta: create (application/json) answers 201 echoing the user, no password",
    rule: `${oktaRule}; RFC 7644 §3.3, RFC 7643 §4.1.1 (password returned never)`,
    async run(s) {
      const body = oktaUser(s.mark());
      const { user, id } = await create(s, "create", body, "application/json");
      expectAttribute(s, "create", user, "userName", body.userName);
      expectAttribute(s, "create", user, "active", true);
      expectAttribute(s, "create", user, "name.givenName", "Ola");
      expectAttribute(s, "create", user, "name.familyName", "Nordmann");
      expectAttribute(s, "create", user, "password", undefined);
      const got = await read(s, "get", id);
      expectAttribute(s, "get", got, "externalId", body.externalId);
      expectAttribute(s, "get", got, "password", undefined);
    },
  },
  {
    name: "Okta: the same create again answers 409 uniqueness",
    rule: `${oktaRule}; RFC 7644 §3.3, §3.12`,
    async run(s) {
      const body = oktaUser(s.mark());
      await create(s, "create", body, "application/json");
      const again = await s.call(
        "same create again",
        { method: "POST", path: "/Users", body, contentType: "application/json" },
        "any",
      );
      const id = asObject(again.body)?.id;
      // A server that created a second user must not leave it behind.
      if (again.status !== undefined && again.status < 300 && typeof id === "string") s.track(id);
      s.step(
        "same create again: 409",
        `same create again: ${describeAnswer(again)}`,
        again.status === 409,
      );
      expectError(s, "same create again", again.body, 409, "uniqueness");
    },
  },
  {
    name: "Okta: a userName filter in other letter case finds the user",
    rule: `${oktaRule}; RFC 7643 §4.1.1 (userName caseExact false)`,
    async run(s) {
      const body = oktaUser(s.mark());
      const { id } = await create(s, "create", body, "application/json");
      const filter = `userName eq ${filterString((body.userName as string).toUpperCase())}`;
      const label = "filter userName in capitals";
      const { total, resources } = await search(s, label, filter);
      const found = total === 1 && asObject(resources[0])?.id === id;
      if (!found) {
        s.warn(
          `${label}: totalResults 1, the user ${id}`,
          `${label}: totalResults ${total}`,
          "RFC 7643 makes userName caseExact false: a filter in other letter case should find it. Okta's test asks only for a 200; an identity provider that changes a name's case may create a duplicate.",
        );
      }
      s.step(`${label}: the user`, `${label}: the user`, true);
    },
  },
  {
    name: "Okta: PUT of the whole user updates it, externalId and id kept",
    rule: `${oktaRule} (profile updates by PUT); RFC 7644 §3.5.1`,
    async run(s) {
      const body = oktaUser(s.mark());
      const { id } = await create(s, "create", body, "application/json");
      const current = asObject(await read(s, "get", id)) ?? {};
      const { password: _password, ...rest } = body;
      const replacement = {
        ...rest,
        id,
        name: { givenName: "Ola", familyName: "Hansen" },
        displayName: "Ola Hansen",
        ...(current.meta !== undefined && { meta: current.meta }),
      };
      const answer = await s.call(
        "PUT",
        { method: "PUT", path: userPath(id), body: replacement, contentType: "application/json" },
        200,
      );
      expectAttribute(s, "PUT", answer.body, "name.familyName", "Hansen");
      const user = await read(s, "get", id);
      expectAttribute(s, "get", user, "name.familyName", "Hansen");
      expectAttribute(s, "get", user, "displayName", "Ola Hansen");
      expectAttribute(s, "get", user, "externalId", body.externalId);
      expectAttribute(s, "get", user, "active", true);
    },
  },
  {
    name: 'Okta: deactivate and reactivate by PATCH without path ({"active": false})',
    rule: `${oktaRule} (deactivation); RFC 7644 §3.5.2.3`,
    async run(s) {
      const { id } = await create(s, "create", oktaUser(s.mark()), "application/json");
      await patch(
        s,
        "PATCH active false",
        id,
        patchOp({ op: "replace", value: { active: false } }),
      );
      expectAttribute(s, "get after deactivate", await read(s, "get", id), "active", false);
      await patch(s, "PATCH active true", id, patchOp({ op: "replace", value: { active: true } }));
      expectAttribute(s, "get after reactivate", await read(s, "get", id), "active", true);
    },
  },
  {
    name: "Okta: a wrong token answers 401 in the SCIM error form",
    rule: `${oktaRule}; RFC 7644 §2, §3.12`,
    async run(s) {
      const label = 'GET /Users with "Authorization: non-token"';
      const answer = await s.call(
        label,
        { method: "GET", path: usersQuery(undefined, { count: 1 }), authorization: "non-token" },
        401,
      );
      expectError(s, label, answer.body, 401);
    },
  },
  {
    name: "Unknown user: GET, PATCH and PUT answer 404 in the SCIM error form",
    rule: `${oktaRule}; RFC 7644 §3.4.1, §3.12`,
    async run(s) {
      const path = "/Users/00919288221112222";
      const got = await s.call("GET unknown id", { method: "GET", path }, 404);
      expectError(s, "GET unknown id", got.body, 404);
      const patched = await s.call(
        "PATCH unknown id",
        { method: "PATCH", path, body: patchOp({ op: "replace", value: { active: false } }) },
        404,
      );
      expectError(s, "PATCH unknown id", patched.body, 404);
      const body = { ...oktaUser(s.mark()), id: "00919288221112222" };
      const put = await s.call("PUT unknown id", { method: "PUT", path, body }, 404);
      expectError(s, "PUT unknown id", put.body, 404);
    },
  },
];

/** Pages of at most this many users: Okta imports with count=100. */
const pageLimit = 200;

const pagination: ScimCheck = {
  name: "Pagination: startIndex and count page through every user once, in a stable order",
  rule: "RFC 7644 §3.4.2.4; Okta's import (count and startIndex)",
  async run(s) {
    const ids = new Set<string>();
    for (let index = 0; index < 3; index++) {
      ids.add((await create(s, `create user ${index + 1}`, entraUser(s.mark()))).id);
    }
    const first = await s.call(
      "count",
      { method: "GET", path: usersQuery(undefined, { count: 1 }) },
      200,
    );
    const { total } = listResources(s, "count", first.body);
    // Small pages where the server holds few users, Okta's pages of 100 where it holds many.
    const count = total <= 20 ? 2 : 100;
    const seen = new Map<string, number>();
    let startIndex = 1;
    for (let page = 1; startIndex <= total && page <= pageLimit; page++) {
      const label = `page startIndex=${startIndex}&count=${count}`;
      const answer = await s.call(
        label,
        { method: "GET", path: usersQuery(undefined, { startIndex, count }) },
        200,
      );
      const { list, resources } = listResources(s, label, answer.body);
      s.step(
        `${label}: at most ${count} resources, startIndex ${startIndex}`,
        `${label}: ${resources.length} resources, startIndex ${show(list?.startIndex)}`,
        resources.length <= count && list?.startIndex === startIndex,
      );
      if (resources.length === 0) break;
      for (const user of resources) {
        const id = asObject(user)?.id;
        if (typeof id !== "string") continue;
        s.step(
          `${label}: each user once`,
          `${label}: ${id} also on the page at startIndex ${seen.get(id)}`,
          !seen.has(id),
        );
        seen.set(id, startIndex);
      }
      startIndex += resources.length;
    }
    const missing = [...ids].filter((id) => !seen.has(id));
    if (missing.length > 0 && startIndex <= total) {
      s.warn(
        "every page: the 3 users created",
        `the first ${pageLimit} pages: ${seen.size} of ${total} users`,
        `The service holds more users than ${pageLimit} pages of ${count}: the pages read were checked, the rest not.`,
      );
    }
    s.step(
      "every page: the 3 users created",
      `every page: ${missing.length === 0 ? "the 3 users created" : `missing ${missing.join(", ")}`}`,
      missing.length === 0,
    );
  },
};

/** Every SCIM check, Entra's sequence first (its first is the connection test). */
export const scimChecks: ScimCheck[] = [...entraChecks, ...oktaChecks, pagination];
