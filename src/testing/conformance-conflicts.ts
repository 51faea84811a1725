// The opt-in conflict check of the conformance suite: a directory admin swaps two users' emails,
// so the first modify brings a value the second user still holds. An application with a unique
// email must neither refuse it (4xx stalls the directory for good) nor answer 503 for ever (the
// platform pauses every later change behind it); with readUser, both users end swapped.
import { type Check, create, modify, testPrefix } from "./conformance-session.ts";

const email = (local: string) => `${testPrefix}-${local}@example.invalid`;

/** Two users swap emails: both modifies must succeed, and the stored emails end swapped. */
export const swapCheck: Check = {
  name: "a swap of two users' emails does not stall the directory",
  rule: "the platform pauses the directory at any answer but success (unique values)",
  effects: true,
  async run(s) {
    const [a, b] = [s.uuid("swap-a"), s.uuid("swap-b")];
    const [first, second] = [email(`swap-${a.slice(-12)}`), email(`swap-${b.slice(-12)}`)];
    await s.call("create a", create({ uuid: a, email: first }), 201);
    await s.call("create b", create({ uuid: b, email: second }), 201);
    await s.call(
      "modify a to b's email (b still holds it)",
      modify({ uuid: a, email: second }),
      204,
    );
    await s.call("modify b to a's old email", modify({ uuid: b, email: first }), 204);
    await s.stored([
      { uuid: a, email: second },
      { uuid: b, email: first },
    ]);
  },
};
