import { describe, expect, it } from "vitest";
import { KeyedQueue } from "../../src/provisioning/keyed-queue.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("KeyedQueue", () => {
  it("runs one key's tasks one at a time, in order, and other keys alongside", async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    const task = (name: string, waits: number) => async () => {
      log.push(`start ${name}`);
      for (let index = 0; index < waits; index++) await tick();
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([
      queue.run("a", task("a1", 3)),
      queue.run("a", task("a2", 0)),
      queue.run("b", task("b1", 1)),
    ]);
    expect(results).toEqual(["a1", "a2", "b1"]);
    expect(log.indexOf("end a1")).toBeLessThan(log.indexOf("start a2"));
    expect(log.indexOf("start b1")).toBeLessThan(log.indexOf("end a1"));
  });

  it("goes on after a failed task and passes its error to the caller", async () => {
    const queue = new KeyedQueue();
    const failed = queue.run("a", () => Promise.reject(new Error("boom")));
    const next = queue.run("a", async () => "next");
    await expect(failed).rejects.toThrow("boom");
    await expect(next).resolves.toBe("next");
  });

  it("forgets a key once its last task settles", async () => {
    const queue = new KeyedQueue();
    const runs = Array.from({ length: 100 }, (_, index) =>
      queue.run(`k${index % 10}`, async () => index),
    );
    expect(queue.size).toBe(10);
    await Promise.all(runs);
    await tick();
    expect(queue.size).toBe(0);
  });
});
