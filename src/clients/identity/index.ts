export * from "../integration-api/public.ts";
export {
  type Credentials,
  createIdentityClient,
  type IdentityCallOptions,
  type IdentityClient,
  type IdentityClientOptions,
  type LoginResult,
} from "./identity-client.ts";
export type {
  IdentityAttributes,
  IdentityGroup,
  IdentitySource,
  IdentityUser,
} from "./read-identity.ts";
