// Joining the chunks of a body read under a size cap, on every runtime (no Node Buffer).

/** Joins chunks whose lengths add up to `size` into one array, without a copy when there is one. */
export function concatBytes(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
