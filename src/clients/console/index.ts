export * from "../integration-api/public.ts";
export {
  type ConsoleClient,
  type ConsoleClientOptions,
  createConsoleClient,
  type FetchPlatformCaOptions,
  fetchPlatformCa,
  type StartupSeverity,
} from "./console-client.ts";
