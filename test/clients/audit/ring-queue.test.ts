import { describe, expect, it } from "vitest";
import { RingQueue } from "../../../src/clients/audit/ring-queue.ts";

describe("RingQueue", () => {
  it("keeps first-in first-out order, and lists it, while wrapping around and growing", () => {
    const queue = new RingQueue<number>();
    const model: number[] = [];
    // Interleaves shifts with pushes so that the ring wraps around before and after it grows.
    for (let step = 0; step < 500; step++) {
      if (step % 3 === 2) {
        expect(queue.shift()).toBe(model.shift());
      } else {
        queue.push(step);
        model.push(step);
      }
      expect(queue.size).toBe(model.length);
      expect(queue.toArray()).toEqual(model);
    }
    expect(queue.drain()).toEqual(model);
    expect(queue.size).toBe(0);
    expect(queue.shift()).toBeUndefined();
  });
});
