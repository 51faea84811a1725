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
 * answers with (SCIM's `Location`). A parametric prefix (`/t/:tenant`) works too: the handler
 * learns the prefix as the request spelled it (`/t/acme`).
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
    const prefix = fastify.prefix;
    // The prefix as this request spells it: a parametric one (`/t/:tenant`) is not its pattern's
    // length. Each segment of the pattern is one of the request's path, as Fastify's router never
    // lets a parameter span a "/" (nor decodes %2F into one); a trailing "/" (`/t/`) is no segment.
    const mount = RegExp(`^(/[^/?#]*){${prefix.match(/\/[^/]/g)?.length ?? 0}}`);
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser("*", (_request, payload, parsed) => parsed(null, payload));
    // Under a prefix or base path every path is the API's, so that an unknown one gets its JSON
    // 404; at the root only /v1/*, so that the application's other routes stay its own.
    const scope = prefix !== "" || handler.basePath !== "" ? "" : "/v1";
    const route = `${handler.basePath}${scope}/*`;
    fastify.all(route, async (request, reply) => {
      const payload = request.body as Readable | undefined;
      const at = mount.exec(request.url)?.[0] ?? "";
      const response = await answerNodeRequest(
        handler,
        request.raw,
        request.url.slice(at.length),
        undefined,
        payload ?? request.raw,
        // Fastify's stand-in logger when its logging is off is silent: never hand it a failure.
        takesFieldsFirst(request.log) ? (request.log as unknown as Logger) : undefined,
        at,
      );
      reply.code(response.status).headers(response.headers);
      if (response.closeConnection) reply.header("connection", "close");
      return reply.send(response.body);
    });
    done();
  };
}
