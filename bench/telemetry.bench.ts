// What OpenTelemetry support costs the two hot paths: audit record(), and a create through the
// provisioning handler's plain-data core (handle(), MemoryUserStore, 1,000 distinct uuids), each
// in its own child process per mode, modes alternating over rounds (median counts):
//
//   absent  @opentelemetry/api cannot be found (a resolve hook hides it): what most users run;
//   noop    the API is installed but no SDK registered (its no-op tracer and meter);
//   sdk     the SDK registered, every span and metric recorded (batched, then discarded);
//   before  with --before DIST: a build of the package from before telemetry, OpenTelemetry hidden.
//
// Ratios are against `absent`; `before` shows whether `absent` changed anything.
import { spawn } from "node:child_process";
import { registerHooks } from "node:module";

type Mode = "absent" | "noop" | "sdk" | "before";
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

if (process.argv[2] === "measure") {
  await measure(process.argv[3] as Mode, process.argv[4] as string);
} else {
  await main();
}

async function main(): Promise<void> {
  const beforeIndex = process.argv.indexOf("--before");
  const before = beforeIndex === -1 ? undefined : process.argv[beforeIndex + 1];
  const dist = new URL("../dist/", import.meta.url).pathname;
  const modes: Mode[] = ["absent", "noop", "sdk", ...(before ? (["before"] as const) : [])];
  const results = new Map<Mode, { recordNs: number[]; handleNs: number[] }>();
  for (let round = 0; round < rounds; round++) {
    for (const mode of modes) {
      const figures = await child(mode, mode === "before" ? `${before}/` : dist);
      const entry = results.get(mode) ?? { recordNs: [], handleNs: [] };
      entry.recordNs.push(figures.recordNs);
      entry.handleNs.push(figures.handleNs);
      results.set(mode, entry);
    }
  }
  const base = results.get("absent") as { recordNs: number[]; handleNs: number[] };
  console.log(`median of ${rounds} rounds, one process per mode and round\n`);
  console.log("  mode     record() ns  ratio   handle() create ns  ratio");
  for (const [mode, { recordNs, handleNs }] of results) {
    const record = median(recordNs);
    const handle = median(handleNs);
    console.log(
      `  ${mode.padEnd(8)} ${record.toFixed(0).padStart(11)}  ${(record / median(base.recordNs)).toFixed(2)}   ${handle.toFixed(0).padStart(18)}  ${(handle / median(base.handleNs)).toFixed(2)}`,
    );
  }
}

function child(mode: Mode, dist: string): Promise<{ recordNs: number; handleNs: number }> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(
      process.execPath,
      [new URL(import.meta.url).pathname, "measure", mode, dist],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    process_.stdout.on("data", (chunk) => {
      out += chunk;
    });
    process_.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${mode} exited with ${code}`)),
    );
  });
}

async function measure(mode: Mode, dist: string): Promise<void> {
  if (mode === "absent" || mode === "before") {
    registerHooks({
      resolve(specifier, context, next) {
        if (specifier.startsWith("@opentelemetry/")) {
          throw Object.assign(new Error(`Cannot find package '${specifier}'`), {
            code: "ERR_MODULE_NOT_FOUND",
          });
        }
        return next(specifier, context);
      },
    });
  } else if (mode === "sdk") {
    await registerSdk();
  }
  const { createAuditClient } = await import(`${dist}audit/index.js`);
  const { createProvisioningHandler, MemoryUserStore } = await import(
    `${dist}provisioning/index.js`
  );
  const audit = createAuditClient({
    baseUrl: "http://audit.invalid",
    fetch: async () => new Response(null, { status: 201 }),
  });
  const handler = createProvisioningHandler({ store: new MemoryUserStore() });
  // The SDK loads @opentelemetry/api in the background: let it settle before measuring.
  await new Promise((resolve) => setTimeout(resolve, 50));

  const event = {
    action: "user.login.success",
    name: "user.login",
    description: "john@example.com logged in successfully",
    ipAddress: "192.30.252.12",
  };
  const recordNs = await perCall(
    async (count) => {
      for (let index = 0; index < count; index++) audit.record(event);
    },
    () => audit.flush(),
  );
  const encoder = new TextEncoder();
  const requests = Array.from({ length: 1000 }, (_, index) => ({
    method: "POST",
    path: "/v1/user/create",
    headers: { "content-type": "application/json" },
    body: encoder.encode(
      JSON.stringify({
        uuid: `97e86d2d-b076-4d87-b4f6-${String(index).padStart(12, "0")}`,
        username: `bob${index}`,
        password: "password123",
        email: `bob${index}@acmecorp.com`,
      }),
    ),
  }));
  let next = 0;
  const handleNs = await perCall(
    async (count) => {
      for (let index = 0; index < count; index++) {
        await handler.handle(requests[next++ % requests.length]);
      }
    },
    async () => {},
    200,
  );
  process.stdout.write(JSON.stringify({ recordNs, handleNs }));
  await audit.close();
  process.exit(0);
}

/** The OpenTelemetry SDK as an application sets it up: spans batched, metrics read periodically. */
async function registerSdk(): Promise<void> {
  const api = await import("@opentelemetry/api");
  const { BasicTracerProvider, BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
  const { MeterProvider, PeriodicExportingMetricReader, AggregationTemporality } = await import(
    "@opentelemetry/sdk-metrics"
  );
  const discard = {
    export: (_items: unknown, done: (result: { code: number }) => void) => done({ code: 0 }),
    shutdown: async () => {},
    forceFlush: async () => {},
    selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
  };
  api.trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(discard)] }),
  );
  api.metrics.setGlobalMeterProvider(
    new MeterProvider({
      readers: [
        new PeriodicExportingMetricReader({ exporter: discard, exportIntervalMillis: 1_000 }),
      ],
    }),
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** The median cost of one call in nanoseconds, over `samples` batches of `batch` calls. */
async function perCall(
  run: (count: number) => Promise<void>,
  settle: () => Promise<unknown>,
  samples = 400,
  batch = 1_000,
): Promise<number> {
  const costs: number[] = [];
  for (let sample = 0; sample < samples; sample++) {
    await settle();
    const start = process.hrtime.bigint();
    await run(batch);
    costs.push(Number(process.hrtime.bigint() - start) / batch);
  }
  return median(costs.slice(samples / 4));
}
