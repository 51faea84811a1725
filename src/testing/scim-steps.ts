// The SCIM checks' shared steps: the bodies identity providers post, the requests every sequence
// makes, and the expectations that record each step's outcome.
import type { JsonValue } from "type-fest";
import { jsonEqual } from "../internal/json-equal.ts";
import { scimMediaType, usersQuery } from "./scim-client.ts";
import { asObject, attribute, type ScimSession, show, urn, workEmail } from "./scim-session.ts";

// Every userName and email a check sends carries a mark no other user has, in this run or
// another (a user left behind by an interrupted run included): a server that holds userNames or
// emails unique passes every check but the one that means to conflict.
export const userName = (text: string, mark: string) =>
  `conformance-${text}-${mark}@example.invalid`;
export const email = (text: string, mark: string) => `conformance-${text}-${mark}@example.invalid`;

/** The body Entra ID posts for a new user (its tutorial's step 3), with `active` as given. */
export function entraUser(mark: string, active: JsonValue = true): Record<string, JsonValue> {
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
export function oktaUser(mark: string): Record<string, JsonValue> {
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

export const patchOp = (...operations: Record<string, JsonValue>[]) => ({
  schemas: [urn.patchOp],
  Operations: operations,
});

/** A step recorded only when it fails: the shape checks that would crowd a report. */
export function must(s: ScimSession, expected: string, actual: string, passed: boolean): void {
  if (!passed) s.step(expected, actual, false);
}

/** Fails the check unless the user's attribute at `path` is `want` (absent for undefined). */
export function expectAttribute(
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
export async function create(
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

export const userPath = (id: string) => `/Users/${encodeURIComponent(id)}`;

/** GETs a user by id, wants 200 with its id. */
export async function read(s: ScimSession, label: string, id: string) {
  const answer = await s.call(label, { method: "GET", path: userPath(id) }, 200);
  const got = attribute(answer.body, "id");
  must(s, `${label}: id ${id}`, `${label}: id ${show(got)}`, got === id);
  return answer.body;
}

/** Filters users, wants 200 with a ListResponse whose numbers are numbers; its Resources. */
export async function search(s: ScimSession, label: string, filter: string, parameters = {}) {
  const answer = await s.call(label, { method: "GET", path: usersQuery(filter, parameters) }, 200);
  return listResources(s, label, answer.body);
}

export function listResources(s: ScimSession, label: string, body: JsonValue | undefined) {
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
export async function findsOnly(s: ScimSession, label: string, filter: string, id: string) {
  const { total, resources } = await search(s, label, filter);
  const ids = resources.map((user) => asObject(user)?.id);
  s.step(
    `${label}: totalResults 1, the user ${id}`,
    `${label}: totalResults ${total}, ids ${show(ids as JsonValue)}`,
    total === 1 && ids.length === 1 && ids[0] === id,
  );
  return resources[0];
}

export async function patch(s: ScimSession, label: string, id: string, body: JsonValue) {
  return s.call(label, { method: "PATCH", path: userPath(id), body }, [200, 204]);
}

/** Fails the check unless the answer is RFC 7644 §3.12's error form, `status` a string. */
export function expectError(
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
