import { describe, expect, it } from "vitest";
import { KeyedLock } from "../../src/users/keyed-lock.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("KeyedLock", () => {
  it("gives one key to one holder at a time, in the order asked, and other keys alongside", async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const hold = async (key: string, name: string, waits: number) => {
      const turn = lock.acquire(key);
      if (turn !== undefined) await turn;
      log.push(`start ${name}`);
      for (let index = 0; index < waits; index++) await tick();
      log.push(`end ${name}`);
      lock.release(key);
    };
    await Promise.all([
      hold("a", "a1", 3),
      hold("a", "a2", 0),
      hold("a", "a3", 1),
      hold("b", "b1", 1),
    ]);
    expect(log.filter((line) => / a\d$/.test(line))).toEqual([
      "start a1",
      "end a1",
      "start a2",
      "end a2",
      "start a3",
      "end a3",
    ]);
    expect(log.indexOf("start b1")).toBeLessThan(log.indexOf("end a1"));
  });

  it("takes a free key without a promise, and forgets a key once released", async () => {
    const lock = new KeyedLock();
    expect(lock.acquire("a")).toBeUndefined();
    const second = lock.acquire("a");
    expect(second).toBeInstanceOf(Promise);
    expect(lock.size).toBe(1);
    lock.release("a");
    await second;
    expect(lock.size).toBe(1);
    lock.release("a");
    expect(lock.size).toBe(0);
    expect(lock.acquire("a")).toBeUndefined();
  });

  it("does not grow with the number of keys ever used", async () => {
    const lock = new KeyedLock();
    for (let index = 0; index < 10_000; index++) {
      lock.acquire(`user-${index}`);
      lock.release(`user-${index}`);
    }
    expect(lock.size).toBe(0);
  });

  // Catches: a key released while another is held staying in the map (memory growing with every
  // uuid seen while the platform sends several messages at once).
  it("forgets keys released while another key is held", () => {
    const lock = new KeyedLock();
    lock.acquire("held");
    for (let index = 0; index < 1000; index++) {
      lock.acquire(`user-${index}`);
      lock.release(`user-${index}`);
    }
    expect(lock.size).toBe(1);
    lock.release("held");
    expect(lock.size).toBe(0);
  });
});
