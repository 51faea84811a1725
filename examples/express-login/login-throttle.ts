/** Settings of {@link LoginThrottle}. */
export interface LoginThrottleOptions {
  /** Failed logins in a row after which the account is locked. Default 5. */
  maxFailures?: number;
  /** How long a locked account stays locked, in milliseconds. Default 15 minutes. */
  lockoutMs?: number;
  /** The most usernames tracked at once; the oldest is forgotten beyond it. Default 10,000. */
  maxTracked?: number;
  /** The clock, for tests. Default `Date.now`. */
  now?: () => number;
}

interface Failures {
  count: number;
  lockedUntil: number;
}

/**
 * Locks a username after repeated failed logins: the application's job, not the platform's. The
 * Identity API only answers whether a password is right; without this, anyone could try
 * passwords as fast as the directory answers. Usernames are compared case-insensitively, as the
 * directory compares them, so `BOB` and `bob` share a counter. In memory, per process: with
 * several replicas, keep the counters in a shared store (Redis, the database).
 */
export class LoginThrottle {
  readonly #maxFailures: number;
  readonly #lockoutMs: number;
  readonly #maxTracked: number;
  readonly #now: () => number;
  // Insertion order is age order, so the first key is the one to forget when full.
  readonly #failures = new Map<string, Failures>();

  constructor(options: LoginThrottleOptions = {}) {
    this.#maxFailures = options.maxFailures ?? 5;
    this.#lockoutMs = options.lockoutMs ?? 15 * 60_000;
    this.#maxTracked = options.maxTracked ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Milliseconds until `username` may try again; 0 when it may try now. */
  retryAfterMs(username: string): number {
    const entry = this.#failures.get(key(username));
    return entry === undefined ? 0 : Math.max(0, entry.lockedUntil - this.#now());
  }

  /** Counts a failed login; the one that reaches `maxFailures` locks the account. */
  recordFailure(username: string): void {
    const name = key(username);
    const entry = this.#failures.get(name) ?? { count: 0, lockedUntil: 0 };
    // A lockout that has run out starts a fresh count.
    if (entry.lockedUntil !== 0 && entry.lockedUntil <= this.#now()) {
      entry.count = 0;
      entry.lockedUntil = 0;
    }
    entry.count += 1;
    if (entry.count >= this.#maxFailures) entry.lockedUntil = this.#now() + this.#lockoutMs;
    this.#failures.delete(name);
    this.#failures.set(name, entry);
    if (this.#failures.size > this.#maxTracked) {
      const oldest = this.#failures.keys().next().value;
      if (oldest !== undefined) this.#failures.delete(oldest);
    }
  }

  /** Forgets the failures of a user who logged in. */
  recordSuccess(username: string): void {
    this.#failures.delete(key(username));
  }
}

function key(username: string): string {
  return username.toLowerCase();
}
