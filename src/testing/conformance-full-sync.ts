import { type Session, short, testPrefix } from "./conformance-session.ts";
import { createPlatformSimulator } from "./platform-simulator.ts";
import { createUserGenerator } from "./user-generator.ts";

/**
 * The platform's whole cycle through {@link createPlatformSimulator}: the initial sync of a
 * generated directory of test users, then a round of changes with a lost answer and a duplicate
 * delivery on the way. The runner deletes every user it made, whether the sync completed or not.
 */
export async function fullSync(s: Session): Promise<void> {
  const seed = crypto.getRandomValues(new Uint32Array(1))[0] ?? 0;
  const generator = createUserGenerator({ seed, testPrefix });
  const platform = createPlatformSimulator({ target: s.target, timeoutMs: s.timeoutMs });
  const syncOptions = s.signal ? { signal: s.signal } : {};
  /** One cycle, and `retries` more while it does not complete, as the platform's next cycles. */
  const cycle = async (expected: string, retries: number) => {
    let report = await platform.sync(syncOptions);
    for (let retry = 0; retry < retries && !report.completed; retry++) {
      report = await platform.sync(syncOptions);
    }
    const stop = report.stoppedAt;
    const where = stop && [stop.message.kind, stop.message.uuid].filter(Boolean).join(" ");
    const answer = stop && (stop.error ?? `${stop.status} ${short(stop.body)}`);
    const actual = stop ? `stopped at ${where} (attempt ${stop.attempt}): ${answer}` : expected;
    s.step(expected, actual, report.completed);
  };
  const users = generator.users(20);
  for (const user of users) {
    s.track(user.uuid);
    platform.addUser(user);
  }
  await cycle("initial sync of 20 users completes", 0);
  const changes = generator.changes(13);
  for (const change of changes) {
    if (change.type === "add") s.track(change.user.uuid);
    platform.apply(change);
  }
  // At least one modify and one delete, whatever the seed drew, for the faults to hit.
  const [changed, leaving] = platform.users();
  if (changed && leaving) {
    platform.changeUser({
      uuid: changed.uuid,
      email: `${testPrefix}-moved-${seed}@example.invalid`,
    });
    platform.removeUser(leaving.uuid);
    changes.push({ type: "remove", uuid: leaving.uuid });
  }
  platform.injectFault({ type: "drop-response", on: "modify" });
  platform.injectFault({ type: "duplicate", on: "delete" });
  await cycle("15 changes complete after a lost answer and a duplicate", 1);
  const present = platform.users();
  const kept = new Set(present.map((user) => user.uuid));
  const removed = changes.flatMap((change) =>
    change.type === "remove" && !kept.has(change.uuid) ? [change.uuid] : [],
  );
  await s.stored(present, removed);
}
