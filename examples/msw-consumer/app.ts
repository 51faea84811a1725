// A consumer's app module, as it would call the platform: one client of each API, configured
// from PLATFORM_INTEGRATIONAPI, which the platform sets in the app's container.
import { createAuditClient, defineAuditActions } from "platform-integration/audit";
import { createProvisioningHandler, MemoryUserStore } from "platform-integration/provisioning";
import { createVersionClient } from "platform-integration/version";

export const auditActions = defineAuditActions({
  login: "user.login.success",
  provisioned: "user.provisioned",
});

export const audit = createAuditClient({
  actions: auditActions,
  flushOnExit: true,
  onDrop: ({ reason, count, events }) =>
    console.error(`audit: dropped ${count} event(s) (${reason})`, events),
});

// The banner is a nicety: one quick retry, and a page never waits more than 3 seconds for it.
const version = createVersionClient({ retry: { limit: 1 }, totalTimeoutMs: 3_000 });

/** Records a successful login; returns at once, the event is delivered in the background. */
export function onLogin(user: { id: string; username: string }, ip: string | undefined): void {
  audit.record({
    action: auditActions.login,
    name: "user.login",
    title: "User Login Success",
    description: `${user.id} (${user.username}) logged in`,
    ipAddress: ip,
  });
}

/** The text of the pending-update banner, or undefined when there is nothing to show. */
export async function updateBanner(): Promise<string | undefined> {
  try {
    const updates = await version.updates();
    if (updates.length === 0) return undefined;
    const versions = updates.map((update) => update.version ?? "unnamed").join(", ");
    return `${updates.length === 1 ? "An update is" : "Updates are"} available: ${versions}.`;
  } catch (error) {
    // Without the Version API the app works as before, only without the banner.
    console.warn(`Update banner unavailable: ${String(error)}`);
    return undefined;
  }
}

/** Installs a pending update (it may restart the app) and returns the version now running. */
export async function installUpdate(releaseSequence: number): Promise<string> {
  await version.apply(releaseSequence);
  return (await version.current()).version;
}

export const store = new MemoryUserStore();

/** The Provisioning API the platform pushes users to; each new user is audited. */
export const provisioning = createProvisioningHandler({
  store,
  onChange: (change) => {
    if (change.type !== "created") return;
    audit.record({
      action: auditActions.provisioned,
      name: "user.provisioned",
      title: "User Provisioned",
      description: `${change.uuid} (${change.user.username}) provisioned from the directory`,
    });
  },
});
