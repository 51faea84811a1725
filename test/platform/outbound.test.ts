// The platform side's one outbound layer, held by every caller of it: the two clients of a
// Provisioning API, the read route's reader and doctor's probes. Each rule is asserted for each
// caller, so that a rule applied to one caller and not another fails here.
import { once } from "node:events";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { checkProvisionerPing, checkReadRoute } from "../../src/cli/doctor/api.ts";
import { run } from "../../src/cli/run.ts";
import { connectOverNodeHttp } from "../../src/platform/node-http-client.ts";
import {
  checkProvisioningUrl,
  describeFailure,
  exchange,
  maxUserAnswerBytes,
} from "../../src/platform/outbound.ts";
import { connectProvisioning } from "../../src/platform/provisioning-api-client.ts";
import { connectUserReader } from "../../src/platform/read-user.ts";
import { createFakeIo } from "../support/fake-io.ts";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A server whose every path redirects to /moved, counting the requests /moved receives. */
async function redirecting(status: number) {
  const reached = { moved: 0 };
  const url = await serve(async (request, response) => {
    for await (const _ of request);
    if (request.url === "/moved") {
      reached.moved++;
      return void response.writeHead(request.method === "GET" ? 404 : 204).end();
    }
    response.writeHead(status, { location: "/moved" }).end();
  });
  return { url, reached };
}

const probe = (timeoutMs = 5_000) => ({ timeoutMs, signal: new AbortController().signal });

describe("redirects are answers, never followed, by every caller", () => {
  // Catches a caller left on fetch's default redirect: "follow" (all but the Node client were).
  it.each([
    [
      "connectProvisioning (fetch)",
      (url: string) => connectProvisioning(url, { timeoutMs: 5_000 }),
    ],
    ["connectOverNodeHttp", (url: string) => connectOverNodeHttp(url, { timeoutMs: 5_000 })],
  ])("%s answers the 307 itself", async (_, connect) => {
    const app = await redirecting(307);
    const client = connect(app.url) as ReturnType<typeof connectProvisioning> & { close?(): void };
    try {
      const answer = await client({ method: "POST", path: "/v1/user/create", body: "{}" });
      expect(answer.status).toBe(307);
      expect(app.reached.moved).toBe(0);
    } finally {
      client.close?.();
    }
  });

  it("the read route's reader reports the redirect", async () => {
    const app = await redirecting(302);
    const read = connectUserReader(`${app.url}/users/{uuid}`, { timeoutMs: 5_000 });
    await expect(read("u1")).rejects.toThrow("the read route answered 302, not 200 or 404");
    expect(app.reached.moved).toBe(0);
  });

  it("doctor's read-route probe reports the redirect, not the 404 behind it", async () => {
    const app = await redirecting(302);
    const check = await checkReadRoute(`${app.url}/users/{uuid}`, probe());
    expect(check.status).toBe("fail");
    expect(check.summary).toMatch(/answered 302, not 404$/);
    expect(app.reached.moved).toBe(0);
  });
});

describe("the answer's size cap, for the callers the clients' test does not cover", () => {
  /** Answers 200 with `bytes` of a JSON string, written as the reader takes it. */
  async function largeUser(bytes: number) {
    const sent = { finished: false };
    const url = await serve(async (_request, response) => {
      // One listener for the whole answer: a new one per chunk would pile up on the response.
      const closed = once(response, "close");
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"uuid":"u1","first_name":"');
      const chunk = "x".repeat(64 * 1024);
      for (let written = 0; written < bytes && !response.destroyed; written += chunk.length) {
        if (!response.write(chunk)) {
          await Promise.race([once(response, "drain"), closed]);
        }
      }
      if (response.destroyed) return;
      sent.finished = true;
      response.end('"}');
    });
    return { url, sent };
  }

  // Catches the reader that read the answer whole (response.text()), as it did.
  it("the read route's reader stops at maxUserAnswerBytes and says so", async () => {
    const app = await largeUser(32 * maxUserAnswerBytes);
    const read = connectUserReader(`${app.url}/users/{uuid}`, { timeoutMs: 30_000 });
    await expect(read("u1")).rejects.toThrow(
      `the read route answered 200 with a body longer than ${maxUserAnswerBytes} bytes, cut off there`,
    );
    expect(app.sent.finished).toBe(false);
  });

  it("the read route's reader reads a large user within the cap whole", async () => {
    const app = await largeUser(maxUserAnswerBytes - 128 * 1024);
    const read = connectUserReader(`${app.url}/users/{uuid}`, { timeoutMs: 30_000 });
    await expect(read("u1")).resolves.toMatchObject({ uuid: "u1" });
  });

  it("doctor's read-route probe stops reading a runaway answer", async () => {
    const app = await largeUser(32 * maxUserAnswerBytes);
    const check = await checkReadRoute(`${app.url}/users/{uuid}`, probe(30_000));
    expect(check.summary).toMatch(/answered 200, not 404$/);
    expect(app.sent.finished).toBe(false);
  });
});

