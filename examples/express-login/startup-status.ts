import type { ConsoleClient } from "platform-integration/console";

/** Reports a step's progress: `done` of `total` items. */
export type Progress = (done: number, total: number) => void;

/** Options of {@link runWithStartupStatus}. */
export interface StartupStatusOptions {
  /** What is being done, e.g. "Importing users". */
  label: string;
  /** Told when the console could not be updated: a status is informative, never fatal. */
  onStatusError?: (error: unknown) => void;
}

/**
 * Runs a start-up task (here the initial user sync) while the admin console's status tile shows
 * its progress: "Importing users: 1200 of 5000". A failure is shown with severity "error", which
 * makes the platform stop starting the application and show the message; then it is rethrown.
 * Updates go out one at a time and only the latest waiting one is sent, so a fast task never
 * queues hundreds of requests.
 */
export async function runWithStartupStatus<T>(
  platformConsole: ConsoleClient,
  task: (progress: Progress) => Promise<T>,
  { label, onStatusError = () => {} }: StartupStatusOptions,
): Promise<T> {
  let sending: Promise<void> = Promise.resolve();
  let waiting: string | undefined;
  const show = (message: string) => {
    const first = waiting === undefined;
    waiting = message;
    if (!first) return;
    sending = sending.then(async () => {
      const next = waiting as string;
      waiting = undefined;
      await platformConsole.setStartupStatus(next).catch(onStatusError);
    });
  };

  show(`${label}: starting`);
  try {
    const result = await task((done, total) => show(`${label}: ${done} of ${total}`));
    show(`${label}: done`);
    await sending;
    return result;
  } catch (error) {
    await sending;
    await platformConsole
      .setStartupStatus(
        `${label} failed: ${error instanceof Error ? error.message : String(error)}`,
        "error",
      )
      .catch(onStatusError);
    throw error;
  }
}
