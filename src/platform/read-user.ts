import { readFailureCause } from "../internal/failure-cause.ts";
import { redactUrl } from "../internal/url.ts";
import type { UserRecord } from "../users/user-record.ts";
import { fromWireUser } from "./wire-user.ts";

/**
 * How the platform's side reads a user back from the application, to verify what was stored (the
 * Provisioning API itself has no read endpoint): the conformance checker, the simulator's and the
 * directory sync's `verify`:
 *
 * - a URL template such as `http://127.0.0.1:3000/ldap/auth/v1/user/{uuid}`, in which `{uuid}` is
 *   replaced by the percent-encoded uuid. The application answers 200 with the stored user as a
 *   JSON object in the wire's snake_case names (extra fields allowed), or 404 when there is none.
 *   {@link withReadUserRoute} serves exactly that from any store with `get`;
 * - or a function, for an application in the same process: `(uuid) => store.get(uuid)`.
 *
 * A user the application keeps deactivated (a store with `onDelete: "deactivate"`) reads as
 * deleted, which it is for the platform: a 404, or the user with a `deactivated_at` string (a
 * function's record with `deactivatedAt`), as withReadUserRoute and the bundled stores' `get`
 * give it. The conformance checker counts such users in its clean-up report.
 */
export type ReadUser =
  | string
  | ((uuid: string) => UserRecord | undefined | Promise<UserRecord | undefined>);

/**
 * Reads one user back; rejects with a one-line reason when the read route misbehaves. A user with
 * `deactivatedAt` is one the application keeps deactivated: see {@link isGone}.
 */
export type UserReader = (uuid: string) => Promise<UserRecord | undefined>;

/**
 * Checks a read-user URL template: http(s), with `{uuid}` in it. Throws a TypeError that says
 * what is wrong, so that a mistake is reported once, before anything is sent.
 */
export function checkReadUserTemplate(template: string): string {
  if (!template.includes("{uuid}")) {
    throw new TypeError(
      `The read-user URL needs {uuid} where the uuid goes: ${redactUrl(template)}`,
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(template.replaceAll("{uuid}", "uuid"));
  } catch {}
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    throw new TypeError(`The read-user URL is not an http(s) URL: ${redactUrl(template)}`);
  }
  if (url.username !== "" || url.password !== "") {
    // fetch refuses such a URL, with a message that repeats it, at every user.
    throw new TypeError(
      `The read-user URL must not contain a user name or password (fetch refuses it): ${redactUrl(template)}. Serve the read route without them on a private address, or read users through a function (readUser: (uuid) => ...).`,
    );
  }
  return template;
}

/** The reader for a {@link ReadUser}, each read bounded by `timeoutMs`. */
export function connectUserReader(readUser: ReadUser, { timeoutMs }: { timeoutMs: number }) {
  if (typeof readUser === "function") {
    return (async (uuid) => readUser(uuid)) satisfies UserReader;
  }
  const template = checkReadUserTemplate(readUser);
  return (async (uuid) => {
    const url = template.replaceAll("{uuid}", encodeURIComponent(uuid));
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { headers: { accept: "application/json" }, signal: timeout });
      text = await response.text();
    } catch (error) {
      if (timeout.aborted)
        throw new ReadTimeout(`the read route gave no answer within ${timeoutMs} ms`);
      throw new Error(`the read route gave no answer (${readFailureCause(error).message})`);
    }
    if (response.status === 404) return undefined;
    if (response.status !== 200) {
      throw new Error(`the read route answered ${response.status}, not 200 or 404`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error("the read route answered 200 without a JSON body");
    }
    const user = fromWireUser(json);
    if (user === undefined) {
      throw new Error("the read route answered 200 without a user object with a uuid");
    }
    const deactivatedAt = (json as { deactivated_at?: unknown }).deactivated_at;
    if (typeof deactivatedAt === "string") user.deactivatedAt = deactivatedAt;
    return user;
  }) satisfies UserReader;
}

class ReadTimeout extends Error {}

/** Whether a {@link UserReader} rejected because the read route did not answer in time. */
export function isReadTimeout(error: unknown): boolean {
  return error instanceof ReadTimeout;
}

/**
 * Whether a user read back is deleted as the platform sees it: absent, or kept deactivated (a
 * store with `onDelete: "deactivate"`). The one rule every reader of users applies.
 */
export function isGone(user: UserRecord | undefined): user is undefined {
  return user === undefined || user.deactivatedAt !== undefined;
}
