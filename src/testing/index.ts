export {
  type TestRunner,
  testUserStore,
  type UserStoreContractOptions,
} from "./user-store-contract.ts";
