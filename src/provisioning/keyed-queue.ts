const ignore = () => {};

/**
 * Runs tasks one at a time per key, in the order they were queued; tasks on different keys run in
 * parallel. A key's entry is dropped as soon as its last task settles, so memory follows the
 * number of keys busy right now, never the number ever seen.
 */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<void>>();

  /** Queues `task` behind the tasks already queued on `key`; settles as the task does. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    // A failed task must not block the next one: the tail only records that a task settled.
    const result = previous === undefined ? task() : previous.then(task);
    const tail = result.then(ignore, ignore);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** How many keys have a task queued or running. */
  get size(): number {
    return this.#tails.size;
  }
}
