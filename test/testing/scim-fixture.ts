// A minimal SCIM 2.0 service for the checker's and the fake identity provider's tests, written
// from RFC 7644 and shared/SCIM.md, not from src/scim: correct by default, and wrong in one named
// way when asked, so that each of the checker's verdicts is seen to fail.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Resource = Record<string, Json>;

/** The wrong servers the checker must fail. */
export interface ScimDefects {
  /** A store failure answered 400 (as one library does): every PATCH meets a failing store. */
  storeFailureAs400?: boolean;
  /** externalId not kept (another library's defect): Entra then creates every user again. */
  dropExternalId?: boolean;
  /** Any PATCH reactivates the user (a store whose upsert clears the deactivation). */
  patchReactivates?: boolean;
  /** A deactivated user answered 404, as if deleted. */
  deactivatedIs404?: boolean;
  /** A taken userName answered 200 with the existing user, where 409 is due. */
  duplicateIs200?: boolean;
  /** Entra's string booleans refused with 400 invalidValue (a third library's defect). */
  refuseStringBooleans?: boolean;
}

const errorSchema = "urn:ietf:params:scim:api:messages:2.0:Error";
const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

const scimError = (status: number, detail: string, scimType?: string) =>
  Response.json(
    { schemas: [errorSchema], status: String(status), ...(scimType && { scimType }), detail },
    { status, headers: { "content-type": "application/scim+json" } },
  );

const scimJson = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { "content-type": "application/scim+json", ...headers } });

class Refused extends Error {
  readonly response: Response;
  constructor(response: Response) {
    super("refused");
    this.response = response;
  }
}

