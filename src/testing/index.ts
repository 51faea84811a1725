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
  type TestRunner,
  testUserStore,
  type UserStoreContractOptions,
} from "./user-store-contract.ts";
