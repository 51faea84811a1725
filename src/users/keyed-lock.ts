/**
 * One lock per key: holders of a key take turns in the order they asked, while different keys are
 * held in parallel. A key is forgotten as soon as its last holder releases it, so memory follows
 * the number of keys busy right now, never the number ever seen. This sits on the path of every
 * create, so taking a free key allocates nothing, and while no other key is held (the platform
 * sends one message at a time) it touches no Map either.
 */
export class KeyedLock {
  /** The key held when it was free of company, and the turns of those waiting for it. */
  #soloKey: string | undefined;
  #soloWaiting: (() => void)[] = [];
  /** The other keys held: null, or the turns of those waiting, in order. */
  readonly #waiting = new Map<string, (() => void)[] | null>();

  /**
   * Takes `key`: undefined when it was free, else a promise that resolves on this caller's turn.
   * Either way the caller then holds the key and must call {@link release} exactly once.
   */
  acquire(key: string): Promise<void> | undefined {
    if (key === this.#soloKey) {
      const waiting = this.#soloWaiting;
      return new Promise((turn) => waiting.push(turn));
    }
    const waiting = this.#waiting.size === 0 ? undefined : this.#waiting.get(key);
    if (waiting !== undefined) {
      return new Promise((turn) => {
        if (waiting === null) this.#waiting.set(key, [turn]);
        else waiting.push(turn);
      });
    }
    if (this.#soloKey === undefined) this.#soloKey = key;
    else this.#waiting.set(key, null);
    return undefined;
  }

  /**
   * Takes `key` when it is free and answers true; answers false, taking nothing and queueing
   * nothing, when it is held. For a caller that must never wait (it may hold another key).
   */
  tryAcquire(key: string): boolean {
    if (key === this.#soloKey || this.#waiting.has(key)) return false;
    if (this.#soloKey === undefined) this.#soloKey = key;
    else this.#waiting.set(key, null);
    return true;
  }

  /** Hands `key` to the next waiter, or frees it. */
  release(key: string): void {
    if (key === this.#soloKey) {
      const next = this.#soloWaiting.shift();
      if (next === undefined) this.#soloKey = undefined;
      else next();
      return;
    }
    const next = this.#waiting.get(key)?.shift();
    if (next === undefined) this.#waiting.delete(key);
    else next();
  }

  /** How many keys are held now. */
  get size(): number {
    return this.#waiting.size + (this.#soloKey === undefined ? 0 : 1);
  }
}
