// The fakes' shared HTTP pieces, record-free: a route table keyed by msw-style paths (so that
// the msw handlers and the fakes' routers are built from the same list), the answers the
// platform's APIs give (JSON, `{ error, message }`, text/plain), injected failures and the
// in-process `fetch`. Only the fakes import this module (dependency-cruiser: fakes-only-for-tests).

/** The methods the fakes answer. */
export type FakeMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** One endpoint of a fake: a method, an msw-style path and how it answers. */
export interface FakeRoute {
  method: FakeMethod;
  /**
   * The path, msw-style: `/items/:name`. Its one `:parameter`, if any, matches one
   * path segment, passed (still percent-encoded) to `answer` as `segment`.
   */
  path: string;
  answer(request: Request, segment: string): Response | Promise<Response>;
}

const compiled = new Map<string, RegExp>();

/**
 * The segment a route's path captures from `pathname` ("" when it has no parameter), or
 * undefined when the path does not match.
 */
export function matchPath(path: string, pathname: string): string | undefined {
  let pattern = compiled.get(path);
  if (pattern === undefined) {
    const source = path
      .split("/")
      .map((part) =>
        part.startsWith(":") ? "([^/]+)" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
      )
      .join("/");
    pattern = new RegExp(`^${source}$`);
    compiled.set(path, pattern);
  }
  const match = pattern.exec(pathname);
  return match === null ? undefined : (match[1] ?? "");
}

/** The routes whose path matches `pathname`, each with its segment. */
export function matchRoutes<Route extends { path: string }>(
  routes: readonly Route[],
  pathname: string,
): { route: Route; segment: string }[] {
  return routes.flatMap((route) => {
    const segment = matchPath(route.path, pathname);
    return segment === undefined ? [] : [{ route, segment }];
  });
}

/**
 * How an injected failure answers: an HTTP error status (with optional headers, e.g. Retry-After),
 * or a network error (the connection drops before any answer).
 */
export type FakeFailure =
  | { status: number; headers?: Record<string, string> }
  | { networkError: true };

/** The failures `failNext()` queued, taken one per call to a known route. */
export interface FailureQueue {
  /** Queues `count` failures; throws a RangeError for a count or status out of range. */
  push(count: number, failure: FakeFailure): void;
  /** The failure for this call, if any is queued. */
  take(): FakeFailure | undefined;
  readonly size: number;
  clear(): void;
}

/** An empty {@link FailureQueue}. */
export function createFailureQueue(): FailureQueue {
  let queued: { failure: FakeFailure; remaining: number }[] = [];
  return {
    push(count, failure) {
      if (!Number.isSafeInteger(count) || count < 1) {
        throw new RangeError(`failNext: count must be a positive integer, got ${count}.`);
      }
      if (
        !("networkError" in failure) &&
        !(Number.isInteger(failure.status) && failure.status >= 400 && failure.status <= 599)
      ) {
        throw new RangeError(
          `failNext: status must be an error status (400 to 599), got ${failure.status}.`,
        );
      }
      queued.push({ failure, remaining: count });
    },
    take() {
      const next = queued[0];
      if (next === undefined) return undefined;
      next.remaining -= 1;
      if (next.remaining === 0) queued.shift();
      return next.failure;
    },
    get size() {
      return queued.length;
    },
    clear() {
      queued = [];
    },
  };
}

/**
 * A drop-in `fetch` over a fake's `respond`: an injected network error (`Response.error()`)
 * rejects with a `TypeError`, as `fetch` does.
 */
export function fetchThrough(
  respond: (request: Request) => Promise<Response>,
): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const response = await respond(new Request(input, init));
    if (response.type === "error") {
      throw new TypeError("fetch failed", {
        cause: new Error("A network error was injected with failNext()."),
      });
    }
    return response;
  };
}

/** A JSON answer, `application/json` unless `headers` names another content type. */
export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** The fake's error answer, `{ error, message }`, for what the platform documents no body of. */
export function jsonError(
  status: number,
  error: string,
  message: string,
  headers?: Record<string, string>,
): Response {
  return json(status, { error, message }, headers);
}

/** A text/plain answer, as the platform gives for exists, status, audit and console options. */
export function text(status: number, body: string): Response {
  return new Response(status === 204 ? null : body, {
    status,
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "content-length": String(new TextEncoder().encode(body).length),
    },
  });
}

/**
 * Reads a JSON object body, or the 400 answer to give instead: `invalid_json`, or `notObject`'s
 * error when the JSON is not an object. JSON.parse keeps a `__proto__` key as a plain own
 * property, so nothing read here can reach a prototype.
 */
export async function readJsonObjectBody(
  request: Request,
  notObject = { error: "invalid_body", message: "The body must be a JSON object." },
): Promise<Record<string, unknown> | Response> {
  let body: unknown;
  try {
    body = JSON.parse(await request.text());
  } catch {
    return jsonError(400, "invalid_json", "The body is not valid JSON.");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return jsonError(400, notObject.error, notObject.message);
  }
  return body as Record<string, unknown>;
}

/** A captured path segment, percent-decoded; a malformed escape is kept as sent. */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
