import { describe, expect, it } from "vitest";
import * as errors from "../../../src/clients/integration-api/errors.ts";

const details = { method: "GET", url: "https://integration.test/version/v1/current", attempts: 1 };

describe("the error family", () => {
  it("recognises errors from another copy of the module, where instanceof fails", async () => {
    // The query string makes Vite load a second, independent instance of the module.
    const secondCopy = "../../../src/clients/integration-api/errors.ts?copy";
    const copy = (await import(secondCopy)) as typeof errors;
    const foreign = new copy.HttpError({
      ...details,
      status: 500,
      headers: new Headers(),
      body: "",
    });
    expect(foreign instanceof errors.HttpError).toBe(false);
    expect(errors.isHttpError(foreign)).toBe(true);
    expect(errors.isPlatformApiError(foreign)).toBe(true);
    expect(errors.isNetworkError(foreign)).toBe(false);
  });

  it("gives each kind its own guard", () => {
    const made = [
      new errors.ConfigurationError("no base URL"),
      new errors.HttpError({ ...details, status: 400, headers: new Headers(), body: "bad" }),
      new errors.NetworkError(details, new Error("boom")),
      new errors.TimeoutError({
        ...details,
        timeoutMs: 10,
        totalTimeoutMs: Number.POSITIVE_INFINITY,
      }),
      new errors.ResponseShapeError(
        { ...details, status: 200, headers: new Headers(), body: "<html>" },
        "it is not JSON",
      ),
    ];
    const guards = [
      errors.isConfigurationError,
      errors.isHttpError,
      errors.isNetworkError,
      errors.isTimeoutError,
      errors.isResponseShapeError,
    ];
    expect(made.map((error) => guards.map((guard) => guard(error)))).toEqual(
      made.map((_, row) => guards.map((_, column) => row === column)),
    );
    expect(
      made.every((error) => error instanceof errors.PlatformApiError && error instanceof Error),
    ).toBe(true);
    expect(made.map((error) => error.name)).toEqual([
      "ConfigurationError",
      "HttpError",
      "NetworkError",
      "TimeoutError",
      "ResponseShapeError",
    ]);
  });

  it("rejects look-alikes: plain errors, objects and primitives", () => {
    for (const value of [
      new Error("x"),
      { name: "HttpError", status: 500 },
      null,
      "HttpError",
      42,
    ]) {
      expect(errors.isPlatformApiError(value)).toBe(false);
      expect(errors.isHttpError(value)).toBe(false);
    }
  });

  it("keeps the brand out of enumerable properties and JSON", () => {
    const error = new errors.ConfigurationError("no base URL");
    expect(Object.keys(error)).toEqual(["name"]);
    expect(JSON.stringify(error)).toBe('{"name":"ConfigurationError"}');
  });

  it("points a TLS failure at tls.ca", () => {
    const cause = new TypeError("fetch failed", {
      cause: Object.assign(new Error("self-signed"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
    });
    const error = new errors.NetworkError(details, cause);
    expect(error.message).toContain("(DEPTH_ZERO_SELF_SIGNED_CERT)");
    expect(error.message).toContain("pass tls.ca");
    expect(error.cause).toBe(cause);
  });
});
