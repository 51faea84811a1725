/** One endpoint of the fake Integration API: a method, a path pattern and how it answers. */
export interface FakeRoute {
  method: string;
  /** Matched against the pathname; its first capture group, if any, is passed as `segment`. */
  path: RegExp;
  answer(request: Request, segment: string): Response | Promise<Response>;
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
