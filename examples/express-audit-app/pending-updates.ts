import type { VersionClient, VersionUpdate } from "platform-integration/version";

/** Options of {@link watchPendingUpdates}. */
export interface PendingUpdatesOptions {
  /** How often to ask the Version API. */
  intervalMs: number;
  /** Stops watching. */
  signal?: AbortSignal | undefined;
  /** Told about each failed poll (after the client's retries); watching goes on. */
  onError: (error: unknown) => void;
}

/**
 * Keeps the list of pending updates in memory, refreshed in the background, so that rendering a
 * page never waits for the Integration API and keeps working while it is down. A failed poll
 * keeps the last list: a brief outage should not make the banner flicker.
 */
export function watchPendingUpdates(
  version: VersionClient<"integration">,
  { intervalMs, signal, onError }: PendingUpdatesOptions,
): { readonly latest: readonly VersionUpdate[] } {
  let latest: readonly VersionUpdate[] = [];
  void (async () => {
    for await (const updates of version.watchUpdates({ intervalMs, signal, onError })) {
      latest = updates;
    }
  })().catch(onError);
  return {
    get latest() {
      return latest;
    },
  };
}

/** The banner's HTML, or "" when nothing is pending. Release notes come from outside: escaped. */
export function renderUpdateBanner(updates: readonly VersionUpdate[]): string {
  // The platform does not document the list's order: the newest has the highest sequence.
  const newest = updates.reduce<VersionUpdate | undefined>(
    (best, update) =>
      best === undefined || (update.releaseSequence ?? 0) > (best.releaseSequence ?? 0)
        ? update
        : best,
    undefined,
  );
  if (newest === undefined) return "";
  const label = newest.version === undefined ? "A new version" : `Version ${newest.version}`;
  const more = updates.length > 1 ? ` (${updates.length} updates pending)` : "";
  const notes = newest.releaseNotes ? `: ${newest.releaseNotes}` : "";
  return `<p class="update-banner" role="status">${escapeHtml(`${label} is available${more}${notes}.`)} Ask your administrator to install it.</p>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
