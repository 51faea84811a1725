// Entra ID's SCIM provisioning sequence, as its tutorial and compliance fixes describe it:
// test connection, match, create, get, PATCHes, disable, enable, hard delete.
import { filterString } from "./scim-client.ts";
import { attribute, type ScimCheck, show, urn, workEmail } from "./scim-session.ts";
import {
  create,
  email,
  entraUser,
  expectAttribute,
  expectError,
  findsOnly,
  patch,
  patchOp,
  read,
  search,
  userPath,
} from "./scim-steps.ts";

const entraRule = "Entra ID's provisioning sequence (its SCIM tutorial)";

/** Entra ID's sequence: test connection, match, create, get, PATCHes, disable, enable, delete. */
export const entraChecks: ScimCheck[] = [
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
