// The directory sync's client of a Provisioning API on Node's http module (one kept-alive
// connection, for its speed); everything but the sending is the platform's outbound layer
// (outbound.ts): the URL check, the cap, the failure's wording.
import { type ClientRequest, Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { cappedBytes } from "../internal/read-capped-text.ts";
import { joinUrl } from "../internal/url.ts";
import {
  checkProvisioningUrl,
  describeFailure,
  maxAnswerBytes,
  parseBody,
  stopwatch,
} from "./outbound.ts";
import type { ProvisioningApiClient } from "./provisioning-api-client.ts";

/** A {@link ProvisioningApiClient} that holds a connection open, closed by `close`. */
export interface ClosableClient extends ProvisioningApiClient {
  close(): void;
}

/**
 * The directory sync's client on Node's http module: one keep-alive connection, as the platform
 * sends one message at a time, and no per-call AbortSignal or Request objects. Against a
 * Provisioning API it sends several times as many messages per second as fetch, with half the
 * memory, which a sync of 100,000 users feels. Statuses come back as they are, like
 * connectProvisioning's (the client on fetch, for every runtime and for a handler in-process).
 */
export function connectOverNodeHttp(
  target: string | URL,
  { timeoutMs, ca = [] }: { timeoutMs: number; ca?: string[] },
): ClosableClient {
  const base = checkProvisioningUrl(target);
  const secure = base.startsWith("https:");
  if (ca.length > 0 && !secure) {
    throw new TypeError(`targetTls.ca is for an https:// target, not ${base}`);
  }
  const agent = secure
    ? new HttpsAgent({ keepAlive: true, maxSockets: 1, ...(ca.length > 0 && { ca }) })
    : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const send = secure ? httpsRequest : httpRequest;
  // A signal ends the requests in flight through one listener of its own, not one per request:
  // the sync passes its cycle's signal with every message, and Node's handling of a request's
  // `signal` option cost a measurable share of a sync's rate (bench/README.md, "A signal on
  // every request").
  const inFlight = new Set<ClientRequest>();
  const watched = new Map<AbortSignal, () => void>();
  const watch = (signal: AbortSignal) => {
    if (watched.has(signal)) return;
    const abort = () => {
      for (const outgoing of inFlight) outgoing.destroy(signal.reason);
    };
    watched.set(signal, abort);
    signal.addEventListener("abort", abort);
  };
  const client = (call: Parameters<ProvisioningApiClient>[0], signal?: AbortSignal) =>
    new Promise<Awaited<ReturnType<ProvisioningApiClient>>>((resolve) => {
      const elapsed = stopwatch();
      let timedOut = false;
      const settle = (answer: Awaited<ReturnType<ProvisioningApiClient>>) => {
        inFlight.delete(outgoing);
        resolve(answer);
      };
      const fail = (error: unknown) =>
        settle({
          ...describeFailure(error, {
            aborted: signal?.aborted === true,
            timedOut,
            timeoutMs,
            certificateFix,
          }),
          durationMs: elapsed(),
        });
      const body = call.body === undefined ? undefined : Buffer.from(call.body);
      const outgoing = send(
        joinUrl(base, call.path),
        {
          method: call.method,
          agent,
          headers: body
            ? { "content-type": "application/json", "content-length": body.byteLength }
            : {},
        },
        (response) => {
          const bytes = cappedBytes(maxAnswerBytes);
          const answer = () => {
            const { body: text, complete } = bytes.text();
            settle({
              status: response.statusCode ?? 0,
              body: parseBody(text, complete),
              durationMs: elapsed(),
            });
          };
          response.on("data", (chunk: Buffer) => {
            if (bytes.push(chunk)) return;
            // A runaway body: answer with its start and drop the connection rather than read on.
            answer();
            response.destroy();
          });
          response.on("error", fail);
          response.on("end", answer);
        },
      );
      outgoing.setTimeout(timeoutMs, () => {
        timedOut = true;
        outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`));
      });
      outgoing.on("error", fail);
      if (signal?.aborted) {
        outgoing.destroy(signal.reason);
        return;
      }
      if (signal) {
        watch(signal);
        inFlight.add(outgoing);
      }
      outgoing.end(body);
    });
  return Object.assign(client, {
    close: () => {
      for (const [signal, abort] of watched) signal.removeEventListener("abort", abort);
      agent.destroy();
    },
  });
}

// Retrying cannot fix a certificate that does not verify: the answer is fatal and names the fix.
const certificateFix =
  "the application's certificate is not trusted; pass its CA certificate (targetTls.ca, sync --target-ca FILE)";
