/**
 * The one place URLs are checked (by the WHATWG parser: absolute, http(s), no credentials),
 * base URLs normalized and joined, trailing slashes trimmed, and URLs redacted for messages: the
 * Integration API clients, the msw handlers, the platform's clients of a Provisioning API, the read
 * route and the CLI all read a URL the same way.
 */

/**
 * An http(s) base URL, normalized for {@link joinUrl}: its origin and path, without trailing
 * slashes (`https://host/prefix//` is `https://host/prefix`).
 *
 * @throws TypeError saying what is wrong (not absolute, not http(s), with credentials, with a
 * query or fragment); the message never repeats a password.
 */
export function normalizeBaseUrl(value: string | URL): string {
  const url = parseHttpUrl(value);
  if (url.search !== "" || url.hash !== "") {
    throw new TypeError(`must not have a query or fragment: ${redactUrl(url.href)}`);
  }
  return `${url.origin}${trimTrailingSlashes(url.pathname)}`;
}

/** What makes a URL unusable for a request of this package: see {@link httpUrlProblem}. */
export type HttpUrlProblem = "not absolute" | "not http" | "credentials";

/**
 * What is wrong with `value` as the URL of a request, by the WHATWG URL parser: not an absolute
 * URL, not http(s), or carrying a user name or password (fetch refuses such a URL, with a message
 * that would repeat the password); undefined when it is usable. The one check of every URL the
 * package sends to: base URLs, the read route's template, the CLI's and doctor's URLs.
 */
export function httpUrlProblem(value: string | URL): HttpUrlProblem | undefined {
  let url: URL;
  try {
    url = new URL(String(value).trim());
  } catch {
    return "not absolute";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "not http";
  return url.username !== "" || url.password !== "" ? "credentials" : undefined;
}

/**
 * `value` parsed, when {@link httpUrlProblem} finds nothing wrong with it.
 *
 * @throws TypeError saying what is wrong ("is not an absolute URL: …", "must be an http(s) URL,
 * not ftp:", "must not contain a user name or password: …"), for the caller to prefix with what
 * the URL is; the message never repeats a password.
 */
export function parseHttpUrl(value: string | URL): URL {
  const text = String(value).trim();
  const problem = httpUrlProblem(text);
  if (problem === "not absolute") throw new TypeError(`is not an absolute URL: ${redactUrl(text)}`);
  const url = new URL(text);
  if (problem === "not http") throw new TypeError(`must be an http(s) URL, not ${url.protocol}`);
  if (problem === "credentials") {
    throw new TypeError(`must not contain a user name or password: ${redactUrl(url.href)}`);
  }
  return url;
}

/**
 * `value` without the slashes it ends with (`/ldap/auth//` is `/ldap/auth`, `/` is empty): the one
 * trimming of base URLs, base paths and the provisioner URL. A loop rather than `/\/+$/`, whose
 * backtracking is quadratic on a long run of slashes followed by something else.
 */
export function trimTrailingSlashes(value: string): string {
  let end = value.length;
  while (value[end - 1] === "/") end--;
  return value.slice(0, end);
}

/**
 * A base URL of one of the platform's APIs (the Integration API, the newer in-cluster SDK service,
 * the admin console), normalized by {@link normalizeBaseUrl}: scheme, host and port, without a
 * path. The platform gives its APIs no path (PLATFORM_INTEGRATIONAPI is an origin), and the
 * endpoints' paths (`/version/v1/...`) start at the root, so a path here is an endpoint's URL
 * given as the base: refused at once rather than answered 404 on every call. A Provisioning API
 * base (the application's) may carry a path and uses {@link normalizeBaseUrl}.
 *
 * @throws TypeError as {@link normalizeBaseUrl} does, or naming the path and the origin to use.
 */
export function normalizeApiBaseUrl(value: string | URL): string {
  const base = normalizeBaseUrl(value);
  const { origin } = new URL(base);
  if (base !== origin) {
    throw new TypeError(
      `must be the API's scheme, host and port without a path (the platform's APIs have none): got ${base}, use ${origin}`,
    );
  }
  return base;
}

/** `path` (which starts with `/`) under a base from {@link normalizeBaseUrl}. */
export function joinUrl(base: string, path: string): string {
  return `${base}${path}`;
}

/**
 * `url` as every message and error field shows it: without its user name and password, and
 * without its query and fragment, which carry tokens as often (`?token=...`): `?…` or `#…` says
 * that one was there. The one home of this rule: wherever a URL enters a message, it goes through
 * here.
 *
 * Read as text, conservatively, never through a URL parser: a parser may accept a URL whose
 * secret it puts in the path (`http://svc:80/pass@host` has the host `svc:80` and the path
 * `/pass@host`), and refuse one whose password holds `/`, `?` or `#`. Tabs and newlines are
 * dropped and leading spaces skipped, as browsers and fetch do. Everything up to the last `@`
 * after the scheme goes; when a `/`, `\`, `?` or `#` comes before that `@` (a password holding
 * one, or a path or query holding an `@`: the text cannot tell), what went is marked `…@`.
 */
export function redactUrl(url: string): string {
  const dropped = String(url).replace(/[\t\n\r]/g, "");
  // Leading C0 controls and spaces are skipped, as fetch skips them.
  let start = 0;
  while (start < dropped.length && dropped.charCodeAt(start) <= 0x20) start++;
  const text = dropped.slice(start);
  const scheme =
    /^([a-z][a-z\d+.-]*:[\\/]*)/i.exec(text) ?? /([a-z][a-z\d+.-]*:[\\/]{2,})/i.exec(text);
  const head = scheme ? `${text.slice(0, scheme.index)}${scheme[1]}` : "";
  const rest = scheme ? text.slice(scheme.index + scheme[0].length) : text;
  const at = scheme ? rest.lastIndexOf("@") : -1;
  let shown = rest;
  if (at !== -1) {
    const end = rest.search(/[\\/?#]/);
    shown = end === -1 || at < end ? rest.slice(at + 1) : `…@${rest.slice(at + 1)}`;
  }
  const cut = shown.search(/[?#]/);
  return `${head}${cut === -1 ? shown : `${shown.slice(0, cut + 1)}…`}`;
}

/**
 * A path segment for a name the caller chose (a username, a license field). `.` and `..` are
 * refused: URLs resolve them (even percent-encoded), so `user("..")` would call another endpoint.
 *
 * @throws TypeError when `value` is not a non-empty string, RangeError for `.` and `..`.
 */
export function pathSegment(what: string, value: unknown): string {
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`${what} must be a non-empty string, got ${describe(value)}.`);
  }
  if (value === "." || value === "..") {
    throw new RangeError(`${what} cannot be "${value}": a URL path would resolve it.`);
  }
  return encodeURIComponent(value);
}

function describe(value: unknown): string {
  return typeof value === "string" ? "an empty string" : typeof value;
}
