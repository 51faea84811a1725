// readInWorker from the installed package, in its ESM and CommonJS builds: the reader thread
// starts the package's own file, which only an install can show. Nothing listens on the LDAP
// port, so a thread that ran reports the refused connection (retryable); one that could not
// start would stop the cycle with a fatal error instead. The application answers every ping.
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const folder = mkdtempSync(join(tmpdir(), "read-worker-smoke-"));
const app = createServer((_request, response) => response.writeHead(204).end());
await once(app.listen(0, "127.0.0.1"), "listening");
const builds = {
  esm: await import("platform-integration/ldap"),
  cjs: createRequire(import.meta.url)("platform-integration/ldap"),
};
try {
  for (const [build, { createDirectorySync }] of Object.entries(builds)) {
    const sync = createDirectorySync({
      ldap: { url: "ldap://127.0.0.1:1" },
      baseDn: "ou=people,dc=example,dc=com",
      target: `http://127.0.0.1:${app.address().port}`,
      state: join(folder, `${build}.sqlite`),
      readInWorker: true,
    });
    try {
      const report = await sync.syncOnce();
      if (!/ECONNREFUSED/.test(report.directoryError ?? "")) {
        throw new Error(`readInWorker (${build}): ${JSON.stringify(report)}`);
      }
    } finally {
      await sync.close();
    }
  }
} finally {
  app.close();
  rmSync(folder, { recursive: true, force: true });
}
console.log(`readInWorker ok on ${process.version} (ESM and CommonJS builds)`);
