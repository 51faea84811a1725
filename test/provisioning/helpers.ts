// Calls into the plain-data core the way an adapter does, with a JSON body.
import type {
  ProvisioningHandler,
  ProvisioningRequest,
  ProvisioningResponse,
} from "../../src/provisioning/index.ts";

const encoder = new TextEncoder();

/** Sends `body` (a string as is, anything else as JSON) to the handler's core. */
export function call(
  handler: ProvisioningHandler,
  method: string,
  path: string,
  body?: unknown,
  extra: Partial<ProvisioningRequest> = {},
): Promise<ProvisioningResponse> {
  const text = body === undefined || typeof body === "string" ? body : JSON.stringify(body);
  return handler.handle({
    method,
    path,
    headers: { "content-type": "application/json" },
    body: text === undefined ? undefined : encoder.encode(text),
    ...extra,
  });
}

/** The parsed JSON error body of a response. */
export function errorOf(response: ProvisioningResponse): { error: string; message: string } {
  return JSON.parse(response.body ?? "null");
}
