// The framework adapters hand the framework's per-request logger to the handler, so that the SDK's
// lines about a request carry the framework's request id and keep their fields; real pino,
// real Fastify, real Koa, a store that fails.
import Fastify, { type FastifyServerOptions } from "fastify";
import Koa from "koa";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { toFastifyPlugin } from "../../src/adapters/fastify/index.ts";
import { toKoaMiddleware } from "../../src/adapters/koa/index.ts";
import type { Logger } from "../../src/internal/logger.ts";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type UserPatch,
} from "../../src/provisioning/index.ts";
import { start } from "./http.ts";

class FailingStore extends MemoryUserStore {
  override upsert(_patch: UserPatch): never {
    throw new Error("disk full");
  }
}

type Line = Record<string, unknown>;

/** pino's JSON lines, as an array. */
function collect() {
  const lines: Line[] = [];
  return { lines, stream: { write: (line: string) => lines.push(JSON.parse(line) as Line) } };
}

/** A logger that records what the handler says on it. */
function recorder() {
  const lines: [string, unknown][] = [];
  const logger: Logger = {
    debug: (message, fields) => lines.push([message, fields]),
    info: (message, fields) => lines.push([message, fields]),
    warn: (message, fields) => lines.push([message, fields]),
    error: (message, fields) => lines.push([message, fields]),
  };
  return { lines, logger };
}

/** Serves `listener`, sends one create that the failing store refuses (503), and stops. */
async function createRefused(listener: Parameters<typeof start>[0]): Promise<void> {
  const server = await start(listener);
  try {
    const answer = await fetch(`${server.origin}/v1/user/create`, {
      method: "POST",
      body: '{"uuid":"u1","password":"s3cret"}',
    });
    expect(answer.status).toBe(503);
  } finally {
    await server.close();
  }
}

/** A Fastify app serving a handler on the failing store through the plugin. */
async function fastifyApp(logger: Logger, options: FastifyServerOptions = {}) {
  const app = Fastify(options);
  await app.register(
    toFastifyPlugin(createProvisioningHandler({ store: new FailingStore(), logger })),
  );
  await app.ready();
  return app;
}

describe("the per-request logger", () => {
  it("Fastify: the failure goes to request.log with Fastify's reqId and every field", async () => {
    const { lines, stream } = collect();
    const handlerLog = recorder();
    await createRefused(
      (await fastifyApp(handlerLog.logger, { logger: { level: "info", stream } })).server,
    );
    const incoming = lines.find((line) => line.msg === "incoming request");
    const failure = lines.find((line) => String(line.msg).startsWith("platform-integration:"));
    expect(incoming?.reqId).toEqual(expect.any(String));
    expect(failure).toMatchObject({
      level: 50,
      reqId: incoming?.reqId,
      operation: "create",
      status: 503,
      uuid: "u1",
      error: { name: "Error", message: "disk full" },
    });
    expect(JSON.stringify(lines)).not.toContain("s3cret");
    // The handler's own logger heard nothing of it: one line, in one place.
    expect(handlerLog.lines).toEqual([]);
  });

  it("Fastify: app.log given as the handler's logger keeps its fields too", async () => {
    const { lines, stream } = collect();
    const app = Fastify({ logger: { level: "info", stream } });
    const handler = createProvisioningHandler({ store: new FailingStore(), logger: app.log });
    const answer = await handler.handle({
      method: "POST",
      path: "/v1/user/create",
      headers: {},
      body: new TextEncoder().encode('{"uuid":"u2"}'),
    });
    expect(answer.status).toBe(503);
    expect(lines.at(-1)).toMatchObject({ operation: "create", status: 503, uuid: "u2" });
    await app.close();
  });

  it("Fastify with its logging off: the failure stays on the handler's logger, never silenced", async () => {
    const handlerLog = recorder();
    await createRefused((await fastifyApp(handlerLog.logger)).server);
    expect(handlerLog.lines).toEqual([
      [expect.stringContaining("create answered 503"), expect.objectContaining({ uuid: "u1" })],
    ]);
  });

  it("Koa: the failure goes to ctx.log (koa-pino-logger's) with its request id", async () => {
    const { lines, stream } = collect();
    const root = pino({ level: "info" }, stream);
    const handlerLog = recorder();
    let next = 0;
    const koa = new Koa()
      // What koa-pino-logger does: a child logger per request on ctx.log.
      .use(async (ctx, then) => {
        (ctx as unknown as { log: unknown }).log = root.child({ reqId: `koa-${++next}` });
        await then();
      })
      .use(
        toKoaMiddleware(
          createProvisioningHandler({ store: new FailingStore(), logger: handlerLog.logger }),
        ),
      );
    await createRefused(koa.callback());
    expect(lines).toEqual([
      expect.objectContaining({ reqId: "koa-1", operation: "create", status: 503, uuid: "u1" }),
    ]);
    expect(handlerLog.lines).toEqual([]);
  });

  it("Koa without ctx.log: the handler's logger", async () => {
    const handlerLog = recorder();
    const koa = new Koa().use(
      toKoaMiddleware(
        createProvisioningHandler({ store: new FailingStore(), logger: handlerLog.logger }),
      ),
    );
    await createRefused(koa.callback());
    expect(handlerLog.lines).toHaveLength(1);
  });

  it.each([
    [true, "kept the create of user"],
    [false, "the store refused user"],
  ])(
    "Fastify: a conflict's warning (quarantine %s) goes to request.log with its reqId",
    async (quarantine, text) => {
      const { lines, stream } = collect();
      const handlerLog = recorder();
      const app = Fastify({ logger: { level: "info", stream } });
      const store = new MemoryUserStore({ unique: ["email"] });
      await app.register(
        toFastifyPlugin(
          createProvisioningHandler({ store, quarantine, logger: handlerLog.logger }),
        ),
      );
      await app.ready();
      const server = await start(app.server);
      try {
        for (const uuid of ["u1", "u2"]) {
          await fetch(`${server.origin}/v1/user/create`, {
            method: "POST",
            body: JSON.stringify({ uuid, email: "same@example.com" }),
          });
        }
      } finally {
        await server.close();
      }
      const warning = lines.find((line) => String(line.msg).includes(text));
      expect(warning).toMatchObject({ level: 40, reqId: expect.any(String), uuid: "u2" });
      expect(handlerLog.lines).toEqual([]);
    },
  );
});
