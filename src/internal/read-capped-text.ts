// The one home of the answer-size cap: every outbound call of the package (the Integration API
// layer, the platform's clients of an application's Provisioning API, its read route and the
// doctor's probes) reads an answer's body through cappedBytes, over a web stream here and over a
// Node stream in the directory sync's client. A server that sends a runaway body must not exhaust
// the reader's memory; what each caller's cap is, and why, lives with the caller.
import { concatBytes } from "./concat-bytes.ts";

// Decoding without `stream` keeps no state between calls: one decoder serves every body.
const utf8 = new TextDecoder();

/** The bytes of a body gathered up to a cap: see {@link cappedBytes}. */
export interface CappedBytes {
  /**
   * Keeps `chunk`, or its start up to the cap; false once the cap is reached (the body is then
   * incomplete and reading must stop), true while more may come.
   */
  push(chunk: Uint8Array): boolean;
  /** Marks the body cut off without keeping any of it: its declared length is over the cap. */
  refuse(): void;
  /** The bytes kept, as UTF-8 text, and whether they are the whole body. */
  text(): { body: string; complete: boolean };
}

/**
 * Gathers a body's bytes up to `maxBytes`: what fits is kept, and `push` says when the cap is
 * reached, after which the caller stops reading (the rest is never held). A closure rather than a
 * class: every client entry bundles it, and its locals minify where private fields do not.
 */
export function cappedBytes(maxBytes: number): CappedBytes {
  const chunks: Uint8Array[] = [];
  let length = 0;
  let complete = true;
  return {
    push(chunk) {
      if (!complete) return false;
      if (length + chunk.byteLength > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - length));
        length = maxBytes;
        complete = false;
        return false;
      }
      chunks.push(chunk);
      length += chunk.byteLength;
      return true;
    },
    refuse() {
      complete = false;
    },
    text: () => ({ body: utf8.decode(concatBytes(chunks, length)), complete }),
  };
}

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
  const bytes = cappedBytes(maxBytes);
  const stream = response.body;
  if (stream === null) return bytes.text();
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await stream.cancel().catch(() => undefined);
    bytes.refuse();
    return bytes.text();
  }
  const reader = stream.getReader();
  const stop = () => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // A cancelled reader ends as if the body had: only the signal tells the two apart.
      signal.throwIfAborted();
      if (done) break;
      if (!bytes.push(value)) {
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  } finally {
    signal.removeEventListener("abort", stop);
  }
  return bytes.text();
}
