import type { X509Certificate } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node/index.ts";
import { doctorCommand } from "../../src/cli/commands/doctor.ts";
import { mockApiCommand } from "../../src/cli/commands/mock-api.ts";
import type { CheckResult } from "../../src/cli/doctor/check.ts";
import { run } from "../../src/cli/run.ts";
import { createSelfSignedCertificate } from "../../src/cli/self-signed-certificate.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../src/provisioning/index.ts";
import { createFakeIo } from "../support/fake-io.ts";
import { startMockApi as startAnyMockApi } from "./start-mock-api.ts";

/** `platform-integration mock-api` itself, on a free port; resolves with its URL. */
async function startMockApi(args: string[]) {
  const controller = new AbortController();
  const io = createFakeIo({ signal: controller.signal });
  const exit = mockApiCommand.run(["--port", "0", ...args], io);
  for (let tries = 0; tries < 200; tries++) {
    const url = /export PLATFORM_INTEGRATIONAPI=(\S+)/.exec(io.out)?.[1];
    if (url !== undefined) {
      return {
        url,
        output: () => io.out,
        stop: async () => {
          controller.abort();
          await exit;
        },
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`mock-api did not start: ${io.err}`);
}

async function doctor(args: string[], env: Record<string, string | undefined>) {
  const io = createFakeIo();
  io.env = env;
  const status = await run(["doctor", ...args], io);
  return { status, out: io.out, err: io.err };
}

async function doctorJson(args: string[], env: Record<string, string | undefined>) {
  const { status, out, err } = await doctor(["--json", ...args], env);
  const report = JSON.parse(out) as { passed: boolean; checks: CheckResult[] };
  const check = (id: string) => {
    const found = report.checks.find((each) => each.id === id);
    if (found === undefined) throw new Error(`no ${id} check in ${out}`);
    return found;
  };
  return { status, report, check, err };
}

/** The certificate a TLS server presents, fetched independently of the doctor. */
function presentedCertificate(url: string): Promise<X509Certificate> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: hostname, port: Number(port), rejectUnauthorized: false },
      () => {
        const certificate = socket.getPeerX509Certificate();
        socket.destroy();
        if (certificate) resolve(certificate);
        else reject(new Error("no certificate"));
      },
    );
    socket.once("error", reject);
  });
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    }),
  );
}

const variable = "PLATFORM_INTEGRATIONAPI";
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "doctor-test-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("doctor against mock-api over HTTP", () => {
  let api: Awaited<ReturnType<typeof startMockApi>>;
  beforeAll(async () => {
    api = await startMockApi(["--current-version", "4.2.0", "--updates", "2"]);
  });
  afterAll(() => api.stop());

  it("passes every check, prints one JSON document on stdout and its progress on stderr", async () => {
    const { status, report, check, err } = await doctorJson([], { [variable]: api.url });
    expect(status).toBe(0);
    expect(report.passed).toBe(true);
    expect(report.checks.map((each) => [each.id, each.status])).toEqual([
      ["base-url", "pass"],
      ["dns", "pass"],
      ["tcp", "pass"],
      ["tls", "skip"],
      ["version", "pass"],
      ["clock", "pass"],
      ["api", "pass"],
    ]);
    expect(check("api").summary).toMatch(
      /^the platform's Integration API .*; serves current version, updates, apply, audit.*; not .*custom metrics/,
    );
    expect(check("version").summary).toMatch(
      /^4\.2\.0 \(release sequence 1, .*updates: 2 pending$/,
    );
    expect(check("clock").details?.skewMs).toEqual(expect.any(Number));
    expect(Math.abs(check("clock").details?.skewMs as number)).toBeLessThan(5_000);
    expect(err).toMatch(/^doctor: reading the platform API's URL…\n/);
    expect(err).toContain("doctor: calling the Version API…\n");
  });

  it("writes one labelled audit event with --audit-test-event", async () => {
    const before = api.output().split("audit platform-integration.doctor.test").length;
    const { status, check } = await doctorJson(["--audit-test-event"], { [variable]: api.url });
    expect(status).toBe(0);
    expect(check("audit").status).toBe("pass");
    const after = api.output().split("audit platform-integration.doctor.test").length;
    expect(after - before).toBe(1);
    expect(api.output()).toMatch(/title="Test event from platform-integration doctor"/);
    expect(api.output()).toMatch(/description=".*no user acted\."/);
  });

  it("prints a table with one fix line per failure, and exits 1", async () => {
    const { status, out } = await doctor([], { [variable]: `${api.url}/wrong` });
    expect(status).toBe(1);
    expect(out).toMatch(/^CHECK +RESULT +FOUND\n/);
    // The table wraps its cells within 80 columns (the CLI's shared table), never cutting them.
    // A path is refused by the clients' own rule, before any request.
    expect(out.replace(/\s+/g, " ")).toMatch(
      /PLATFORM_INTEGRATIONAPI is set FAIL PLATFORM_INTEGRATIONAPI must be the API's scheme, host and port without a path .*got http:\/\/\S*\/wrong, use http:\/\/127\.0\.0\.1:\d+ /,
    );
    const fixes = out.split("\n").filter((line) => /^(FAIL|WARN) /.test(line));
    expect(fixes).toEqual([
      "FAIL base-url: PLATFORM_INTEGRATIONAPI must be an absolute http(s) URL such as https://10.0.0.2:9880, without a user name or password, and without a path (the Integration API's root).",
    ]);
    expect(out).toMatch(/\n1 check failed\.\n$/);
  });

  it("takes --base-url over the environment and names it in the fix", async () => {
    const { status, check } = await doctorJson(["--base-url", `${api.url}/x/`], {});
    expect(status).toBe(1);
    expect(check("base-url").title).toBe("--base-url is valid");
    expect(check("base-url").fix).toMatch(/^--base-url must be an absolute .* without a path/);
  });
});

