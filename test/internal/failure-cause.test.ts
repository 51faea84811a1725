import { once } from "node:events";
import { request } from "node:http";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { readFailureCause } from "../../src/internal/failure-cause.ts";

/** A loopback port with nothing listening on it: connecting is refused. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("readFailureCause", () => {
  it("reads fetch's cause below its 'fetch failed': the code and the socket's message", async () => {
    const port = await closedPort();
    const error = await fetch(`http://127.0.0.1:${port}/`).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe("fetch failed");
    expect(readFailureCause(error)).toEqual({
      code: "ECONNREFUSED",
      message: `connect ECONNREFUSED 127.0.0.1:${port}`,
    });
  });

  it("reads a Node http error as it is", async () => {
    const port = await closedPort();
    const outgoing = request(`http://127.0.0.1:${port}/`);
    outgoing.end();
    const [error] = await once(outgoing, "error");
    expect(readFailureCause(error)).toEqual({
      code: "ECONNREFUSED",
      message: `connect ECONNREFUSED 127.0.0.1:${port}`,
    });
  });

  it("keeps the message of an error that says what happened, though it has a cause", () => {
    const error = new Error("GET /v1/ping failed: the Integration API is down", {
      cause: new Error("socket hang up"),
    });
    expect(readFailureCause(error)).toEqual({
      code: undefined,
      message: "GET /v1/ping failed: the Integration API is down",
    });
  });

  it("finds the code further down the chain, and says the code when the message is empty", () => {
    const refused = Object.assign(new AggregateError([], ""), { code: "ECONNREFUSED" });
    expect(readFailureCause(new TypeError("fetch failed", { cause: refused }))).toEqual({
      code: "ECONNREFUSED",
      message: "ECONNREFUSED",
    });
    const socket = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
    expect(readFailureCause(new TypeError("terminated", { cause: socket }))).toEqual({
      code: "UND_ERR_SOCKET",
      message: "terminated",
    });
  });

  it("reads what is not an Error, and ends on a chain of causes that loops", () => {
    expect(readFailureCause("boom")).toEqual({ code: undefined, message: "boom" });
    expect(readFailureCause(undefined)).toEqual({ code: undefined, message: "" });
    const loop = new TypeError("fetch failed");
    (loop as { cause?: unknown }).cause = loop;
    expect(readFailureCause(loop)).toEqual({ code: undefined, message: "fetch failed" });
  });
});
