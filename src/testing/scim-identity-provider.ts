import type { JsonValue } from "type-fest";
import { maxAnswerBytes } from "../platform/outbound.ts";
import type { UserReader } from "../platform/read-user.ts";
import { toPatches } from "../provisioning/wire.ts";
import { mergeUser } from "../users/merge-user.ts";
import type { UserRecord } from "../users/user-record.ts";
import { describeAnswer } from "./conformance-session.ts";
import {
  connectScim,
  filterString,
  type ScimAnswer,
  type ScimTarget,
  usersQuery,
} from "./scim-client.ts";
import { asObject, attribute, urn, workEmail } from "./scim-session.ts";

/** How {@link createScimIdentityProvider} reaches the SCIM service and which client it plays. */
export interface ScimIdentityProviderOptions {
  /** The SCIM service: its base URL (the part before `/Users`), or a handler called in-process. */
  target: ScimTarget;
  /** The bearer token, sent on every call. */
  token?: string | undefined;
  /** How long one SCIM call may take (default 30 s). */
  timeoutMs?: number | undefined;
  /**
   * Whose requests to send. `"entra"` (default): Entra ID's PATCHes, one `Replace` per attribute
   * with capitalised op names, emails by `emails[type eq "work"].value`, `active` as the strings
   * `"True"`/`"False"` (its behaviour without the `aadOptscim062020` flag). `"okta"`: profile
   * changes by GET then PUT of the whole user, (de)activation by a PATCH without path.
   */
  profile?: "entra" | "okta" | undefined;
  /**
   * What a user removed from the directory becomes: `"deactivate"` (default: `active` false, as
   * Entra's soft delete and Okta's deactivation do) or `"delete"` (`DELETE /Users/{id}`, Entra's
   * hard delete). Deactivation is the default: nothing destructive unless asked.
   */
  onRemove?: "deactivate" | "delete" | undefined;
}

/**
 * A Provisioning API in front of a SCIM service: see {@link createScimIdentityProvider}. Give it
 * as the `target` of the platform simulator or the directory sync.
 */
export interface ScimIdentityProvider {
  /** Answers the platform's Provisioning API calls by sending the SCIM calls an IdP would. */
  fetch(request: Request): Promise<Response>;
  /**
   * Reads a directory user back through SCIM (`filter=externalId eq "<uuid>"`), mapped back to a
   * record: the `readUser` of the simulator's `verify()`. A user the service holds inactive reads
   * with `deactivatedAt`, which the verification counts as gone.
   */
  readUser(uuid: string): Promise<UserRecord | undefined>;
}

/**
 * Plays an identity provider that pushes a directory into a SCIM 2.0 service, as Entra ID (or
 * Okta) does, behind the Provisioning API's calls: the platform simulator and the directory sync
 * drive it as they drive any application. Each directory user is matched by `externalId` (its
 * uuid), as Entra's matching attribute does, with one `GET /Users?filter=externalId eq "…"` per
 * message; only a listed user whose `externalId` is that uuid counts (a service that ignores the
 * filter never gets another user written over); two such users are an unexpected answer, and so
 * is a list longer than the 64 KiB read (cut off there: the user may be in what was not read):
 *
 * - create, or modify of a user the service does not hold: `POST /Users` with userName (the
 *   username, else the uuid), name, displayName, the work email, the enterprise employeeNumber
 *   (user_id) and `active: true`; a user the service holds is updated instead (and enabled).
 * - modify: a PATCH of the changed attributes (Okta: PUT of the whole user); a field cleared is a
 *   `Remove`. A user the service holds inactive is enabled in the same request.
 * - delete: `active` false (or `DELETE`, with `onRemove: "delete"`); a user it does not hold is
 *   already gone.
 * - ping: Entra's connection test, a filter on a random GUID that must answer 200.
 *
 * A SCIM answer other than success comes back with its status and body, so the simulator stops
 * there and reports it; `POST /v1/reset` answers 501 (SCIM has none). Passwords are not sent.
 *
 * @example
 * ```ts
 * const idp = createScimIdentityProvider({ target: "http://127.0.0.1:3000/scim/v2", token });
 * const platform = createPlatformSimulator({ target: idp, readUser: idp.readUser });
 * platform.addUser({ uuid: "97e86d2d", username: "bob", email: "bob@acme.test" });
 * expect((await platform.sync()).completed).toBe(true);
 * ```
 */