describe("time-outs, said the same way by every caller", () => {
  it("both clients answer `no answer within N ms` with timedOut", async () => {
    const url = await serve(() => undefined);
    const overFetch = connectProvisioning(url, { timeoutMs: 50 });
    const overNode = connectOverNodeHttp(url, { timeoutMs: 50 });
    try {
      for (const client of [overFetch, overNode]) {
        await expect(client({ method: "GET", path: "/v1/ping" })).resolves.toMatchObject({
          error: "no answer within 50 ms",
          timedOut: true,
        });
      }
    } finally {
      overNode.close();
    }
  });

  it("the read route's reader and doctor's probes say the same", async () => {
    const url = await serve(() => undefined);
    const read = connectUserReader(`${url}/users/{uuid}`, { timeoutMs: 50 });
    await expect(read("u1")).rejects.toThrow("the read route gave no answer within 50 ms");
    expect((await checkReadRoute(`${url}/users/{uuid}`, probe(50))).summary).toMatch(
      /failed: no answer within 50 ms$/,
    );
    expect((await checkProvisionerPing(url, probe(50))).summary).toBe(
      `GET ${url}/v1/ping: no answer within 50 ms`,
    );
  });
});

describe("checkProvisioningUrl: one rule for the clients, the CLI and doctor", () => {
  const refused = [
    ["http://user:secret@127.0.0.1:1", /must not contain a user name or password/],
    ["http://127.0.0.1:1/base?token=secret", /must not have a query or fragment/],
    ["ftp://127.0.0.1:1", /must be an http\(s\) URL, not ftp:/],
  ] as const;

  it.each(refused)("the clients refuse %s at once", (url, reason) => {
    expect(() => checkProvisioningUrl(url)).toThrow(reason);
    expect(() => connectProvisioning(url, { timeoutMs: 1 })).toThrow(reason);
    expect(() => connectOverNodeHttp(url, { timeoutMs: 1 })).toThrow(reason);
  });

  // Catches a command that checks the scheme only, and a message that repeats the password
  // (doctor's did both).
  it.each(refused)(
    "simulate and doctor refuse %s with status 2, never showing a secret",
    async (url) => {
      for (const args of [
        ["simulate", url, "--users", "1"],
        ["doctor", "--provisioner", url],
      ]) {
        const io = createFakeIo();
        io.env = {};
        expect(await run(args, io), args.join(" ")).toBe(2);
        expect(io.err).not.toContain("secret");
      }
    },
  );

  it("doctor's ping names the URL the client calls, base path normalized", async () => {
    const url = await serve((_request, response) => response.writeHead(204).end());
    const check = await checkProvisionerPing(`${url}/ldap/auth//`, probe());
    expect(check.summary).toBe(`GET ${url}/ldap/auth/v1/ping answered 204`);
  });
});

describe("describeFailure", () => {
  const certificate = Object.assign(new Error("self-signed certificate"), {
    code: "DEPTH_ZERO_SELF_SIGNED_CERT",
  });

  it("makes a certificate problem fatal only where the caller names its fix", () => {
    const options = { aborted: false, timedOut: false, timeoutMs: 1 };
    expect(describeFailure(certificate, { ...options, certificateFix: "trust it" })).toEqual({
      error: "self-signed certificate: trust it",
      fatal: true,
    });
    expect(describeFailure(certificate, options)).toEqual({ error: "self-signed certificate" });
  });

  it("tells the caller's abort from the time-out", () => {
    expect(
      describeFailure(new Error("x"), { aborted: true, timedOut: false, timeoutMs: 9 }),
    ).toEqual({
      error: "aborted",
    });
    expect(
      describeFailure(new Error("x"), { aborted: true, timedOut: true, timeoutMs: 9 }),
    ).toEqual({
      error: "no answer within 9 ms",
      timedOut: true,
    });
  });

  it("exchange answers the caller's abort as aborted, without a time-out flag", async () => {
    const url = await serve(() => undefined);
    const answer = await exchange(
      fetch,
      { url, method: "GET" },
      { timeoutMs: 60_000, maxBytes: 1, signal: AbortSignal.abort() },
    );
    expect(answer).toEqual({ error: "aborted", durationMs: expect.any(Number) });
  });
});
