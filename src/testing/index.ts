export {
  type ConformanceOptions,
  type ConformanceReport,
  type ConformanceResult,
  type LeftBehind,
  runConformance,
} from "./conformance.ts";
export {
  createFakeIntegrationApi,
  type FakeAuditEvent,
  type FakeCurrentVersion,
  type FakeCurrentVersionInit,
  type FakeFailure,
  type FakeIntegrationApi,
  type FakeIntegrationApiOptions,
  type FakeUpdate,
  type FakeUpdateInit,
} from "./fake-integration-api.ts";
export {
  createPlatformSimulator,
  type Delivery,
  type Fault,
  type PlatformSimulator,
  type PlatformSimulatorOptions,
  type SyncProgress,
  type SyncReport,
} from "./platform-simulator.ts";
export type { FetchHandler, ProvisioningTarget } from "./provisioning-target.ts";
export { type ReadableUserStore, withReadUserRoute } from "./read-route.ts";
export type { ReadUser, VerifyReport } from "./read-user.ts";
export type { DirectoryChange } from "./simulated-directory.ts";
export type { MessageKind, MessageSummary, SyncStop } from "./simulator-messages.ts";
export {
  createUserGenerator,
  type UserGenerator,
  type UserGeneratorOptions,
} from "./user-generator.ts";
export {
  type TestContext,
  type TestRunner,
  testUserStore,
  type UserStoreContractOptions,
} from "./user-store-contract.ts";
