// The Identity API's fake: its directory, routes and logins, each answer encoded by the record
// the client decodes it with (identity-record.ts).

import * as z from "zod/mini";
import {
  decodeSegment,
  type FakeRoute,
  json,
  jsonError,
  readJsonObjectBody,
  text,
} from "../integration-api/fake-answers.ts";
import {
  identityExistsSchema,
  identityGroupRecord,
  identitySourceRecord,
  identitySourcesRecord,
  identityUserRecord,
} from "./identity-record.ts";

/** A directory (LDAP source) the fake Identity API authenticates against. */
export interface FakeIdentitySource {
  hostname: string;
  baseDn: string;
}

/** A directory group; see {@link FakeIdentityInit}. */
export interface FakeIdentityGroup {
  name: string;
  /** Default: 500 plus the group's position, as a string ("501"), as the platform sends it. */
  id?: string;
  /** Default: `cn=<name>,ou=groups,<base DN of the first source>`. */
  dn?: string;
  attributes?: Record<string, string[]>;
}

/** A directory user; see {@link FakeIdentityInit}. */
export interface FakeIdentityUser {
  /** Matched case-insensitively, as LDAP matches uid. */
  username: string;
  /** The password login checks; never served by any endpoint. */
  password: string;
  /** Default: `uid=<username>,ou=people,<base DN of its source>`. */
  dn?: string;
  attributes?: Record<string, string[]>;
  /** Names of groups from {@link FakeIdentityInit.groups}. */
  groups?: string[];
  /** The position of the user's source in {@link FakeIdentityInit.sources}. Default 0. */
  source?: number;
}

/** The fake's directory. Omitted parts take the defaults of {@link fakeIdentityDefaults}. */
export interface FakeIdentityInit {
  /** The enabled sources, in order (default: one). */
  sources?: FakeIdentitySource[];
  /** Default: the one user of {@link fakeIdentityDefaults}. */
  users?: FakeIdentityUser[];
  /** Default: the one group of {@link fakeIdentityDefaults}. */
  groups?: FakeIdentityGroup[];
}

/** A login the fake answered: who, against which source, and the outcome. Never the password. */
export interface FakeLoginAttempt {
  username: string;
  source?: FakeIdentitySource;
  authenticated: boolean;
}

/** The fake Identity API's state, as `api.identity` of a fake Integration API. */
export interface FakeIdentityApi {
  /** A copy of the sources. */
  readonly sources: FakeIdentitySource[];
  /** Every login answered (200 or 401), oldest first. */
  readonly loginAttempts: FakeLoginAttempt[];
  /** Replaces the directory; parts left out take the defaults. */
  set(init: FakeIdentityInit): void;
}

/**
 * The directory a fake starts with, so that a login works out of the box: user `bob`, password
 * `password123` (the documentation's example), in group `users` (id "501"), in one source.
 */
export const fakeIdentityDefaults: {
  readonly source: FakeIdentitySource;
  readonly user: FakeIdentityUser;
  readonly group: FakeIdentityGroup;
} = {
  source: { hostname: "ldap.platform.test", baseDn: "dc=example,dc=com" },
  user: {
    username: "bob",
    password: "password123",
    attributes: {
      givenname: ["Bob"],
      sn: ["Smith"],
      cn: ["Bob Smith"],
      mail: ["bob@example.com"],
    },
    groups: ["users"],
  },
  group: { name: "users", id: "501" },
};

type DirectoryUser = Required<FakeIdentityUser>;

interface Directory {
  sources: FakeIdentitySource[];
  users: DirectoryUser[];
  groups: Map<string, Required<FakeIdentityGroup>>;
}

/**
 * The Identity API part of the fake Integration API: `GET /identity/v1/sources`,
 * `POST /identity/v1/login`, `GET /identity/v1/user/:username` and `.../exists`, with the
 * documented statuses (200, 401 for a wrong password, 404 for an unknown user, `true`/`false` as
 * text/plain). The source is chosen by the `hostname` and `base_dn` query parameters; with several
 * sources, leaving them out (undocumented) answers 400, as does naming an unknown source.
 */
