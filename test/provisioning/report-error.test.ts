// The default onError: what it cuts out of an error's text and what it leaves. Each case names
// the wrong redaction it catches.
import { describe, expect, it } from "vitest";
import type { LogFields, Logger } from "../../src/internal/logger.ts";
import type { RequestHeaders } from "../../src/provisioning/index.ts";
import { reportError, type Sensitive } from "../../src/provisioning/report-error.ts";

const context = { operation: "create", uuid: "u1", status: 500 } as const;

/** Reports `error` and returns the one logged line's fields. */
function report(error: unknown, sensitive: Sensitive): LogFields & { error: { message: string } } {
  const fields: LogFields[] = [];
  const record = (_message: string, extra?: LogFields) => void fields.push(extra ?? {});
  const logger: Logger = { debug: record, info: record, warn: record, error: record };
  reportError(logger, error, context, sensitive);
  expect(fields).toHaveLength(1);
  return fields[0] as LogFields & { error: { message: string } };
}

describe("reportError", () => {
  const token = "tok-5f2a9c7e1b";
  const headerForms: [string, RequestHeaders][] = [
    ["a record", { authorization: `Bearer ${token}` }],
    ["a record, two spaces after the scheme", { authorization: `Bearer  ${token}` }],
    // Node's rawHeaders, as the Node adapter passes them.
    ["a raw list", ["Host", "app", "Authorization", `Bearer ${token}`]],
    ["Web Headers", new Headers({ authorization: `Bearer ${token}` })],
  ];

  // Catches: a token not cut when quoted without its scheme; headers in list or Headers form not
  // read at all (every header form the adapters pass must be searched).
  it.each(headerForms)(
    "cuts a credential header's token quoted without its scheme, from headers as %s",
    (_form, headers) => {
      const error = new Error(`token ${token} was refused`);
      const fields = report(error, { headers });
      expect(JSON.stringify(fields)).not.toContain(token);
      expect(fields.error.message).toBe("token [redacted] was refused");
    },
  );

  // Catches: secrets cut in the order found, which leaves the rest of a longer secret that holds a
  // shorter one ("[redacted]-session-77").
  it("cuts a longer secret whole when a shorter one lies inside it", () => {
    const password = "hunter2";
    const session = `${password}-session-77`;
    const error = new Error(`no session ${session} for ${password}`);
    const fields = report(error, {
      patch: { uuid: "u1", password },
      headers: { "x-session-token": session },
    });
    expect(fields.error.message).toBe("no session [redacted] for [redacted]");
  });

  // Catches: an empty password or credential header cutting "" (which garbles every character
  // apart), values of other headers cut, and an absent value cutting the word "undefined".
  it("leaves the text alone when the request's secrets are not in it", () => {
    const message = "Cannot read properties of undefined (reading 'id') for curl/8.5";
    const fields = report(new TypeError(message), {
      patch: { uuid: "u1", password: "" },
      headers: {
        authorization: "",
        "user-agent": "curl/8.5",
        "x-api-key": "k3y-value",
        cookie: ["a=1", "b=2"],
      },
    });
    expect(fields.error).toMatchObject({ name: "TypeError", message });
  });

  // Catches: the stack dropped (it locates the failure), or kept with the secret in it.
  it("keeps the error's stack with the secrets cut, and gives a thrown non-Error none", () => {
    const password = "Tr0ub4dor&3";
    const error = new Error(`insert failed: ${password}`);
    const { stack } = report(error, { patch: { uuid: "u1", password } }).error as {
      stack?: string;
    };
    expect(stack).toContain("report-error.test.ts");
    expect(stack).toContain("insert failed: [redacted]");
    expect(stack).not.toContain(password);
    expect(report("boom", {}).error).toStrictEqual({ name: "string", message: "boom" });
  });
});
