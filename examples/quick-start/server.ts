import { createServer } from "node:http";
import { createAuditClient, defineAuditActions } from "platform-integration/audit";
import { toNodeHandler } from "platform-integration/node";
import { createProvisioningHandler, MemoryUserStore } from "platform-integration/provisioning";
import { createVersionClient } from "platform-integration/version";

// The platform sets PLATFORM_INTEGRATIONAPI (the Integration API's address); PLATFORM_CA holds
// its certificate (from the console's tls.authority.cert option). Unset (the newer install
// methods), the Version client talks to the in-cluster SDK API and the audit client reports a
// configuration error once; the application runs on either way.
const tls = { ca: process.env.PLATFORM_CA };
const actions = defineAuditActions({ userProvisioned: "directory.user.provisioned" });
const audit = createAuditClient({ actions, tls });
const version = createVersionClient({ tls });

// The platform pushes directory users here; swap MemoryUserStore for your database's UserStore.
const provisioning = createProvisioningHandler({
  store: new MemoryUserStore(),
  onChange: (change) => {
    if (change.type === "created") {
      audit.record({ action: actions.userProvisioned, description: `user ${change.uuid}` });
    }
  },
});
const server = createServer(toNodeHandler(provisioning)).listen(Number(process.env.PORT ?? 3000));

// On SIGTERM (a redeploy, a scale-down): stop taking requests, deliver the audit events still
// queued (up to 5 s), then exit. A signal ends the process at once unless it is handled, and
// flushOnExit only covers a process whose event loop empties by itself (a script, a job).
process.once("SIGTERM", async () => {
  server.close();
  await audit.close({ timeoutMs: 5_000 });
  process.exit(0);
});

// Tell your users about pending updates, in the background: a failure is reported, never fatal.
void (async () => {
  const onError = (error: unknown) => console.warn(`Update check failed: ${String(error)}`);
  for await (const pending of version.watchUpdates({ intervalMs: 3_600_000, onError })) {
    for (const update of pending) {
      // Only the Integration API installs updates; elsewhere, helm upgrade or the admin console.
      const how = version.capabilities.apply ? `version.apply(${update.releaseSequence})` : "helm";
      console.log(`Update ${update.version} available: ${how}`);
    }
  }
})();
