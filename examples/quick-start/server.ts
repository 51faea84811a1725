import { createServer } from "node:http";
import { createAuditClient, defineAuditActions } from "platform-integration/audit";
import { toNodeHandler } from "platform-integration/node";
import { createProvisioningHandler, MemoryUserStore } from "platform-integration/provisioning";
import { createVersionClient } from "platform-integration/version";

// The Integration API's address comes from PLATFORM_INTEGRATIONAPI, set by the platform.
const actions = defineAuditActions({ userProvisioned: "directory.user.provisioned" });
const audit = createAuditClient({ actions });
const version = createVersionClient();

// The platform pushes directory users here; swap MemoryUserStore for your database's UserStore.
const provisioning = createProvisioningHandler({
  store: new MemoryUserStore(),
  onChange: (change) => {
    if (change.type === "created") {
      audit.record({ action: actions.userProvisioned, description: `user ${change.uuid}` });
    }
  },
});
createServer(toNodeHandler(provisioning)).listen(3000);

// Tell your users about pending updates.
const pending = await version.updates();
if (pending.length > 0) console.log(`Update available: ${pending[0]?.version}`);
