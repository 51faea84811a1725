import type { Readable } from "node:stream";
import type { FastifyPluginCallback } from "fastify";
import { type Logger, takesFieldsFirst } from "../../internal/logger.ts";
import type { ServedHandler } from "../../provisioning/handler-options.ts";
import { answerNodeRequest } from "../../provisioning/http/node-request.ts";

/**
 * A Fastify plugin that serves a Provisioning handler. It imports nothing from Fastify at run
 * time, so it works with the Fastify your application brings.
 *
 * The plugin is encapsulated: inside it, the body reaches the handler unparsed (Fastify's JSON
 * parser would answer bad input in its own format and ignore the handler's size limit), and your
 * application's parsers and routes elsewhere are untouched. Register it with `prefix` to serve
 * the API under a path, and leave `basePath` empty: the handler learns the prefix for the URLs it
 * answers with (SCIM's `Location`).
 *
 * When Fastify logs (`logger: true`, logger options or a pino `loggerInstance`), the handler
 * reports each request's failures on `request.log`, with their fields and Fastify's `reqId`;
 * with Fastify's logging off, on the handler's own `logger`.
 *
 * @example
 * ```ts
 * import { toFastifyPlugin } from "platform-integration/fastify";
 *
 * await app.register(toFastifyPlugin(handler), { prefix: "/ldap/auth" });
 * ```
 */
export function toFastifyPlugin(handler: ServedHandler): FastifyPluginCallback {
  return (fastify, _options, done) => {
    const prefixLength = fastify.prefix.length;
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser("*", (_request, payload, parsed) => parsed(null, payload));
    // Under a prefix or base path every path is the API's, so that an unknown one gets its JSON
    // 404; at the root only /v1/*, so that the application's other routes stay its own.
    const scope = prefixLength > 0 || handler.basePath !== "" ? "" : "/v1";
    const route = `${handler.basePath}${scope}/*`;
    fastify.all(route, async (request, reply) => {
      const payload = request.body as Readable | undefined;
      const response = await answerNodeRequest(
        handler,
        request.raw,
        request.url.slice(prefixLength),
        undefined,
        payload ?? request.raw,
        // Fastify's stand-in logger when its logging is off is silent: never hand it a failure.
        takesFieldsFirst(request.log) ? (request.log as unknown as Logger) : undefined,
        fastify.prefix,
      );
      reply.code(response.status).headers(response.headers);
      if (response.closeConnection) reply.header("connection", "close");
      return reply.send(response.body);
    });
    done();
  };
}
