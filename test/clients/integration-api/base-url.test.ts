import { afterEach, describe, expect, it, vi } from "vitest";
import { resolveBaseUrl } from "../../../src/clients/integration-api/base-url.ts";
import { isConfigurationError } from "../../../src/clients/integration-api/errors.ts";
import { onRuntime } from "./runtime-globals.ts";

afterEach(() => vi.unstubAllEnvs());

describe("resolveBaseUrl", () => {
  it("prefers the option and trims trailing slashes", () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://from-env.test");
    expect(resolveBaseUrl("https://option.test:8443//")).toBe("https://option.test:8443");
    expect(resolveBaseUrl(new URL("http://option.test/"))).toBe("http://option.test");
  });

  it("refuses a path, from the option or the variable, naming where it came from", () => {
    expect(() => resolveBaseUrl("https://option.test/api")).toThrow(
      "the baseUrl option must be the API's scheme, host and port without a path",
    );
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://env.test/version/v1/");
    const error = (() => {
      try {
        return resolveBaseUrl(undefined);
      } catch (caught) {
        return caught;
      }
    })();
    expect(isConfigurationError(error)).toBe(true);
    expect(String(error)).toContain("the PLATFORM_INTEGRATIONAPI environment variable must be");
    expect(String(error)).toContain("got https://env.test/version/v1, use https://env.test");
  });

  it("reads the variable on every call", () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://first.test");
    expect(resolveBaseUrl(undefined)).toBe("https://first.test");
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://second.test/");
    expect(resolveBaseUrl(undefined)).toBe("https://second.test");
  });

  it("does not crash without process (Workers), and names the option and the variable", () => {
    const error = onRuntime({}, () => {
      try {
        return resolveBaseUrl(undefined);
      } catch (caught) {
        return caught;
      }
    });
    expect(isConfigurationError(error)).toBe(true);
    expect(String(error)).toMatch(/baseUrl option.*PLATFORM_INTEGRATIONAPI/);
  });

  it("reads Deno.env where there is no process", () => {
    const Deno = {
      env: {
        get: (name: string) =>
          name === "PLATFORM_INTEGRATIONAPI" ? "https://deno.test" : undefined,
      },
    };
    expect(onRuntime({ Deno }, () => resolveBaseUrl(undefined))).toBe("https://deno.test");
  });

  it("names Deno's --allow-env flag when reading the environment is not permitted", () => {
    const denied = () => {
      throw new Error('Requires env access to "PLATFORM_INTEGRATIONAPI"');
    };
    const error = onRuntime({ Deno: { env: { get: denied } } }, () => {
      try {
        return resolveBaseUrl(undefined);
      } catch (caught) {
        return caught;
      }
    });
    expect(isConfigurationError(error)).toBe(true);
    expect(String(error)).toContain("--allow-env=PLATFORM_INTEGRATIONAPI");
  });

  it("rejects values that are not absolute http(s) URLs", () => {
    expect(() => resolveBaseUrl("integration:8080")).toThrow(/http\(s\) URL/);
    expect(() => resolveBaseUrl("/relative")).toThrow(/not an absolute URL/);
    expect(() => resolveBaseUrl("  ")).toThrow(/No Integration API base URL/);
  });
});
