import type { AuditDrop } from "../../../src/clients/audit/index.ts";

/**
 * A `fetch` that answers nothing until its request is aborted: deliveries stay in flight. Like the
 * real one, it rejects at once a request whose signal is already aborted (on a loaded machine,
 * `close()` can abort a delivery before it reaches `fetch`; a listener added then never fires).
 */
export function hangingFetch(request: Request): Promise<Response> {
  return new Promise((_resolve, reject) => {
    if (request.signal.aborted) reject(request.signal.reason);
    request.signal.addEventListener("abort", () => reject(request.signal.reason));
  });
}

/** An `onDrop` that keeps every report, in `drops`. */
export function collectDrops() {
  const drops: AuditDrop[] = [];
  return { drops, onDrop: (drop: AuditDrop) => void drops.push(drop) };
}
