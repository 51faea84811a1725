import { describe, expect, it } from "vitest";
import { BoundedBuffer } from "../../../src/clients/audit/buffer.ts";

function makeBuffer(maxItems = 3, maxBytes = 100) {
  const events: string[] = [];
  const buffer = new BoundedBuffer<string>({
    maxItems,
    maxBytes,
    onBusy: () => events.push("busy"),
    onIdle: () => events.push("idle"),
  });
  return { buffer, events };
}

describe("BoundedBuffer", () => {
  it("hands entries out first in, first out, counting queued and in-flight ones", () => {
    const { buffer } = makeBuffer();
    expect(buffer.offer("a", 10)).toBe(true);
    expect(buffer.offer("b", 20)).toBe(true);
    const first = buffer.take();
    expect(first).toEqual({ item: "a", bytes: 10 });
    expect(buffer).toMatchObject({ queued: 1, inFlight: 1, bytes: 30, isIdle: false });
    expect(buffer.take()?.item).toBe("b");
    expect(buffer.take()).toBeUndefined();
  });

  it("refuses an entry past the count bound, in-flight entries included", () => {
    const { buffer } = makeBuffer(2);
    buffer.offer("a", 1);
    buffer.take();
    buffer.offer("b", 1);
    expect(buffer.offer("c", 1)).toBe(false);
    expect(buffer).toMatchObject({ queued: 1, inFlight: 1, bytes: 2 });
  });

  it("takes an entry larger than the byte bound on its own, only while it holds nothing", () => {
    const { buffer, events } = makeBuffer(10, 100);
    buffer.offer("a", 10);
    expect(buffer.offerAlone("large", 500)).toBe(false);
    buffer.settle(buffer.take()!);
    expect(events).toEqual(["busy", "idle"]);
    expect(buffer.offerAlone("large", 500)).toBe(true);
    expect(events).toEqual(["busy", "idle", "busy"]);
    expect(buffer).toMatchObject({ queued: 1, bytes: 500 });
    expect(buffer.offer("b", 1)).toBe(false);
    expect(buffer.offerAlone("b", 1)).toBe(false);
    buffer.settle(buffer.take()!);
    expect(buffer).toMatchObject({ queued: 0, bytes: 0, isIdle: true });
  });

  it("refuses an entry past the byte bound, and accepts one that fits exactly", () => {
    const { buffer } = makeBuffer(10, 100);
    expect(buffer.offer("a", 60)).toBe(true);
    expect(buffer.offer("b", 41)).toBe(false);
    expect(buffer.offer("c", 40)).toBe(true);
    expect(buffer.bytes).toBe(100);
  });

  it("releases bytes on settle and drain, and reports busy and idle transitions once each", () => {
    const { buffer, events } = makeBuffer();
    buffer.offer("a", 10);
    buffer.offer("b", 20);
    const entry = buffer.take();
    if (entry === undefined) throw new Error("expected an entry");
    expect(buffer.drainQueued()).toEqual(["b"]);
    expect(buffer).toMatchObject({ queued: 0, inFlight: 1, bytes: 10 });
    buffer.settle(entry);
    // Settling twice is harmless: the bytes are not released again.
    buffer.settle(entry);
    expect(buffer).toMatchObject({ queued: 0, inFlight: 0, bytes: 0, isIdle: true });
    expect(events).toEqual(["busy", "idle"]);
  });

  it("stays busy when settling refills the room it frees: no idle transition, waiters wait on", async () => {
    const { buffer, events } = makeBuffer(1, 10);
    buffer.offer("a", 10);
    const first = buffer.take();
    if (first === undefined) throw new Error("expected an entry");
    let idle: boolean | undefined;
    void buffer.whenIdle({ timeoutMs: Number.POSITIVE_INFINITY }).then((value) => {
      idle = value;
    });
    let offered: boolean | undefined;
    buffer.settle(first, () => {
      offered = buffer.offer("b", 10); // the entry's count and bytes are free by now
    });
    expect(offered).toBe(true);
    await Promise.resolve();
    expect(idle).toBeUndefined();
    expect(events).toEqual(["busy"]);
    const second = buffer.take();
    if (second === undefined) throw new Error("expected an entry");
    buffer.settle(second);
    await Promise.resolve();
    expect(idle).toBe(true);
    expect(events).toEqual(["busy", "idle"]);
    // Emptying an empty buffer is no transition either.
    buffer.drainQueued();
    expect(events).toEqual(["busy", "idle"]);
  });

  it("puts a requeued entry back at the end, still counted", () => {
    const { buffer } = makeBuffer();
    buffer.offer("a", 10);
    buffer.offer("b", 10);
    const entry = buffer.take();
    if (entry === undefined) throw new Error("expected an entry");
    buffer.requeue(entry);
    expect(buffer).toMatchObject({ queued: 2, inFlight: 0, bytes: 20 });
    expect(buffer.snapshot()).toEqual(["b", "a"]);
    expect(buffer.take()?.item).toBe("b");
    expect(buffer.snapshot()).toEqual(["b", "a"]);
  });

  it("wakes idle waiters when the last entry settles, and times out or aborts otherwise", async () => {
    const { buffer } = makeBuffer();
    expect(await buffer.whenIdle({ timeoutMs: 0 })).toBe(true);
    buffer.offer("a", 1);
    expect(await buffer.whenIdle({ timeoutMs: 1 })).toBe(false);
    expect(await buffer.whenIdle({ timeoutMs: 1_000, signal: AbortSignal.abort() })).toBe(false);
    const controller = new AbortController();
    const aborted = buffer.whenIdle({
      timeoutMs: Number.POSITIVE_INFINITY,
      signal: controller.signal,
    });
    controller.abort();
    expect(await aborted).toBe(false);
    const waiting = buffer.whenIdle({ timeoutMs: Number.POSITIVE_INFINITY });
    const entry = buffer.take();
    if (entry === undefined) throw new Error("expected an entry");
    buffer.settle(entry);
    expect(await waiting).toBe(true);
  });

  it("works without busy and idle hooks", async () => {
    const buffer = new BoundedBuffer<string>({ maxItems: 1, maxBytes: 10 });
    expect(buffer.offer("a", 1)).toBe(true);
    const entry = buffer.take();
    if (entry === undefined) throw new Error("expected an entry");
    buffer.settle(entry);
    expect(await buffer.whenIdle({ timeoutMs: 0 })).toBe(true);
  });

  // Catches: a drain that leaves the bytes counted, forgets the idle transition, or lets a late
  // settle of a drained entry count (the sink client reports each event once).
  it("drains what is in flight: its items returned, a later settle of one changes nothing", async () => {
    const { buffer, events } = makeBuffer();
    buffer.offer("a", 10);
    buffer.offer("b", 20);
    const first = buffer.take();
    const second = buffer.take();
    const idle = buffer.whenIdle({ timeoutMs: Number.POSITIVE_INFINITY });
    expect(buffer.drainInFlight()).toEqual(["a", "b"]);
    expect([buffer.inFlight, buffer.bytes, events]).toEqual([0, 0, ["busy", "idle"]]);
    expect(await idle).toBe(true);
    expect(first && buffer.settle(first)).toBe(false);
    expect(buffer.bytes).toBe(0);
    buffer.offer("c", 5);
    const third = buffer.take();
    expect(third && buffer.settle(third)).toBe(true);
    expect(second && buffer.settle(second)).toBe(false);
    expect(events).toEqual(["busy", "idle", "busy", "idle"]);
  });
});
