import { describe, expect, it } from "vitest";
import { isResponseShapeError } from "../../../src/clients/integration-api/errors.ts";
import type { ApiResponse } from "../../../src/clients/integration-api/http.ts";
import {
  field,
  parseJsonBody,
  readJsonObject,
} from "../../../src/clients/integration-api/json-body.ts";

function answer(body: string): ApiResponse {
  return {
    method: "GET",
    url: "https://integration.test/version/v1/current",
    status: 200,
    headers: new Headers(),
    body,
  };
}

function failure(read: () => unknown): unknown {
  try {
    read();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("reading the JSON bodies of 2xx answers", () => {
  it("parses JSON, and fails on anything else with a ResponseShapeError that keeps the raw body", () => {
    expect(parseJsonBody(answer('[1,"a"]'))).toEqual([1, "a"]);
    const error = failure(() => parseJsonBody(answer("<html>maintenance</html>")));
    expect(isResponseShapeError(error)).toBe(true);
    expect(error).toMatchObject({
      status: 200,
      body: "<html>maintenance</html>",
      retryable: false,
    });
    expect((error as Error).message).toContain("it is not JSON");
  });

  it("takes only a JSON object where one is expected", () => {
    expect(readJsonObject(answer('{"a":1}'))).toEqual({ a: 1 });
    for (const body of ["[]", "null", '"text"', "1"]) {
      const error = failure(() => readJsonObject(answer(body)));
      expect(isResponseShapeError(error), body).toBe(true);
      expect((error as Error).message).toContain("expected a JSON object");
    }
  });

  it("reads a field by its exact name first, else case-insensitively, and only own keys", () => {
    expect(field({ DN: "exact", dn: "other" }, "DN")).toBe("exact");
    expect(field({ dn: "cn=a" }, "DN")).toBe("cn=a");
    expect(field({ Dn: null }, "dN")).toBeNull();
    expect(field({ other: 1 }, "DN")).toBeUndefined();
    expect(field({}, "constructor")).toBeUndefined();
    expect(field({}, "toString")).toBeUndefined();
  });
});