export function createScimIdentityProvider(
  options: ScimIdentityProviderOptions,
): ScimIdentityProvider {
  const send = connectScim(options.target, {
    token: options.token,
    timeoutMs: options.timeoutMs ?? 30_000,
  });
  const profile = options.profile ?? "entra";
  const onRemove = options.onRemove ?? "deactivate";
  // What the IdP knows of each directory user, as Entra holds its source: a modify's changed
  // fields merged in, so that a user the service lost can be created again whole.
  const known = new Map<string, UserRecord>();

  const find = async (uuid: string): Promise<Found | ScimAnswer> => {
    const filter = `externalId eq ${filterString(uuid)}`;
    const answer = await send({ method: "GET", path: usersQuery(filter) });
    if (answer.status !== 200) return answer;
    return directoryUserIn(answer, uuid);
  };

  const createOrUpdate = async (user: UserRecord, success: number): Promise<Response> => {
    const lookup = await find(user.uuid);
    if (!("found" in lookup)) return passOn(lookup);
    const existing = lookup.found;
    if (existing === undefined) {
      const answer = await send({ method: "POST", path: "/Users", body: toScimUser(user) });
      return answer.status === 201 ? ok(success) : passOn(answer);
    }
    // A create is the whole user: every mapped attribute is set, or removed when it has none.
    return update(existing, user, new Set(mappedFields), success);
  };

  const update = async (
    existing: ScimUser,
    user: UserRecord,
    changed: Set<string>,
    success: number,
  ): Promise<Response> => {
    const path = `/Users/${encodeURIComponent(existing.id)}`;
    const inactive = existing.active === false || existing.active === "False";
    if (profile === "okta") {
      const body = { ...toScimUser(user), id: existing.id };
      const answer = await send({ method: "PUT", path, body, contentType: "application/json" });
      return answer.status === 200 ? ok(success) : passOn(answer);
    }
    const operations = entraOperations(user, changed, existing);
    if (inactive) operations.push({ op: "Replace", path: "active", value: "True" });
    if (operations.length === 0) return ok(success);
    const body = { schemas: [urn.patchOp], Operations: operations };
    const answer = await send({ method: "PATCH", path, body });
    return answer.status === 200 || answer.status === 204 ? ok(success) : passOn(answer);
  };

  const remove = async (uuid: string): Promise<Response> => {
    const lookup = await find(uuid);
    if (!("found" in lookup)) return passOn(lookup);
    known.delete(uuid);
    if (lookup.found === undefined) return ok(204);
    const path = `/Users/${encodeURIComponent(lookup.found.id)}`;
    if (onRemove === "delete") {
      const answer = await send({ method: "DELETE", path });
      return answer.status === 204 || answer.status === 404 ? ok(204) : passOn(answer);
    }
    const body =
      profile === "okta"
        ? { schemas: [urn.patchOp], Operations: [{ op: "replace", value: { active: false } }] }
        : {
            schemas: [urn.patchOp],
            Operations: [{ op: "Replace", path: "active", value: "False" }],
          };
    const answer = await send({ method: "PATCH", path, body });
    return answer.status === 200 || answer.status === 204 ? ok(204) : passOn(answer);
  };

  const handle = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    if (request.method === "GET" && pathname === "/v1/ping") {
      const filter = `userName eq ${filterString(crypto.randomUUID())}`;
      const answer = await send({ method: "GET", path: usersQuery(filter) });
      return answer.status === 200 ? ok(204) : passOn(answer);
    }
    if (request.method === "POST" && pathname === "/v1/reset") {
      return Response.json(
        {
          error: "not_implemented",
          message: "SCIM has no reset: a full re-sync updates every user",
        },
        { status: 501 },
      );
    }
    const deleted = /^\/v1\/user\/([^/]+)$/.exec(pathname)?.[1];
    if (request.method === "DELETE" && deleted !== undefined) {
      return remove(decodeURIComponent(deleted));
    }
    const kind = /^\/v1\/user\/(create|modify)$/.exec(pathname)?.[1];
    if (request.method !== "POST" || kind === undefined) {
      return Response.json({ error: "not_found" }, { status: 404 });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(await request.text());
    } catch {
      return Response.json({ error: "invalid_json" }, { status: 400 });
    }
    const patches = toPatches(parsed, "plain", false);
    const patch = Array.isArray(patches) && patches.length === 1 ? patches[0] : undefined;
    if (patch === undefined) return Response.json({ error: "invalid_user" }, { status: 400 });
    const user = mergeUser(kind === "create" ? undefined : known.get(patch.uuid), patch);
    known.set(user.uuid, user);
    if (kind === "create") return createOrUpdate(user, 201);
    const lookup = await find(user.uuid);
    if (!("found" in lookup)) return passOn(lookup);
    if (lookup.found === undefined) {
      const answer = await send({ method: "POST", path: "/Users", body: toScimUser(user) });
      return answer.status === 201 ? ok(204) : passOn(answer);
    }
    const changed = new Set(Object.keys(patch));
    return update(lookup.found, user, changed, 204);
  };

  const readUser: UserReader = async (uuid) => {
    const lookup = await find(uuid);
    if (!("found" in lookup)) {
      throw new Error(`the SCIM service answered ${describeAnswer(lookup)}`);
    }
    return lookup.found && fromScimUser(uuid, lookup.found);
  };

  return {
    fetch: (request) =>
      handle(request).catch((error: unknown) =>
        Response.json(
          { error: "identity_provider_failed", message: String(error) },
          { status: 502 },
        ),
      ),
    readUser,
  };
}

type ScimUser = Record<string, JsonValue> & { id: string };
type Found = { found: ScimUser | undefined };

const ok = (status: number) => new Response(null, { status });