export function createFakeIdentity(
  init: FakeIdentityInit | undefined,
  onLogin?: (attempt: FakeLoginAttempt) => void,
): { api: FakeIdentityApi; routes: FakeRoute[]; reset(): void } {
  const initial = toDirectory(init ?? {});
  let directory = initial;
  let attempts: FakeLoginAttempt[] = [];

  /** The index of the source a request names, or the error answer. */
  const chooseSource = (request: Request): number | Response => {
    const query = new URL(request.url).searchParams;
    const hostname = query.get("hostname");
    const baseDn = query.get("base_dn");
    if (hostname === null && baseDn === null) {
      if (directory.sources.length === 1) return 0;
      return jsonError(
        400,
        "source_required",
        "Several sources are enabled: pass hostname and base_dn (from /identity/v1/sources).",
      );
    }
    const index = directory.sources.findIndex(
      (source) => source.hostname === hostname && source.baseDn === baseDn,
    );
    if (index === -1) {
      return jsonError(400, "unknown_source", "No enabled source has this hostname and base_dn.");
    }
    return index;
  };

  const find = (username: string, source: number) => {
    const wanted = username.toLowerCase();
    return directory.users.find(
      (user) => user.username.toLowerCase() === wanted && user.source === source,
    );
  };

  const toWire = (user: DirectoryUser) =>
    json(
      200,
      identityUserRecord.toWire({
        dn: user.dn,
        username: user.username,
        attributes: user.attributes,
        groups: user.groups.flatMap((name) => {
          const group = directory.groups.get(name);
          return group === undefined ? [] : [identityGroupRecord.toWire(group)];
        }),
      }),
      { "content-type": "application/json; charset=utf-8" },
    );

  const lookUp = (
    request: Request,
    segment: string,
    answer: (user: DirectoryUser | undefined) => Response,
  ) => {
    const source = chooseSource(request);
    if (source instanceof Response) return source;
    return answer(find(decodeSegment(segment), source));
  };

  const routes: FakeRoute[] = [
    {
      method: "GET",
      path: "/identity/v1/sources",
      answer: () =>
        json(
          200,
          identitySourcesRecord.toWire({
            sources: directory.sources.map((source) => identitySourceRecord.toWire(source)),
          }),
          { "content-type": "application/json; charset=utf-8" },
        ),
    },
    {
      method: "POST",
      path: "/identity/v1/login",
      answer: async (request) => {
        const source = chooseSource(request);
        if (source instanceof Response) return source;
        const body = await readJsonObjectBody(request);
        if (body instanceof Response) return body;
        const { username, password } = body;
        if (typeof username !== "string" || typeof password !== "string") {
          return jsonError(400, "invalid_body", "The body must be { username, password }.");
        }
        const user = find(username, source);
        // An empty password never authenticates: a directory would take it as an anonymous bind.
        const authenticated = user !== undefined && password !== "" && user.password === password;
        const attempt: FakeLoginAttempt = { username, authenticated };
        const named = directory.sources[source];
        if (directory.sources.length > 1 && named !== undefined) attempt.source = { ...named };
        attempts.push(attempt);
        onLogin?.(structuredClone(attempt));
        if (!authenticated) {
          return jsonError(401, "invalid_credentials", "Invalid username or password.");
        }
        return toWire(user);
      },
    },
    {
      method: "GET",
      path: "/identity/v1/user/:username/exists",
      answer: (request, segment) =>
        lookUp(request, segment, (user) =>
          text(200, z.encode(identityExistsSchema, user !== undefined)),
        ),
    },
    {
      method: "GET",
      path: "/identity/v1/user/:username",
      answer: (request, segment) =>
        lookUp(request, segment, (user) =>
          user === undefined ? jsonError(404, "user_not_found", "No such user.") : toWire(user),
        ),
    },
  ];

  return {
    routes,
    api: {
      get sources() {
        return directory.sources.map((source) => ({ ...source }));
      },
      get loginAttempts() {
        return structuredClone(attempts);
      },
      set(next) {
        directory = toDirectory(next);
      },
    },
    reset() {
      directory = initial;
      attempts = [];
    },
  };
}

/**
 * A user from `name:password` text (`mock-api --user`), split at the first colon (a password may
 * contain colons); undefined unless both are non-empty.
 */
export function fakeIdentityUserFromText(entry: string): FakeIdentityUser | undefined {
  const colon = entry.indexOf(":");
  if (colon < 1 || colon === entry.length - 1) return undefined;
  return { username: entry.slice(0, colon), password: entry.slice(colon + 1) };
}

function toDirectory(init: FakeIdentityInit): Directory {
  const sources = (init.sources ?? [fakeIdentityDefaults.source]).map((source) => ({ ...source }));
  const baseDn = sources[0]?.baseDn;
  if (baseDn === undefined) {
    throw new RangeError("The Identity API needs at least one enabled source.");
  }
  const groups = new Map<string, Required<FakeIdentityGroup>>();
  (init.groups ?? [fakeIdentityDefaults.group]).forEach((group, index) => {
    groups.set(group.name, {
      name: group.name,
      id: group.id ?? String(501 + index),
      dn: group.dn ?? `cn=${group.name},ou=groups,${baseDn}`,
      attributes: structuredClone(group.attributes ?? { cn: [group.name] }),
    });
  });
  const users = (init.users ?? [fakeIdentityDefaults.user]).map((user): DirectoryUser => {
    const source = user.source ?? 0;
    const sourceDn = sources[source]?.baseDn;
    if (sourceDn === undefined) {
      throw new RangeError(`User ${user.username}: no source at position ${source}.`);
    }
    for (const name of user.groups ?? []) {
      if (!groups.has(name)) throw new RangeError(`User ${user.username}: no group ${name}.`);
    }
    return {
      username: user.username,
      password: user.password,
      dn: user.dn ?? `uid=${user.username},ou=people,${sourceDn}`,
      attributes: structuredClone(user.attributes ?? {}),
      groups: [...(user.groups ?? [])],
      source,
    };
  });
  return { sources, users, groups };
}
