export type { FakeAuditEvent } from "../clients/audit/fake.ts";
export type { FakeConsoleApi, FakeStartupStatus } from "../clients/console/fake.ts";
export {
  type FakeIdentityApi,
  type FakeIdentityGroup,
  type FakeIdentityInit,
  type FakeIdentitySource,
  type FakeIdentityUser,
  type FakeLoginAttempt,
  fakeIdentityDefaults,
} from "../clients/identity/fake.ts";
export {
  type FakeLicense,
  type FakeLicenseApi,
  type FakeLicenseField,
  fakeLicenseDefault,
} from "../clients/license/fake.ts";
export type {
  FakeCurrentVersion,
  FakeCurrentVersionInit,
  FakeUpdate,
  FakeUpdateInit,
  FakeVersionOptions,
} from "../clients/version/fake.ts";
export type {
  FetchHandler,
  ProvisioningAnswer,
  ProvisioningApiClient,
  ProvisioningCall,
  ProvisioningTarget,
} from "../platform/provisioning-api-client.ts";
export type { ReadUser } from "../platform/read-user.ts";
export type { UserDifference, VerifyReport } from "../platform/verify-users.ts";
export {
  type TestContext,
  type TestRunner,
  testUserStore,
  type UserStoreContractOptions,
} from "../users/contract/user-store-contract.ts";
export {
  type ConformanceOptions,
  type ConformanceReport,
  type ConformanceResult,
  type LeftBehind,
  runConformance,
} from "./conformance.ts";
export {
  createFakeIntegrationApi,
  type FakeFailure,
  type FakeIntegrationApi,
  type FakeIntegrationApiOptions,
} from "./fake-integration-api.ts";
export {
  createFakeSdkApi,
  type FakeSdkApi,
  type FakeSdkApiOptions,
  type FakeSdkAppOptions,
  type FakeSdkLicense,
  type FakeSdkLicenseField,
  type FakeSdkMockAppStatus,
  type FakeSdkMockData,
  type FakeSdkMockRelease,
  type FakeSdkMode,
  type FakeSdkRelease,
  type FakeSdkUpdate,
  type FakeSdkWrite,
  type FakeSupportBundle,
  fakeSdkLicenseDefault,
  fakeSdkMockDataDefault,
} from "./fake-sdk-api.ts";
export { type Fault, type FaultyClient, withFaults } from "./faults.ts";
export {
  createPlatformSimulator,
  type Delivery,
  type DirectoryChange,
  type MessageKind,
  type MessageSummary,
  type PlatformSimulator,
  type PlatformSimulatorOptions,
  type SimulatorSyncProgress,
  type SimulatorSyncReport,
  type SyncStop,
} from "./platform-simulator.ts";
export { type ReadableUserStore, withReadUserRoute } from "./read-route.ts";
export type { ScimTarget } from "./scim-client.ts";
export type { ScimConformanceOptions } from "./scim-conformance.ts";
export {
  createScimIdentityProvider,
  type ScimIdentityProvider,
  type ScimIdentityProviderOptions,
} from "./scim-identity-provider.ts";
export {
  createUserGenerator,
  type UserGenerator,
  type UserGeneratorOptions,
} from "./user-generator.ts";
