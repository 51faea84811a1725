// What the audit benchmarks share: the documented example event, and how they measure.

/** The platform's documented example event, in the SDK's camelCase. */
export const event = {
  name: "user.login",
  title: "User Login Success",
  description: "john@example.com logged in successfully",
  action: "user.login.success",
  ipAddress: "192.30.252.12",
};

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** The median cost of one call, in nanoseconds, over `samples` batches of `batch` calls. */
export async function perCall(
  run: (count: number) => void,
  settle: () => Promise<unknown>,
  samples = 400,
  batch = 1_000,
) {
  const costs: number[] = [];
  for (let sample = 0; sample < samples; sample++) {
    await settle();
    const start = process.hrtime.bigint();
    run(batch);
    costs.push(Number(process.hrtime.bigint() - start) / batch);
  }
  return median(costs.slice(samples / 4));
}

/** The baseline of delivery: `events` plain fetch POSTs of the event from `concurrency` loops. */
export async function postWithFetch(baseUrl: string, events: number, concurrency: number) {
  const body = JSON.stringify(event);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let index = 0; index < events / concurrency; index++) {
        const response = await fetch(`${baseUrl}/audit/v1/event`, {
          method: "POST",
          body,
          headers: { "content-type": "application/json" },
        });
        await response.text();
      }
    }),
  );
}
