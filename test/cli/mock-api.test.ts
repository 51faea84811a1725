import { X509Certificate } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/cli/command.ts";
import { mockApiCommand } from "../../src/cli/commands/mock-api.ts";
import { run } from "../../src/cli/run.ts";
import { createVersionClient } from "../../src/clients/version/index.ts";
import { createFakeIo } from "../support/fake-io.ts";
import { startMockApi as start } from "./start-mock-api.ts";

const json = { accept: "application/json" };

describe("mock-api", () => {
  it("serves the fake over HTTP on the port it prints, and prints each audit event", async () => {
    const server = await start(["--port", "0", "--current-version", "2.3.9", "--updates", "2"]);
    try {
      expect(server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
      expect(server.stdout()).toContain(`Fake Integration API listening on ${server.baseUrl}`);
      expect(server.stdout()).toContain("running 2.3.9 (release sequence 1), 2 pending updates");

      const current = await fetch(`${server.baseUrl}/version/v1/current`, { headers: json });
      expect(await current.json()).toMatchObject({ version: "2.3.9", release_sequence: 1 });
      const updates = await fetch(`${server.baseUrl}/version/v1/updates`, { headers: json });
      expect(await updates.json()).toMatchObject([
        { version: "2.3.10", release_sequence: 2 },
        { version: "2.3.11", release_sequence: 3 },
      ]);

      const event = await fetch(`${server.baseUrl}/audit/v1/event`, {
        method: "POST",
        headers: { ...json, "content-type": "application/json" },
        body: JSON.stringify({
          name: "user.login",
          title: "User Login Success",
          action: "user.login.success",
          ip_address: "192.30.252.12",
          note: "line\nbreak \u001b[31m",
        }),
      });
      expect(event.status).toBe(201);
      expect(event.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(event.headers.get("content-length")).toBe("0");
      expect(server.stdout()).toMatch(
        /\n\d\d:\d\d:\d\d audit user\.login\.success name=user\.login title="User Login Success" ipAddress=192\.30\.252\.12 note="line\\nbreak \\u001b\[31m"\n/,
      );

      const apply = await fetch(`${server.baseUrl}/version/v1/3`, { method: "PUT", headers: json });
      expect(apply.status).toBe(204);
      expect(server.stdout()).toMatch(
        /update applied: now running 2\.3\.11 \(release sequence 3\)/,
      );
      const missing = await fetch(`${server.baseUrl}/version/v1/2`, { method: "PUT" });
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ error: "update_not_found" });
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(server.stdout()).toMatch(/Stopped\.\n$/);
    await expect(fetch(`${server.baseUrl}/version/v1/current`)).rejects.toThrow();
  });

  it("serves HTTPS with a self-signed certificate for localhost when asked", async () => {
    const server = await start(["--port", "0", "--https"]);
    try {
      expect(server.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(server.stdout()).toContain("self-signed certificate");
      const { status, body, certificate } = await new Promise<{
        status: number | undefined;
        body: string;
        certificate: X509Certificate;
      }>((resolve, reject) => {
        const request = httpsRequest(
          `${server.baseUrl}/version/v1/current`,
          { rejectUnauthorized: false, headers: json },
          (response) => {
            const certificate = new X509Certificate(
              (response.socket as TLSSocket).getPeerCertificate().raw,
            );
            let body = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => {
              body += chunk;
            });
            response.on("end", () => resolve({ status: response.statusCode, body, certificate }));
          },
        );
        request.on("error", reject);
        request.end();
      });
      expect(status).toBe(200);
      expect(JSON.parse(body)).toMatchObject({ version: "1.0.0", release_sequence: 1 });
      expect(certificate.subjectAltName).toContain("IP Address:127.0.0.1");
      expect(certificate.verify(certificate.publicKey)).toBe(true);
      // Without opting out of verification, a client refuses the self-signed certificate.
      await expect(fetch(`${server.baseUrl}/version/v1/current`)).rejects.toThrow();
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it("writes its certificate with --cert-out and prints the path, for the clients' tls.ca", async () => {
    const folder = await mkdtemp(join(tmpdir(), "mock-api-cert-"));
    const file = join(folder, "platform-ca.pem");
    const server = await start(["--port", "0", "--https", "--cert-out", file]);
    try {
      expect(server.stdout()).toContain(`certificate written to ${file}`);
      const ca = await readFile(file, "utf8");
      expect(ca).toMatch(/^-----BEGIN CERTIFICATE-----/);
      const version = createVersionClient({
        api: "integration",
        baseUrl: server.baseUrl,
        tls: { ca },
      });
      expect((await version.current()).version).toBe("1.0.0");
    } finally {
      expect(await server.stop()).toBe(0);
      await rm(folder, { recursive: true, force: true });
    }
  });

  it("exits 1 with a clear message when the port is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const server = await start(["--port", String(port)]);
      expect(await server.exit).toBe(1);
      expect(server.stderr()).toBe(
        `Port ${port} is already in use on 127.0.0.1: choose another with --port (0 picks a free one).\n`,
      );
    } finally {
      blocker.close();
    }
  });

  it("prints its usage for --help and -h through the CLI's shared help, without serving", async () => {
    for (const flag of ["--help", "-h"]) {
      const io = createFakeIo();
      expect(await run(["mock-api", "--port", "0", flag], io)).toBe(0);
      expect(io.out).toBe(mockApiCommand.usage);
    }
    expect(mockApiCommand.usage).toContain("--port <n>");
  });

  it("throws a UsageError for a bad command line", async () => {
    for (const args of [
      ["--port", "http"],
      ["--port", "70000"],
      ["--port"],
      ["--updates", "-1"],
      ["--current-version", " "],
      ["--verbose"],
      ["extra"],
      ["--cert-out", "ca.pem"],
    ]) {
      await expect(start(args), args.join(" ")).rejects.toThrow(UsageError);
    }
  });
});

describe("mock-api: Identity, Status, License and Console APIs", () => {
  const login = (baseUrl: string, username: string, password: string) =>
    fetch(`${baseUrl}/identity/v1/login`, {
      method: "POST",
      headers: { ...json, "content-type": "application/json" },
      body: JSON.stringify({ username, password }),
    });

  it("logs in the default user its --help names, and prints logins without the password", async () => {
    expect(mockApiCommand.usage).toContain('user "bob" with password "password123"');
    const server = await start(["--port", "0"]);
    try {
      expect(server.stdout()).toContain("Identity API users: bob (password password123)");
      const accepted = await login(server.baseUrl, "bob", "password123");
      expect(accepted.status).toBe(200);
      expect(await accepted.json()).toMatchObject({ Username: "bob", Groups: [{ ID: "501" }] });
      expect((await login(server.baseUrl, "bob", "wrong-Pa55")).status).toBe(401);
      expect(server.stdout()).toMatch(/\d\d:\d\d:\d\d login bob accepted\n/);
      expect(server.stdout()).toMatch(/\d\d:\d\d:\d\d login bob refused\n/);
      expect(server.stdout()).not.toContain("wrong-Pa55");

      const status = await fetch(`${server.baseUrl}/status/v1/startup`, {
        method: "PUT",
        headers: { ...json, "content-type": "application/json" },
        body: JSON.stringify({ message: "Importing users", severity: "error" }),
      });
      expect(status.status).toBe(204);
      expect(server.stdout()).toMatch(/start-up status \(error\): "Importing users"\n/);
      const license = await fetch(`${server.baseUrl}/license/v1/field/max_users`, {
        headers: json,
      });
      expect(await license.json()).toEqual({ field: "max_users", value: "100" });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it("replaces the default user with --user name:password, split at the first colon", async () => {
    const server = await start(["--port", "0", "--user", "ann:a:b", "--user", "cy:pw"]);
    try {
      expect(server.stdout()).toContain("Identity API users: ann, cy\n");
      expect((await login(server.baseUrl, "ann", "a:b")).status).toBe(200);
      expect((await login(server.baseUrl, "bob", "password123")).status).toBe(401);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    for (const bad of ["ann", ":pw", "ann:"]) {
      await expect(start(["--user", bad])).rejects.toThrow("--user takes name:password");
    }
  });

  it("serves the license fields given with --license-field, typed", async () => {
    const server = await start([
      "--port",
      "0",
      "--license-field",
      "max_users=25",
      "--license-field",
      "sso=true",
      "--license-field",
      "tier=gold=plus",
    ]);
    try {
      const response = await fetch(`${server.baseUrl}/license/v1/license`, { headers: json });
      const { fields } = (await response.json()) as { fields: unknown[] };
      expect(fields).toEqual([
        expect.objectContaining({ field: "max_users", type: "Integer", value: 25 }),
        expect.objectContaining({ field: "sso", type: "Boolean", value: true }),
        expect.objectContaining({ field: "tier", type: "String", value: "gold=plus" }),
      ]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    await expect(start(["--license-field", "=1"])).rejects.toThrow("name=value");
  });

  it("serves the console options given with --console-option, and names a missing one", async () => {
    const server = await start(["--port", "0", "--console-option", "app.mode=demo=1"]);
    const option = (query: string) => fetch(`${server.baseUrl}/console/v1/option${query}`);
    try {
      const found = await option("?name=app.mode");
      expect([found.status, await found.text()]).toEqual([200, "demo=1"]);
      const unknown = await option("?name=app.other");
      expect(unknown.status).toBe(400);
      expect(await unknown.json()).toMatchObject({
        message: expect.stringMatching(/^The console has no option named "app\.other"/),
      });
      const nameless = await option("");
      expect(await nameless.json()).toMatchObject({
        message: "Pass the name of a console option: ?name=...",
      });
    } finally {
      expect(await server.stop()).toBe(0);
    }
    await expect(start(["--console-option", "novalue"])).rejects.toThrow("name=value");
  });

  it("serves its own certificate as the console's CA under --https", async () => {
    const server = await start(["--port", "0", "--https"]);
    try {
      const pem = await new Promise<string>((resolve, reject) => {
        const request = httpsRequest(
          `${server.baseUrl}/console/v1/option?name=tls.authority.cert`,
          { rejectUnauthorized: false },
          (response) => {
            let body = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => {
              body += chunk;
            });
            response.on("end", () => resolve(body));
          },
        );
        request.on("error", reject);
        request.end();
      });
      expect(new X509Certificate(pem).subjectAltName).toContain("IP Address:127.0.0.1");
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
