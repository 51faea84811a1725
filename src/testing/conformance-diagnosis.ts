import type {
  ProvisioningAnswer,
  ProvisioningTarget,
} from "../platform/provisioning-api-client.ts";
import { oneLine } from "./conformance-session.ts";

/** One line that says what to check, from the answer to a ping that failed. */
export function whyPingFailed(
  answer: ProvisioningAnswer | undefined,
  target: ProvisioningTarget,
): string {
  const where =
    typeof target === "object" && !(target instanceof URL) ? "the handler" : String(target);
  if (answer === undefined) return `The ping to ${where} was not sent.`;
  if (answer.status === undefined) {
    const reason = unreachable([answer], true);
    return (
      reason ??
      `No answer from ${where} (${oneLine(answer.error)}): check the host, the port and any firewall.`
    );
  }
  const { status, body } = answer;
  if (status === 404 || (typeof body === "string" && /^\s*</.test(body))) {
    const page = typeof body === "string" && /^\s*</.test(body) ? " with an HTML page" : "";
    return `GET /v1/ping answered ${status}${page}: these are not the Provisioning API's answers. Check the base path: the provisioner URL, the part before /v1 (${where}).`;
  }
  if (status === 503) {
    return "GET /v1/ping answered 503: the application is not ready, and the platform starts no sync until ping answers 204.";
  }
  return `GET /v1/ping answered ${status}, not 204: the platform reads any other status as not ready and starts no sync.`;
}

/**
 * One line that says what to check when an answer shows that the application cannot be reached.
 * A connection closed without an answer counts only at the ping: later, it may be the
 * application's way to refuse one request.
 */
export function unreachable(answers: ProvisioningAnswer[], atPing: boolean): string | undefined {
  const error = answers.find((answer) => answer.status === undefined)?.error;
  if (error === undefined) return undefined;
  if (/ECONNREFUSED/.test(error)) {
    return `Nothing answers there (${oneLine(error)}): check the host and the port, and that the application runs.`;
  }
  if (/ENOTFOUND|EAI_AGAIN/.test(error)) {
    return `The host name is unknown (${oneLine(error)}): check the URL's host.`;
  }
  if (/certificate|ssl|tls|eproto|wrong version|packet length/i.test(error)) {
    return `TLS failed (${oneLine(error)}): check the scheme (http or https) and, for https, that this Node trusts the certificate (NODE_EXTRA_CA_CERTS).`;
  }
  if (atPing && /other side closed|socket hang up|ECONNRESET|closed/i.test(error)) {
    return `The connection closed without an answer (${oneLine(error)}): check the scheme (http or https) and the port.`;
  }
  return undefined;
}
