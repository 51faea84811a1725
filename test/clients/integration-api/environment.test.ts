// The one rule for reading the environment, held by both of its readers: the Integration API's
// base URL (base-url.ts) and the newer API's selection (sdk-api/api-selection.ts). Deno without
// --allow-env throws on a read; a reader that took the variable as unset chose an API or an
// address silently.
import { afterEach, describe, expect, it, vi } from "vitest";
import { resolveBaseUrl } from "../../../src/clients/integration-api/base-url.ts";
import { isVariableSet, readVariable } from "../../../src/clients/integration-api/environment.ts";
import { isConfigurationError } from "../../../src/clients/integration-api/errors.ts";
import { baseUrlFor, selectApi } from "../../../src/clients/sdk-api/api-selection.ts";
import { onRuntime } from "./runtime-globals.ts";

/** Deno with --allow-env for `allowed` only: reading any other variable throws, as Deno does. */
function denoAllowing(allowed: Record<string, string | undefined>) {
  return {
    env: {
      get(name: string) {
        if (name in allowed) return allowed[name];
        throw new Error(`Requires env access to "${name}", run again with the --allow-env flag`);
      },
    },
  };
}

function thrown(body: () => unknown): unknown {
  try {
    body();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

afterEach(() => vi.unstubAllEnvs());

describe("readVariable and isVariableSet", () => {
  it("read process.env, else Deno.env, else nothing (Workers); a given env first", () => {
    vi.stubEnv("PLATFORM_SDK_API", "http://node.test");
    expect(readVariable("PLATFORM_SDK_API")).toBe("http://node.test");
    expect(readVariable("PLATFORM_SDK_API", { PLATFORM_SDK_API: "http://given.test" })).toBe(
      "http://given.test",
    );
    expect(readVariable("PLATFORM_SDK_API", {})).toBeUndefined();
    const deno = denoAllowing({ PLATFORM_SDK_API: "http://deno.test" });
    expect(onRuntime({ Deno: deno }, () => readVariable("PLATFORM_SDK_API"))).toBe(
      "http://deno.test",
    );
    expect(onRuntime({}, () => readVariable("PLATFORM_SDK_API"))).toBeUndefined();
  });

  it("take a variable of blanks as unset", () => {
    expect(isVariableSet("X", { X: " \t" })).toBe(false);
    expect(isVariableSet("X", { X: " x " })).toBe(true);
    expect(isVariableSet("X", {})).toBe(false);
  });

  it("report a read the runtime forbids as a ConfigurationError naming the flag and the option", () => {
    const error = onRuntime({ Deno: denoAllowing({}) }, () =>
      thrown(() => isVariableSet("PLATFORM_SDK_API")),
    );
    expect(isConfigurationError(error)).toBe(true);
    expect(String(error)).toContain("deno run --allow-env=PLATFORM_SDK_API");
    expect(String(error)).toContain("pass the baseUrl option");
  });
});

describe("both readers of the environment on Deno without --allow-env", () => {
  // Catches a reader that swallows the error: "auto" then chose the newer service at its default
  // address on a legacy install whose PLATFORM_INTEGRATIONAPI it could not read.
  it("the API selection's auto says it could not read PLATFORM_INTEGRATIONAPI, as the base URL does", () => {
    const deno = denoAllowing({});
    const selection = onRuntime({ Deno: deno }, () => thrown(() => selectApi("auto", undefined)));
    const baseUrl = onRuntime({ Deno: deno }, () => thrown(() => resolveBaseUrl(undefined)));
    for (const error of [selection, baseUrl]) {
      expect(isConfigurationError(error)).toBe(true);
      expect(String(error)).toContain("--allow-env=PLATFORM_INTEGRATIONAPI");
    }
  });

  // Catches a PLATFORM_SDK_API that cannot be read passed over for http://replicated:3000.
  it("the newer API's address says it could not read PLATFORM_SDK_API", () => {
    const deno = denoAllowing({ PLATFORM_INTEGRATIONAPI: undefined });
    expect(onRuntime({ Deno: deno }, () => selectApi("auto", undefined))).toBe("sdk");
    const error = onRuntime({ Deno: deno }, () => thrown(() => baseUrlFor("sdk", undefined)));
    expect(isConfigurationError(error)).toBe(true);
    expect(String(error)).toContain("--allow-env=PLATFORM_SDK_API");
  });

  it("reads nothing when the baseUrl option is given", () => {
    const deno = denoAllowing({});
    expect(onRuntime({ Deno: deno }, () => selectApi("auto", "http://svc.test"))).toBeUndefined();
    expect(onRuntime({ Deno: deno }, () => baseUrlFor("sdk", "http://svc.test"))).toBe(
      "http://svc.test",
    );
    expect(onRuntime({ Deno: deno }, () => resolveBaseUrl("http://svc.test"))).toBe(
      "http://svc.test",
    );
  });
});
