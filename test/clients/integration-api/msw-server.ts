import { type SetupServer, setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, vi } from "vitest";

/**
 * An msw server for the current test file: any request without a handler fails the test, and
 * handlers, stubbed environment variables and spies are reset after each test.
 */
export function useMswServer(): SetupServer {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
  afterEach(() => {
    server.resetHandlers();
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });
  afterAll(() => server.close());
  return server;
}
