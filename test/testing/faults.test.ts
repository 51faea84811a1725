import { describe, expect, it } from "vitest";
import { type MessageKind, toRequest } from "../../src/platform/messages.ts";
import type {
  ProvisioningApiClient,
  ProvisioningCall,
} from "../../src/platform/provisioning-api-client.ts";
import { withFaults } from "../../src/testing/faults.ts";

/** A client that answers each call with `status` (201 to a create, 204 to the rest by default). */
function recordingClient(status?: (call: ProvisioningCall) => number) {
  const calls: string[] = [];
  const client: ProvisioningApiClient = async (call) => {
    calls.push(`${call.method} ${call.path}`);
    const ok = call.path === "/v1/user/create" ? 201 : 204;
    return { status: status?.(call) ?? ok, body: undefined, durationMs: 1 };
  };
  return { client, calls };
}

const kinds: MessageKind[] = ["ping", "create", "modify", "delete", "reset"];
const requestOf = (kind: MessageKind) =>
  toRequest({
    kind,
    attempts: 0,
    uuid: "u/1",
    ...(kind.endsWith("e") && { body: { uuid: "u/1" } }),
  });

describe("withFaults", () => {
  it("passes calls through as they are without a fault", async () => {
    const { client, calls } = recordingClient();
    const faulty = withFaults(client);
    expect(await faulty(requestOf("create"))).toEqual({
      status: 201,
      body: undefined,
      durationMs: 1,
    });
    expect(calls).toEqual(["POST /v1/user/create"]);
  });

  it.each(kinds)("hits only the calls of the kind it is on: %s", async (kind) => {
    const { client, calls } = recordingClient();
    const faulty = withFaults(client);
    faulty.injectFault({ type: "drop-request", on: kind });
    for (const other of kinds.filter((k) => k !== kind)) {
      expect((await faulty(requestOf(other))).error).toBeUndefined();
    }
    expect(await faulty(requestOf(kind))).toEqual({
      error: "connection dropped before the request (injected fault)",
      durationMs: 0,
    });
    expect(calls).toHaveLength(kinds.length - 1);
    expect((await faulty(requestOf(kind))).error).toBeUndefined();
  });

  it("drops the answer after the call reached the application", async () => {
    const { client, calls } = recordingClient();
    const faulty = withFaults(client);
    faulty.injectFault({ type: "drop-response", times: 2 });
    for (const kind of ["modify", "delete", "ping"] as const) await faulty(requestOf(kind));
    expect(calls).toEqual(["POST /v1/user/modify", "DELETE /v1/user/u%2F1", "GET /v1/ping"]);
    const dropped = withFaults(client);
    dropped.injectFault({ type: "drop-response" });
    expect(await dropped(requestOf("modify"))).toEqual({
      error: "connection dropped before the answer (injected fault)",
      durationMs: 1,
    });
  });

  it("sends a duplicate again after a success, and reports the first copy's answer", async () => {
    let status = 201;
    const { client, calls } = recordingClient(() => status++);
    const faulty = withFaults(client);
    faulty.injectFault({ type: "duplicate", on: "create" });
    expect(await faulty(requestOf("create"))).toEqual({
      status: 202,
      body: undefined,
      durationMs: 1,
      copies: [{ status: 201, body: undefined, durationMs: 1 }],
    });
    expect(calls).toEqual(["POST /v1/user/create", "POST /v1/user/create"]);
  });

  it("does not send a duplicate again when its first copy failed", async () => {
    const { client, calls } = recordingClient(() => 500);
    const faulty = withFaults(client);
    faulty.injectFault({ type: "duplicate" });
    expect(await faulty(requestOf("create"))).toEqual({
      status: 500,
      body: undefined,
      durationMs: 1,
    });
    expect(calls).toHaveLength(1);
  });

  it("applies faults in the order they were queued, each `times` times (default once)", async () => {
    const { client } = recordingClient();
    const faulty = withFaults(client);
    faulty.injectFault({ type: "drop-request", times: 2 });
    faulty.injectFault({ type: "drop-response" });
    const errors = [];
    for (let i = 0; i < 4; i++) errors.push((await faulty(requestOf("ping"))).error);
    expect(errors).toEqual([
      "connection dropped before the request (injected fault)",
      "connection dropped before the request (injected fault)",
      "connection dropped before the answer (injected fault)",
      undefined,
    ]);
  });
});
