import type { AuditDrop } from "../../../src/clients/audit/index.ts";

/** A `fetch` that answers nothing until its request is aborted: deliveries stay in flight. */
export function hangingFetch(request: Request): Promise<Response> {
  return new Promise((_resolve, reject) => {
    request.signal.addEventListener("abort", () => reject(request.signal.reason));
  });
}

/** An `onDrop` that keeps every report, in `drops`. */
export function collectDrops() {
  const drops: AuditDrop[] = [];
  return { drops, onDrop: (drop: AuditDrop) => void drops.push(drop) };
}
