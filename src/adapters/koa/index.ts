import type { Middleware } from "koa";
import type { Logger } from "../../internal/logger.ts";
import type { ServedHandler } from "../../provisioning/handler-options.ts";
import { answerNodeRequest } from "../../provisioning/http/node-request.ts";

/**
 * A Koa middleware that serves a Provisioning handler; other paths go on to `next`, body unread.
 * It imports nothing from Koa at run time.
 *
 * Under a mount (koa-mount, a router prefix), Koa rewrites the path and `basePath` stays empty
 * (the handler learns koa-mount's `ctx.mountPath` for the URLs it answers with, SCIM's
 * `Location`); otherwise set `basePath`. Use it before any body parser. Behind one, `ctx.request.body` is used
 * when the body was already read: a number in it is kept as its shortest text when that is exact
 * (`12345` gives `"12345"`), and a body the parser made unreadable (a form parser's object of
 * strings, an integer past 2^53, nothing left) answers 500 and logs once that the API must come
 * first.
 *
 * Koa has no logger of its own; where a middleware in front put a per-request one on `ctx.log`
 * (koa-pino-logger, koa-bunyan-logger), the handler reports each request's failures there, with
 * its request id, and on its own `logger` otherwise.
 *
 * @example
 * ```ts
 * import { toKoaMiddleware } from "platform-integration/koa";
 *
 * app.use(toKoaMiddleware(handler));
 * ```
 */
export function toKoaMiddleware(handler: ServedHandler): Middleware {
  return async (ctx, next) => {
    const path = ctx.url;
    // Under koa-mount every path reaching here is the API's: an unknown one gets its JSON 404.
    const mounted = (ctx as { mountPath?: unknown }).mountPath;
    const mountPath = typeof mounted === "string" && mounted !== "" ? mounted : undefined;
    if (mountPath === undefined && !handler.owns(path)) return next();
    const response = await answerNodeRequest(
      handler,
      ctx.req,
      path,
      (ctx.request as { body?: unknown }).body,
      ctx.req,
      // The handler takes it only if it has the four methods.
      (ctx as { log?: Logger }).log,
      mountPath,
    );
    // Body first: Koa turns a null body into 204 unless the status is set after it.
    ctx.body = response.body ?? null;
    ctx.status = response.status;
    ctx.set(response.headers);
    if (response.closeConnection) ctx.set("connection", "close");
  };
}