describe("doctor against mock-api over HTTPS", () => {
  let api: Awaited<ReturnType<typeof startMockApi>>;
  let certificate: X509Certificate;
  beforeAll(async () => {
    api = await startMockApi(["--https"]);
    certificate = await presentedCertificate(api.url);
  });
  afterAll(() => api.stop());

  it("shows the certificate and fails, naming the option that trusts it", async () => {
    const { status, check } = await doctorJson([], { [variable]: api.url });
    expect(status).toBe(1);
    const tls = check("tls");
    expect(tls.status).toBe("fail");
    expect(tls.details?.certificate).toMatchObject({
      subject: "CN=localhost",
      issuer: "CN=localhost",
      selfSigned: true,
      fingerprint256: certificate.fingerprint256,
      validTo: new Date(certificate.validTo).toISOString(),
      pem: certificate.toString(),
    });
    expect(tls.summary).toContain(
      `self-signed CN=localhost (SHA-256 ${certificate.fingerprint256}`,
    );
    expect(tls.fix).toMatch(/tls: \{ ca: <its PEM> \}.*tls: \{ rejectUnauthorized: false \}/);
    expect(check("version")).toMatchObject({
      status: "skip",
      summary: "skipped: the API is not reachable",
    });
  });

  it("prints the fingerprint and paths in one piece when piped, never wrapped mid-token", async () => {
    const { out } = await doctor([], { [variable]: api.url });
    const line = out.split("\n").find((each) => each.includes("SHA-256"));
    expect(line).toContain(`SHA-256 ${certificate.fingerprint256}`);
  });

  it("passes with --ca holding the certificate, and names the option", async () => {
    const file = join(folder, "platform-ca.pem");
    await writeFile(file, certificate.toString());
    const { status, check } = await doctorJson(["--ca", file], { [variable]: api.url });
    expect(status).toBe(0);
    expect(check("tls").summary).toContain(
      `trusted by tls: { ca: readFileSync("${file}", "utf8") }`,
    );
    expect(check("version").status).toBe("pass");
  });

  it("fails with a wrong CA, saying so", async () => {
    const file = join(folder, "other-ca.pem");
    await writeFile(file, (await createSelfSignedCertificate()).cert);
    const { status, check } = await doctorJson(["--ca", file], { [variable]: api.url });
    expect(status).toBe(1);
    expect(check("tls").status).toBe("fail");
    expect(check("tls").summary).toContain(`with --ca ${file}: not trusted`);
    expect(check("version").status).toBe("skip");
  });

  it("warns with --insecure and goes on to the Version API", async () => {
    const { status, check } = await doctorJson(["--insecure"], { [variable]: api.url });
    expect(status).toBe(0);
    expect(check("tls").status).toBe("warn");
    expect(check("tls").summary).toContain("NOT verified (--insecure");
    expect(check("tls").fix).toMatch(/^Verify instead.*tls: \{ ca: <its PEM> \}/);
    expect(check("version").status).toBe("pass");
  });

  it("checks the certificate against the host name in the URL", async () => {
    const { check } = await doctorJson([], {
      [variable]: api.url.replace("127.0.0.1", "localhost"),
    });
    expect(check("dns").summary).toMatch(/^localhost resolves to /);
    expect(check("tls").status).toBe("fail");
  });
});

