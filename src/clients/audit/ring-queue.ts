/**
 * A first-in first-out queue on a ring buffer: push and shift in constant time (Array#shift
 * copies the array once it is large), growing by doubling and never shrinking below its peak.
 */
export class RingQueue<T> {
  #items: (T | undefined)[] = new Array(16);
  #head = 0;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(item: T): void {
    if (this.#size === this.#items.length) this.#grow();
    this.#items[(this.#head + this.#size) & (this.#items.length - 1)] = item;
    this.#size++;
  }

  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head = (this.#head + 1) & (this.#items.length - 1);
    this.#size--;
    return item;
  }

  /** Removes and returns every item, oldest first. */
  drain(): T[] {
    const items: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) items.push(item);
    return items;
  }

  /** Every item, oldest first, leaving the queue unchanged. */
  toArray(): T[] {
    const mask = this.#items.length - 1;
    return Array.from(
      { length: this.#size },
      (_, index) => this.#items[(this.#head + index) & mask] as T,
    );
  }

  #grow(): void {
    const items = this.#items;
    const grown: (T | undefined)[] = new Array(items.length * 2);
    for (let index = 0; index < this.#size; index++) {
      grown[index] = items[(this.#head + index) & (items.length - 1)];
    }
    this.#items = grown;
    this.#head = 0;
  }
}
