// For the examples' tests: the platform's full cycle against a server, and the store compared
// with the directory afterwards.
import type { UserRecord } from "platform-integration/provisioning";
import {
  createPlatformSimulator,
  createUserGenerator,
  type PlatformSimulator,
  type ProvisioningTarget,
} from "platform-integration/testing";
import { expect } from "vitest";

/**
 * Syncs a generated directory of 100 users to `target`, then 60 changes with one answer lost on
 * the way (the platform sends that message again), and expects every cycle to complete. Returns
 * the simulator, whose `users()` the application's store must now hold.
 */
export async function syncDirectory(target: ProvisioningTarget): Promise<PlatformSimulator> {
  const platform = createPlatformSimulator({ target });
  const generator = createUserGenerator({ seed: "servers" });
  for (const user of generator.users(100)) platform.addUser(user);
  expect(await platform.sync()).toMatchObject({ completed: true, remaining: 0 });
  for (const change of generator.changes(60)) platform.apply(change);
  platform.injectFault({ type: "drop-response", on: "modify" });
  expect((await platform.sync()).stoppedAt?.error).toMatch(/dropped/);
  expect(await platform.sync()).toMatchObject({ completed: true, remaining: 0 });
  return platform;
}

/** Users in uuid order, to compare a store with the directory. */
export function byUuid<T extends Pick<UserRecord, "uuid">>(users: readonly T[]): T[] {
  return users.toSorted((a, b) => (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
}
