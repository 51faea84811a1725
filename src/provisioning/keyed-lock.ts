/**
 * One lock per key: holders of a key take turns in the order they asked, while different keys are
 * held in parallel. A key is forgotten as soon as its last holder releases it, so memory follows
 * the number of keys busy right now, never the number ever seen. Taking a free key allocates no
 * promise: this sits on the path of every create.
 */
export class KeyedLock {
  /** Present while the key is held: null, or the turns of those waiting, in order. */
  readonly #waiting = new Map<string, (() => void)[] | null>();

  /**
   * Takes `key`: undefined when it was free, else a promise that resolves on this caller's turn.
   * Either way the caller then holds the key and must call {@link release} exactly once.
   */
  acquire(key: string): Promise<void> | undefined {
    const waiting = this.#waiting.get(key);
    if (waiting === undefined) {
      this.#waiting.set(key, null);
      return undefined;
    }
    return new Promise((turn) => {
      if (waiting === null) this.#waiting.set(key, [turn]);
      else waiting.push(turn);
    });
  }

  /** Hands `key` to the next waiter, or frees it. */
  release(key: string): void {
    const next = this.#waiting.get(key)?.shift();
    if (next === undefined) this.#waiting.delete(key);
    else next();
  }

  /** How many keys are held now. */
  get size(): number {
    return this.#waiting.size;
  }
}
