// Attack 3: a token that no Authorization header can carry is accepted at construction (the A11
// check refuses whitespace and short tokens, not non-ASCII ones): Node reads header bytes as
// latin1, so an IdP sending the token's UTF-8 bytes is refused 401 for ever, and fetch/undici
// refuse to send it at all. Refusing it at construction is the one report, at once, with its fix.

import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../../src/adapters/node/index.ts";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

describe("a non-ASCII token", () => {
  it("is refused at construction, or a request carrying it is let in", async () => {
    const token = "geheimes-Passwört-für-SCIM";
    let handler: ReturnType<typeof createScimHandler>;
    try {
      handler = createScimHandler({ store: new MemoryUserStore(), token });
    } catch (error) {
      expect(error).toBeInstanceOf(TypeError);
      return;
    }
    const server: Server = createServer(toNodeHandler(handler));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const { port } = server.address() as { port: number };
    // The bytes an IdP sends: the token as UTF-8.
    const status = await new Promise<number>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(
          Buffer.from(
            `GET /scim/v2/Users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
            "utf8",
          ),
        );
      });
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString("latin1");
      });
      socket.on("end", () => resolve(Number(text.split(" ")[1])));
      socket.on("error", reject);
    });
    expect(status).toBe(200);
  });
});