describe("doctor when the API cannot be reached", () => {
  it("reports a closed port once, and skips what depends on it", async () => {
    const server = createServer();
    const url = await listen(server);
    await new Promise((resolve) => server.close(resolve));
    const { status, check, report } = await doctorJson([], { [variable]: url });
    expect(status).toBe(1);
    expect(check("tcp")).toMatchObject({ status: "fail" });
    expect(check("tcp").summary).toMatch(/refused: nothing listens there$/);
    expect(check("tcp").fix).toMatch(/^Check the port in the URL/);
    expect(report.checks.filter((each) => each.status === "fail")).toHaveLength(1);
    expect(check("version").status).toBe("skip");
  });

  it("reports a host name that does not resolve", async () => {
    const { status, check } = await doctorJson([], {
      [variable]: "http://doctor-test.invalid:9880",
    });
    expect(status).toBe(1);
    expect(check("dns").status).toBe("fail");
    expect(check("dns").summary).toMatch(/^doctor-test\.invalid does not resolve/);
    expect(check("tcp").status).toBe("skip");
  });

  it.each([
    [undefined, /^Set PLATFORM_INTEGRATIONAPI to the Integration API's URL/],
    ["", /^Set PLATFORM_INTEGRATIONAPI/],
    ["127.0.0.1:9880", /must be an absolute http\(s\) URL/],
    ["ftp://host", /must be an absolute http\(s\) URL/],
    ["http://user:secret@host:9880", /without a user name or password/],
  ])("fails on PLATFORM_INTEGRATIONAPI=%s with its fix", async (value, fix) => {
    const { status, check, report } = await doctorJson([], { [variable]: value });
    expect(status).toBe(1);
    expect(check("base-url").status).toBe("fail");
    expect(check("base-url").fix).toMatch(fix);
    expect(JSON.stringify(report)).not.toContain("secret");
  });
});

describe("doctor's clock check", () => {
  it("says the clocks agree when they do to the second", async () => {
    const server = createServer((_request, response) => {
      // The header counts whole seconds: half a second ahead, its rounding centres on now.
      response.setHeader("date", new Date(Date.now() + 500).toUTCString());
      response.writeHead(404, { "content-type": "application/json" }).end("{}");
    });
    const url = await listen(server);
    try {
      const { check } = await doctorJson([], { [variable]: url });
      expect(check("clock").summary).toMatch(
        /^this machine's clock agrees with the API's to the second/,
      );
    } finally {
      server.close();
    }
  });

  it.each([
    [30_000, "warn", /(29|30|31) s behind the API/],
    [-600_000, "fail", /(599|600|601) s ahead of the API/],
  ])("compares the Date header (API off by %i ms): %s", async (offsetMs, expected, text) => {
    const server = createServer((_request, response) => {
      response.setHeader("date", new Date(Date.now() + offsetMs).toUTCString());
      response.writeHead(404, { "content-type": "application/json" }).end("{}");
    });
    const url = await listen(server);
    try {
      const { check } = await doctorJson([], { [variable]: url });
      expect(check("clock").status).toBe(expected);
      expect(check("clock").summary).toMatch(text);
      expect(check("clock").fix).toMatch(/^Synchronise this machine's clock/);
    } finally {
      server.close();
    }
  });
});

describe("doctor's Provisioning API checks", () => {
  let app: Server;
  let appUrl: string;
  let api: Awaited<ReturnType<typeof startMockApi>>;
  beforeAll(async () => {
    const handler = createProvisioningHandler({
      store: new MemoryUserStore(),
      basePath: "/ldap/auth",
    });
    const provisioning = toNodeHandler(handler);
    app = createServer((request, response) => {
      if (request.url?.startsWith("/read/")) {
        const known = request.url === "/read/known";
        response.writeHead(known ? 200 : 404, { "content-type": "application/json" });
        response.end(known ? '{"uuid":"known"}' : '{"error":"not_found"}');
        return;
      }
      if (request.url?.startsWith("/always-200/")) return void response.writeHead(200).end("{}");
      provisioning(request, response);
    });
    appUrl = await listen(app);
    api = await startMockApi([]);
  });
  afterAll(async () => {
    app.close();
    await api.stop();
  });

  it("passes when ping answers 204 at the provisioner URL", async () => {
    const { status, check } = await doctorJson(["--provisioner", `${appUrl}/ldap/auth`], {
      [variable]: api.url,
    });
    expect(status).toBe(0);
    expect(check("provisioner")).toMatchObject({ status: "pass" });
    expect(check("provisioner").summary).toBe(`GET ${appUrl}/ldap/auth/v1/ping answered 204`);
  });

  it("fails when the provisioner URL misses the mount path", async () => {
    const { status, check } = await doctorJson(["--provisioner", appUrl], { [variable]: api.url });
    expect(status).toBe(1);
    expect(check("provisioner").summary).toMatch(/answered 404, not 204$/);
    expect(check("provisioner").fix).toMatch(/must include the path where the handler is mounted/);
  });

  it("checks the read route with a uuid that does not exist", async () => {
    const good = await doctorJson(["--read-user", `${appUrl}/read/{uuid}`], {
      [variable]: api.url,
    });
    expect(good.check("read-user").status).toBe("pass");
    expect(good.check("read-user").summary).toMatch(/\/read\/doctor-[0-9a-f-]{36} answered 404/);
    const bad = await doctorJson(["--read-user", `${appUrl}/always-200/{uuid}`], {
      [variable]: api.url,
    });
    expect(bad.status).toBe(1);
    expect(bad.check("read-user").summary).toMatch(/answered 200, not 404$/);
  });

  it("refuses a wrong command line with status 2", async () => {
    for (const args of [
      ["--read-user", `${appUrl}/read/user`],
      ["--provisioner", "not a url"],
      ["--ca", "ca.pem", "--insecure"],
      ["--ca", join(folder, "missing.pem")],
      ["extra"],
    ]) {
      const { status, err } = await doctor(args, { [variable]: api.url });
      expect(status, args.join(" ")).toBe(2);
      expect(err).toMatch(/^platform-integration doctor: /);
    }
  });

  it("is listed by --help", async () => {
    const io = createFakeIo();
    expect(await run(["--help"], io)).toBe(0);
    expect(io.out).toMatch(new RegExp(`\\n  doctor +${doctorCommand.summary}\\n`));
  });
});

describe("doctor against the newer in-cluster API (mock-api --api sdk)", () => {
  it("says the newer API answers, with its version and what it can do, and checks its app info", async () => {
    const mock = await startAnyMockApi([
      "--port",
      "0",
      "--api",
      "sdk",
      "--current-version",
      "3.1.0",
    ]);
    try {
      const { status, report, check } = await doctorJson(["--audit-test-event"], {
        [variable]: mock.baseUrl,
      });
      expect(status).toBe(0);
      expect(report.checks.map((each) => [each.id, each.status])).toEqual([
        ["base-url", "pass"],
        ["dns", "pass"],
        ["tcp", "pass"],
        ["tls", "skip"],
        ["version", "pass"],
        ["clock", "pass"],
        ["api", "pass"],
        ["audit", "skip"],
      ]);
      expect(check("version").summary).toBe("3.1.0 (release sequence 1); updates: 0 pending");
      expect(check("api").summary).toMatch(
        /^the platform's newer in-cluster SDK API 1\.19\.0 \(clients: api "sdk"\); serves .*custom metrics.*; not apply, audit, identity/,
      );
    } finally {
      await mock.stop();
    }
  });

  // Issue 39, finding 11: doctor without arguments read PLATFORM_INTEGRATIONAPI only.
  it("reads PLATFORM_SDK_API when PLATFORM_INTEGRATIONAPI is unset, and names both when neither is", async () => {
    const mock = await startAnyMockApi(["--port", "0", "--api", "sdk"]);
    try {
      const { report, check } = await doctorJson([], { PLATFORM_SDK_API: mock.baseUrl });
      expect(check("base-url")).toMatchObject({ title: "PLATFORM_SDK_API is set", status: "pass" });
      expect(check("api").status).toBe("pass");
      expect(check("api").details).toMatchObject({ api: "sdk" });
      expect(report.passed).toBe(true);
    } finally {
      await mock.stop();
    }
    const { check } = await doctorJson([], {});
    expect(check("base-url").summary).toBe(
      "neither PLATFORM_INTEGRATIONAPI nor PLATFORM_SDK_API is set",
    );
    expect(check("base-url").fix).toContain("PLATFORM_SDK_API");
  });

  // Issue 39's fixes, m8: on a newer install the fixes name the SDK service, not the
  // Integration API, which is not there.
  it("names the newer SDK service in its fixes when the address is PLATFORM_SDK_API's", async () => {
    const { check } = await doctorJson([], { PLATFORM_SDK_API: "http://127.0.0.1:1" });
    expect(check("tcp").status).toBe("fail");
    expect(check("tcp").fix).toContain("the platform's newer in-cluster SDK service is running");
    expect(check("tcp").fix).not.toContain("Integration API");
  });
});
