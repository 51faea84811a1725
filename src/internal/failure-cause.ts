/** What a failed request says happened: see {@link readFailureCause}. */
export interface FailureCause {
  /** The first system error code along the chain: ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED... */
  code: string | undefined;
  /**
   * The message of the error that says what happened: below fetch's "fetch failed", the socket
   * error's ("connect ECONNREFUSED 127.0.0.1:3000"); the code when that message is empty (an
   * AggregateError for a name whose every address refused).
   */
  message: string;
}

// A cause chain is short; a loop of causes must not hang the reader.
const maxDepth = 4;

/**
 * Reads a failed request's cause, for every runtime and client (fetch, Node's http): fetch
 * rejects with a TypeError "fetch failed" and keeps what happened (ECONNREFUSED, a certificate
 * that did not verify...) in `cause`; the errors of Node's http module say it themselves. Any
 * other error (a time-out, the SDK's own errors) is read as it is: its message is already the
 * useful one.
 */
export function readFailureCause(error: unknown): FailureCause {
  let said = error;
  for (let depth = 0; depth < maxDepth && said instanceof Error; depth++) {
    if (said.message !== "fetch failed" || said.cause === undefined) break;
    said = said.cause;
  }
  let code: string | undefined;
  for (let current = said, depth = 0; current instanceof Error && depth < maxDepth; depth++) {
    const candidate = (current as { code?: unknown }).code;
    if (typeof candidate === "string") {
      code = candidate;
      break;
    }
    current = current.cause;
  }
  const message = said instanceof Error ? said.message : said == null ? "" : String(said);
  return { code, message: message || (code ?? "") };
}