/** A SCIM failure answered as it came (a status and body the simulator reports). */
/**
 * The directory user in the answer to `filter=externalId eq "<uuid>"`: only a listed user whose
 * externalId is the uuid is it. A service that ignores the filter lists others, which must never
 * be read, disabled or written over; two such users are an unexpected answer, and so is a list
 * cut off at the read cap, whose unread part may hold the user (a POST would duplicate it).
 */
function directoryUserIn(answer: ScimAnswer, uuid: string): Found | ScimAnswer {
  if (answer.cutOff) {
    return unexpected(
      answer,
      `cut off at ${maxAnswerBytes / 1024} KiB: the users answering externalId eq ${filterString(uuid)} are longer, and the user may be in the part not read (a SCIM service applies the filter)`,
    );
  }
  const resources = asObject(answer.body)?.Resources;
  const matching = (Array.isArray(resources) ? resources : [])
    .map(asObject)
    .filter((resource) => resource?.externalId === uuid);
  if (matching.length > 1) {
    return unexpected(answer, `${matching.length} users have the externalId ${filterString(uuid)}`);
  }
  const first = matching[0];
  if (first === undefined) return { found: undefined };
  if (typeof first.id !== "string") return unexpected(answer, "a listed user has no id");
  return { found: first as ScimUser };
}

function passOn(answer: ScimAnswer): Response {
  if (answer.status === undefined) {
    return Response.json({ error: "scim_unreachable", message: answer.error }, { status: 502 });
  }
  // A success other than the one expected (a 200 for a POST) is the service's mistake.
  const status = answer.status >= 200 && answer.status < 300 ? 502 : answer.status;
  const body =
    status === 502
      ? { error: "unexpected_scim_answer", message: `SCIM answered ${describeAnswer(answer)}` }
      : (answer.body ?? null);
  return Response.json(body, { status });
}

function unexpected(answer: ScimAnswer, why: string): ScimAnswer {
  return {
    ...answer,
    status: 502,
    body: { error: "unexpected_scim_answer", message: why },
  } as ScimAnswer;
}

const employeeNumber = `${urn.enterprise}:employeeNumber`;

/** The SCIM user Entra would post for a directory user. */
function toScimUser(user: UserRecord): Record<string, JsonValue> {
  const name: Record<string, JsonValue> = {};
  if (user.firstName !== undefined) name.givenName = user.firstName;
  if (user.lastName !== undefined) name.familyName = user.lastName;
  if (user.fullName !== undefined) name.formatted = user.fullName;
  return {
    schemas: [urn.user, urn.enterprise],
    externalId: user.uuid,
    userName: user.username ?? user.uuid,
    active: true,
    ...(Object.keys(name).length > 0 && { name }),
    ...(user.fullName !== undefined && { displayName: user.fullName }),
    ...(user.email !== undefined && {
      emails: [{ primary: true, type: "work", value: user.email }],
    }),
    ...(user.userId !== undefined && { [urn.enterprise]: { employeeNumber: user.userId } }),
    meta: { resourceType: "User" },
  };
}

/** Each record field the IdP maps, and the SCIM path Entra's default mappings give it. */
const mappings = [
  ["username", "userName"],
  ["firstName", "name.givenName"],
  ["lastName", "name.familyName"],
  ["fullName", "displayName"],
  ["email", 'emails[type eq "work"].value'],
  ["userId", employeeNumber],
] as const;
const mappedFields = mappings.map(([field]) => field);

/**
 * Entra's PATCH operations for the changed fields: one Replace each, a Remove for a cleared one
 * that the service holds (a Remove of nothing may be refused as `noTarget`).
 */
function entraOperations(
  user: UserRecord,
  changed: Set<string>,
  existing: ScimUser,
): Record<string, JsonValue>[] {
  return mappings.flatMap(([field, path]) => {
    if (!changed.has(field)) return [];
    const value = user[field];
    if (value !== undefined) return [{ op: "Replace", path, value }];
    // userName is required: a directory user without one keeps its uuid there.
    if (field === "username") return [{ op: "Replace", path, value: user.uuid }];
    const held = field === "email" ? workEmail(existing) : attribute(existing, path);
    return held === undefined || held === null ? [] : [{ op: "Remove", path }];
  });
}

/** A SCIM user read back as the directory user it stands for. */
function fromScimUser(uuid: string, scim: ScimUser): UserRecord {
  const text = (value: JsonValue | undefined) => (typeof value === "string" ? value : undefined);
  const fields = {
    username: text(attribute(scim, "userName")),
    firstName: text(attribute(scim, "name.givenName")),
    lastName: text(attribute(scim, "name.familyName")),
    fullName: text(attribute(scim, "displayName")),
    email: text(workEmail(scim)),
    userId: text(attribute(scim, employeeNumber)),
  };
  const user: UserRecord = { uuid };
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) (user as unknown as Record<string, string>)[name] = value;
  }
  // userName stands in for a directory user without a username.
  if (user.username === uuid) delete user.username;
  const active = attribute(scim, "active");
  if (active === false || active === "False") user.deactivatedAt = "inactive in SCIM";
  return user;
}
