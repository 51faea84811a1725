import type { IncomingMessage, ServerResponse } from "node:http";
import { readNodeRequest, writeNodeResponse } from "../internal/node-request.ts";
import { payloadTooLarge } from "../provisioning/errors.ts";
import type { ProvisioningHandler } from "../provisioning/handler.ts";

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
 * the mount path. A body parser in front (`express.json()`, `express.raw()`, `express.text()`)
 * does no harm: when the body was already read, its parsed value is used. That parser answers its
 * own errors (bad JSON, its size limit) in its own format, though: mount the handler before body
 * parsers to keep the API's JSON error bodies. The client address for
 * `allowAddresses` is the socket's, never a forwarded header.
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
export function toNodeHandler(handler: ProvisioningHandler): NodeHandler {
  return (req, res, next) => {
    const path = req.url ?? "/";
    if (next !== undefined && !handler.owns(path)) {
      next();
      return;
    }
    readNodeRequest(handler, req, path, (req as { body?: unknown }).body, req, (request) => {
      if (request === undefined) writeNodeResponse(res, payloadTooLarge);
      else void handler.handle(request).then((response) => writeNodeResponse(res, response));
    });
  };
}
