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
      new errors.CallTimeoutError({
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
      errors.isCallTimeoutError,
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
      "CallTimeoutError",
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
    // The DOMException of AbortSignal.timeout() is the caller's, not the client's time-out.
    const domTimeout = new DOMException("The operation timed out.", "TimeoutError");
    expect(errors.isCallTimeoutError(domTimeout)).toBe(false);
    expect(errors.isPlatformApiError(domTimeout)).toBe(false);
  });

  it("keeps the brand out of enumerable properties and JSON", () => {
    const error = new errors.ConfigurationError("no base URL");
    expect(Object.keys(error)).toEqual(["name", "retryable"]);
    expect(JSON.stringify(error)).toBe('{"name":"ConfigurationError","retryable":false}');
  });

  it("says which failures a retry may fix", () => {
    const http = (status: number) =>
      new errors.HttpError({ ...details, status, headers: new Headers(), body: "" });
    expect(
      [301, 308, 400, 404, 408, 429, 500, 503, 599].map((status) => http(status).retryable),
    ).toEqual([true, true, false, false, true, true, true, true, true]);
    expect(new errors.NetworkError(details, new Error("reset")).retryable).toBe(true);
    expect(new errors.ConfigurationError("no base URL").retryable).toBe(false);
  });

  it("names the redirect target of a 3xx without its credentials, and says it is not followed", () => {
    const error = new errors.HttpError({
      ...details,
      status: 301,
      headers: new Headers({ location: "https://user:pw@elsewhere.test/audit" }),
      body: "",
    });
    expect(error.message).toContain("redirects to https://elsewhere.test/audit");
    expect(error.message).toContain("never follows");
    expect(error.message).not.toContain("pw@");
  });
});
