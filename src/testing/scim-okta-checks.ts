// Okta's SCIM 2.0 sequence, from its spec test and reference: list, lookup, create, 409, letter
// case, PUT, (de)activation, a wrong token and an unknown user.
import { describeAnswer } from "./conformance-session.ts";
import { filterString, usersQuery } from "./scim-client.ts";
import { asObject, attribute, type ScimCheck, show, workEmail } from "./scim-session.ts";
import {
  create,
  expectAttribute,
  expectError,
  listResources,
  oktaUser,
  patch,
  patchOp,
  read,
  search,
  userName,
  userPath,
} from "./scim-steps.ts";

const oktaRule = "Okta's SCIM 2.0 spec test and reference";

/** Okta's spec test and reference: list, lookup, create, 409, case, PUT, (de)activation, 401. */
export const oktaChecks: ScimCheck[] = [
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
