import {
  type CallOptions,
  type IntegrationApiOptions,
  normalizeOptions,
} from "../integration-api/client-options.ts";
import type { PlatformApiKind } from "../integration-api/errors.ts";
import {
  type ApiOption,
  type ApiSelection,
  type Capabilities,
  capabilitiesOf,
  createApiSelection,
  decidedOrThrow,
} from "./api-selection.ts";

// What every client of several APIs (Version, License, the app client) starts from: its options
// normalized once, the choice of API, and the members that say which API it talks to. One home
// for them: each client adds only its own calls.

/** The members a client of several APIs shares; each client's interface documents them. */
export interface ApiMembers {
  readonly api: PlatformApiKind;
  readonly capabilities: Readonly<Capabilities>;
  detectApi(options?: CallOptions): Promise<PlatformApiKind>;
  serviceVersion(options?: CallOptions): Promise<string | undefined>;
}

/**
 * Normalizes a client's options once (a wrong one throws at creation) and makes its choice of
 * API; `sdkOnly` for a client the Integration API cannot serve (the app client).
 */
export function openApiSelection(
  options: IntegrationApiOptions & { api?: ApiOption | undefined },
  sdkOnly = false,
): ApiSelection {
  const { api: option, ...rest } = options;
  normalizeOptions(rest);
  return createApiSelection(option, rest, sdkOnly);
}

/**
 * `calls` with the members of {@link ApiMembers} added: `api` and `capabilities` read the
 * choice (throwing, named for `client`, before "auto" with a `baseUrl` has decided), `detectApi`
 * decides it, `serviceVersion` asks the newer service.
 */
export function withApiMembers<Calls extends object>(
  selection: ApiSelection,
  client: string,
  calls: Calls,
): Calls & ApiMembers {
  const kind = () => decidedOrThrow(selection, client).kind;
  const members: ApiMembers = {
    get api() {
      return kind();
    },
    get capabilities() {
      return capabilitiesOf(kind());
    },
    async detectApi(call = {}) {
      return (await selection.select(call)).kind;
    },
    serviceVersion: (call) => selection.serviceVersion(call),
  };
  return Object.defineProperties(calls, Object.getOwnPropertyDescriptors(members)) as Calls &
    ApiMembers;
}
