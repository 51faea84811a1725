export { bearerToken, type ScimAuthenticate } from "./auth.ts";
export { ScimError, type ScimErrorStatus, type ScimType } from "./errors.ts";
export { createScimHandler } from "./handler.ts";
export type {
  ScimErrorContext,
  ScimHandler,
  ScimHandlerOptions,
  ScimUserStore,
} from "./handler-options.ts";
export { scimExtraKey } from "./mapping.ts";