/** A SCIM service over an in-memory map, at `basePath` (default none), with `defects`. */
export function createScimFixture({
  token = "s3cret-token-for-tests",
  basePath = "",
  defects = {},
}: {
  token?: string;
  basePath?: string;
  defects?: ScimDefects;
} = {}) {
  const users = new Map<string, Resource>();
  /** Every request after authentication: method, path and query, and the body parsed. */
  const requests: { method: string; path: string; body: Resource }[] = [];

  const boolean = (value: Json): boolean => {
    if (typeof value === "boolean") return value;
    if (
      typeof value === "string" &&
      /^(true|false)$/i.test(value) &&
      !defects.refuseStringBooleans
    ) {
      return value.toLowerCase() === "true";
    }
    throw new Refused(
      scimError(400, `active must be a boolean, not ${JSON.stringify(value)}`, "invalidValue"),
    );
  };

  const taken = (userName: Json, except?: string) =>
    [...users.values()].find(
      (user) =>
        user.id !== except &&
        String(user.userName).toLowerCase() === String(userName).toLowerCase(),
    );

  const stored = (id: string, body: Resource, origin: string, created?: Json): Resource => {
    const { password: _p, schemas: _s, meta: _m, id: _i, ...rest } = body;
    const now = new Date().toISOString();
    const user: Resource = {
      schemas: [
        "urn:ietf:params:scim:schemas:core:2.0:User",
        ...(rest[enterprise] ? [enterprise] : []),
      ],
      ...rest,
      id,
      active: rest.active === undefined ? true : boolean(rest.active),
      meta: {
        resourceType: "User",
        created: created ?? now,
        lastModified: now,
        location: `${origin}${basePath}/Users/${id}`,
      },
    };
    if (defects.dropExternalId) delete user.externalId;
    return user;
  };

  const visible = (id: string) => {
    const user = users.get(id);
    if (!user || (defects.deactivatedIs404 && user.active === false)) {
      throw new Refused(scimError(404, `No user ${id}`));
    }
    return user;
  };

  const matches = (user: Resource, filter: string) =>
    filter.split(/\s+and\s+/i).every((clause) => {
      const match = /^\s*([\w.:]+)\s+eq\s+("(?:[^"\\]|\\.)*")\s*$/i.exec(clause);
      if (!match)
        throw new Refused(scimError(400, `Unsupported filter: ${filter}`, "invalidFilter"));
      const [, name = "", literal = ""] = match;
      const value = JSON.parse(literal) as string;
      const actual =
        user[Object.keys(user).find((key) => key.toLowerCase() === name.toLowerCase()) ?? ""];
      return name.toLowerCase() === "username"
        ? String(actual).toLowerCase() === value.toLowerCase()
        : actual === value;
    });

  const setPath = (user: Resource, path: string, value: Json, remove = false) => {
    const work = /^emails\[type eq "(\w+)"\]\.value$/i.exec(path);
    if (work) {
      const emails = (Array.isArray(user.emails) ? user.emails : []) as Resource[];
      const email = emails.find((each) => each.type === work[1]);
      if (remove) user.emails = emails.filter((each) => each !== email);
      else if (email) email.value = value;
      else emails.push({ type: work[1] ?? "", value });
      if (!remove) user.emails = emails;
      return;
    }
    let target = user;
    let rest = path;
    if (path.startsWith(`${enterprise}:`)) {
      user[enterprise] ??= {};
      target = user[enterprise] as Resource;
      rest = path.slice(enterprise.length + 1);
      const schemas = user.schemas as string[];
      if (!schemas.includes(enterprise)) schemas.push(enterprise);
    }
    const names = rest.split(".");
    const last = names.pop() ?? "";
    for (const name of names) {
      target[name] ??= {};
      target = target[name] as Resource;
    }
    if (remove) delete target[last];
    else target[last] = last === "active" && target === user ? boolean(value) : value;
  };

  const applyPatch = (user: Resource, body: Resource) => {
    const next = structuredClone(user);
    const operations = Array.isArray(body.Operations) ? (body.Operations as Resource[]) : [];
    let touchedActive = false;
    for (const operation of operations) {
      const op = String(operation.op).toLowerCase();
      const path = operation.path;
      if (op === "remove") {
        if (typeof path !== "string")
          throw new Refused(scimError(400, "remove needs a path", "noTarget"));
        setPath(next, path, null, true);
      } else if (typeof path === "string") {
        touchedActive ||= path === "active";
        setPath(next, path, operation.value ?? null);
      } else {
        for (const [key, value] of Object.entries((operation.value ?? {}) as Resource)) {
          touchedActive ||= key === "active";
          setPath(next, key, value);
        }
      }
    }
    if (defects.patchReactivates && !touchedActive) next.active = true;
    return next;
  };

  const route = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (request.headers.get("authorization") !== `Bearer ${token}`) {
      return scimError(401, "The bearer token is missing or wrong");
    }
    if (!url.pathname.startsWith(`${basePath}/Users`)) return scimError(404, "Not found");
    const id = decodeURIComponent(url.pathname.slice(`${basePath}/Users/`.length));
    const text = await request.text();
    const body = text === "" ? {} : (JSON.parse(text) as Resource);
    const origin = url.origin;
    requests.push({ method: request.method, path: `${url.pathname}${url.search}`, body });
    if (url.pathname === `${basePath}/Users`) {
      if (request.method === "POST") {
        const existing = taken(body.userName ?? null);
        if (existing) {
          return defects.duplicateIs200
            ? scimJson(existing)
            : scimError(409, "userName is taken", "uniqueness");
        }
        const newId = crypto.randomUUID();
        const user = stored(newId, body, origin);
        users.set(newId, user);
        return scimJson(user, 201, { location: String((user.meta as Resource).location) });
      }
      const filter = url.searchParams.get("filter");
      const all = [...users.values()].filter(
        (user) =>
          (filter === null || matches(user, filter)) &&
          !(defects.deactivatedIs404 && user.active === false),
      );
      const startIndex = Math.max(1, Number(url.searchParams.get("startIndex") ?? 1));
      const count = Math.max(0, Number(url.searchParams.get("count") ?? 100));
      const page = all.slice(startIndex - 1, startIndex - 1 + count);
      return scimJson({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        totalResults: all.length,
        startIndex,
        itemsPerPage: page.length,
        Resources: page,
      });
    }
    const user = visible(id);
    switch (request.method) {
      case "GET":
        return scimJson(user);
      case "DELETE":
        users.delete(id);
        return new Response(null, { status: 204 });
      case "PUT": {
        const taker = taken(body.userName ?? null, id);
        if (taker) return scimError(409, "userName is taken", "uniqueness");
        const replaced = stored(id, body, origin, (user.meta as Resource).created);
        users.set(id, replaced);
        return scimJson(replaced);
      }
      case "PATCH": {
        if (defects.storeFailureAs400) return scimError(400, "The store failed", "invalidValue");
        const patched = applyPatch(user, body);
        users.set(id, patched);
        return scimJson(patched);
      }
      default:
        return scimError(405, "Method not allowed");
    }
  };

  return {
    users,
    requests,
    fetch: (request: Request) =>
      route(request).catch((error: unknown) => {
        if (error instanceof Refused) return error.response;
        throw error;
      }),
  };
}
