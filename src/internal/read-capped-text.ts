// The one reader of an HTTP answer's body under a size cap: the Integration API clients' answers
// and the application's answers to the platform's calls are read whole, and a server that sends a
// runaway body must not exhaust the reader's memory.
import { concatBytes } from "./concat-bytes.ts";

/**
 * Reads a body as UTF-8 text while it streams, stopping at `maxBytes` (`complete` false, the
 * bytes read so far kept) and at `signal`, which the attempt's timer aborts: a body that trickles
 * stays within the call's time, even from an injected fetch that ignores its signal.
 */
export async function readCappedText(
  response: Response,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ body: string; complete: boolean }> {
  const stream = response.body;
  if (stream === null) return { body: "", complete: true };
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await stream.cancel().catch(() => undefined);
    return { body: "", complete: false };
  }
  const reader = stream.getReader();
  const stop = () => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener("abort", stop, { once: true });
  const chunks: Uint8Array[] = [];
  let length = 0;
  let complete = true;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // A cancelled reader ends as if the body had: only the signal tells the two apart.
      signal.throwIfAborted();
      if (done) break;
      if (length + value.byteLength > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - length));
        length = maxBytes;
        complete = false;
        await reader.cancel().catch(() => undefined);
        break;
      }
      chunks.push(value);
      length += value.byteLength;
    }
  } finally {
    signal.removeEventListener("abort", stop);
  }
  return { body: new TextDecoder().decode(concatBytes(chunks, length)), complete };
}
