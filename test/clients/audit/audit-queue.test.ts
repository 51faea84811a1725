import { describe, expect, it } from "vitest";
import { AuditQueue } from "../../../src/clients/audit/audit-queue.ts";

describe("AuditQueue without a spool", () => {
  it("feeds delivery on each admitted event and refuses past its bounds", () => {
    let fed = 0;
    const queue = new AuditQueue({
      maxItems: 2,
      maxBytes: 1024,
      spool: undefined,
      onBusy: () => {},
      onIdle: () => {},
      onFed: () => fed++,
      onLost: () => {},
    });
    expect(queue.add('{"action":"a.1"}', 16)).toBeUndefined();
    expect(queue.add('{"action":"a.2"}', 16)).toBeUndefined();
    expect(queue.add('{"action":"a.3"}', 16)).toBe("overflow");
    expect(fed).toBe(2);
    const entry = queue.take();
    expect(entry?.item.body).toBe('{"action":"a.1"}');
    expect([queue.queued, queue.inFlight, queue.onDisk]).toEqual([1, 1, undefined]);
    if (entry !== undefined) queue.release(entry);
    expect([queue.queued, queue.inFlight]).toEqual([1, 0]);
  });
});
