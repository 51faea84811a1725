import type { IncomingMessage, ServerResponse } from "node:http";
import { errorResponse } from "../../provisioning/errors.ts";
import type { EdgeAnswers, ServedHandler } from "../../provisioning/handler-options.ts";
import { payloadTooLarge } from "../../provisioning/http/body-limit.ts";
import { readNodeRequest, writeNodeResponse } from "../../provisioning/http/node-request.ts";

/**
 * A node:http request listener that is also Express and Connect middleware: when `next` is given,
 * requests outside the Provisioning API's routes go on to it, body unread.
 */
export type NodeHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => void;

/**
 * Serves a Provisioning handler on Node without building a Web Request: the body is read into a
 * Buffer (up to the handler's `bodyLimit`) and handed to the plain-data core.
 *
 * Under Express, mount it with `app.use("/prefix", ...)` and leave `basePath` empty: Express strips
 * the mount path, and the handler learns it (`req.baseUrl`) for the URLs it answers with (SCIM's
 * `Location`). Mount it before any body parser, so that it reads the body as the platform sent
 * it. Behind one, the body the parser left is used: `express.raw()` and `express.text()` lose
 * nothing; after `express.json()` a number is kept as its shortest text when that is exact (a
 * safe integer or a decimal: `12345` gives `"12345"`, but `1.50` gives `"1.5"`), and a body the
 * parser made unreadable (`express.urlencoded()`'s object of strings, an integer past 2^53, a
 * stream read with nothing left) answers 500 and logs once that the API must come first. What
 * the parser rejects itself (bad JSON, its size limit) never reaches this handler: add
 * {@link toNodeErrorHandler} after it. The client address for `allowAddresses` is the socket's,
 * never a forwarded header.
 *
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { toNodeHandler } from "platform-integration/node";
 *
 * createServer(toNodeHandler(handler)).listen(3000);
 * // Express: app.use("/ldap/auth", toNodeHandler(handler));
 * ```
 */
export function toNodeHandler(handler: ServedHandler): NodeHandler {
  return (req, res, next) => {
    const path = req.url ?? "/";
    if (next !== undefined && !mountedHere(req) && !handler.owns(path)) {
      next();
      return;
    }
    readNodeRequest(handler, req, path, (req as { body?: unknown }).body, req, (request) => {
      if (request === undefined) {
        writeNodeResponse(res, handler.edgeAnswers?.bodyTooLarge ?? payloadTooLarge);
        return;
      }
      // Express's mount path: SCIM's Location names it.
      const mountPath = mountPathOf(req);
      if (mountPath !== undefined) request.mountPath = mountPath;
      void handler.handle(request).then((response) => writeNodeResponse(res, response));
    });
  };
}

/**
 * Whether Express mounted the handler under a path (`app.use("/ldap/auth", ...)`): then every
 * request that reaches it is under the API's mount, and an unknown one gets the API's JSON 404.
 */
function mountedHere(req: IncomingMessage): boolean {
  return mountPathOf(req) !== undefined;
}

/** The path Express mounted the handler under (`req.baseUrl`), or undefined at the root. */
function mountPathOf(req: IncomingMessage): string | undefined {
  const baseUrl: unknown = (req as { baseUrl?: unknown }).baseUrl;
  return typeof baseUrl === "string" && baseUrl !== "" ? baseUrl : undefined;
}

/** An Express or Connect error middleware: four parameters, which is how they recognise one. */
export type NodeErrorHandler = (
  error: unknown,
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/** body-parser's refusals as the Provisioning API answers them: a handler's own edgeAnswers win. */
const provisioningAnswers: Omit<EdgeAnswers, "bodyTooLarge"> = {
  invalidJson: errorResponse("invalid_json", "The body is not valid JSON"),
  parserTooLarge: errorResponse(
    "payload_too_large",
    "The body exceeds the size limit of the body parser",
  ),
  unsupportedCharset: errorResponse("unsupported_media_type", "Send the body as UTF-8 JSON"),
  unsupportedEncoding: errorResponse(
    "unsupported_media_type",
    "This Content-Encoding is not supported",
  ),
};

// body-parser's error types (express.json(), raw(), text()), as the handler answers them.
const bodyParserErrors = new Map<string, keyof typeof provisioningAnswers>([
  ["entity.parse.failed", "invalidJson"],
  ["entity.too.large", "parserTooLarge"],
  ["charset.unsupported", "unsupportedCharset"],
  ["encoding.unsupported", "unsupportedEncoding"],
]);

/**
 * Answers what a body parser in front of the Provisioning API rejected (`express.json()`'s bad
 * JSON, its size limit, an unsupported charset or encoding) as the handler answers it (its
 * `edgeAnswers`: SCIM errors for the SCIM handler, the API's JSON errors otherwise), with the
 * right status. Without it, Express's default error handler answers in HTML and logs
 * the error, whose message and `body` can hold the user record's password. Errors of other kinds,
 * and requests outside the API's routes, go on to `next`.
 *
 * @example
 * ```ts
 * app.use(express.json());
 * app.use("/ldap/auth", toNodeHandler(handler), toNodeErrorHandler(handler));
 * ```
 */
export function toNodeErrorHandler(handler: ServedHandler): NodeErrorHandler {
  return (error, req, res, next) => {
    const type =
      typeof error === "object" && error !== null ? Reflect.get(error, "type") : undefined;
    const kind = typeof type === "string" ? bodyParserErrors.get(type) : undefined;
    const response =
      kind === undefined ? undefined : (handler.edgeAnswers ?? provisioningAnswers)[kind];
    if (
      response === undefined ||
      res.headersSent ||
      !(mountedHere(req) || handler.owns(req.url ?? "/"))
    ) {
      next(error);
      return;
    }
    writeNodeResponse(res, response);
  };
}
