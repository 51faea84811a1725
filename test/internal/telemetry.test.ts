import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as api from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  endHttpSpan,
  errorType,
  instrumentationScope,
  lazyInstruments,
  scopeOf,
  useOpenTelemetry,
  withSpan,
} from "../../src/internal/telemetry.ts";
import { installInMemoryOpenTelemetry } from "../support/open-telemetry.ts";

const run = promisify(execFile);
const telemetrySource = fileURLToPath(new URL("../../src/internal/telemetry.ts", import.meta.url));

afterEach(() => {
  useOpenTelemetry(undefined);
});

describe("loading @opentelemetry/api", () => {
  it("finds the installed module without a static import", async () => {
    vi.resetModules();
    const fresh = await import("../../src/internal/telemetry.ts");
    expect(await fresh.loadOpenTelemetry()).toBe(true);
  });

  it("resolves false, once, where the package cannot be found", async () => {
    // A resolve hook makes @opentelemetry/api missing for one child process.
    const hook = `import { registerHooks } from "node:module";
registerHooks({ resolve(specifier, context, next) {
  if (specifier.startsWith("@opentelemetry/")) {
    throw Object.assign(new Error("Cannot find package " + specifier), { code: "ERR_MODULE_NOT_FOUND" });
  }
  return next(specifier, context);
} });`;
    const script = `import { loadOpenTelemetry, lazyInstruments } from ${JSON.stringify(telemetrySource)};
const instruments = lazyInstruments(() => ({}));
if (await loadOpenTelemetry()) {
  const { trace } = await import("@opentelemetry/api");
  trace.setGlobalTracerProvider({ getTracer: () => trace.getTracer("test") });
}
console.log(JSON.stringify([await loadOpenTelemetry(), await loadOpenTelemetry(), instruments() ?? null]));`;
    const runScript = async (preload: string[]) => {
      const { stdout } = await run(process.execPath, [
        ...preload,
        "--input-type=module",
        "--eval",
        `globalThis.__PACKAGE_VERSION__ = "0.0.0";\n${script}`,
      ]);
      return JSON.parse(stdout) as unknown;
    };
    expect(
      await runScript(["--import", `data:text/javascript,${encodeURIComponent(hook)}`]),
    ).toEqual([false, false, null]);
    // The same script finds it when nothing hides it: the check above is the hook's doing.
    expect(await runScript([])).toEqual([true, true, {}]);
  });

  it("creates nothing while it is absent, and instruments once it is there", async () => {
    const created: unknown[] = [];
    const instruments = lazyInstruments((loaded) => {
      created.push(loaded);
      return { counter: scopeOf(loaded).meter.createCounter("c") };
    });
    expect(instruments()).toBeUndefined();
    expect(created).toEqual([]);
    const otel = installInMemoryOpenTelemetry();
    try {
      const first = instruments();
      expect(first).toBeDefined();
      expect(instruments()).toBe(first);
      expect(created).toEqual([api]);
    } finally {
      await otel.stop();
    }
    expect(instruments()).toBeUndefined();
  });

  it("creates nothing while the API is installed but no SDK registered a provider", () => {
    // Spans from the proxy provider and points on the no-op meter record nothing: building their
    // attributes on every request was the cost of merely having the API installed.
    const instruments = lazyInstruments(() => ({}));
    useOpenTelemetry(api);
    expect(instruments()).toBeUndefined();
  });

  it("instruments with the providers registered after its first use, tracer or meter alone", async () => {
    const instruments = lazyInstruments(() => ({}));
    useOpenTelemetry(api);
    expect(instruments()).toBeUndefined();
    const otel = installInMemoryOpenTelemetry();
    const first = instruments();
    expect(first).toBeDefined();
    // Either provider alone is enough.
    api.metrics.disable();
    const tracingOnly = instruments();
    expect(tracingOnly).toBeDefined();
    expect(tracingOnly).not.toBe(first);
    await otel.stop();
    useOpenTelemetry(api);
    expect(instruments()).toBeUndefined();
    api.metrics.setGlobalMeterProvider(new MeterProvider());
    try {
      expect(instruments()).toBeDefined();
    } finally {
      api.metrics.disable();
    }
  });
});

describe("spans and metrics through the global providers", () => {
  it("ends server spans per the HTTP conventions: 5xx fails, 4xx does not", async () => {
    const otel = installInMemoryOpenTelemetry();
    try {
      const { tracer } = scopeOf(api);
      for (const status of [204, 404, 503]) {
        endHttpSpan(api, tracer.startSpan(`server ${status}`), "server", { status });
      }
      endHttpSpan(api, tracer.startSpan("client 404"), "client", { status: 404 });
      endHttpSpan(api, tracer.startSpan("client error"), "client", { error: new TypeError("x") });
      const spans = otel.spans().map((span) => ({
        name: span.name,
        scope: span.instrumentationScope.name,
        status: span.status.code,
        errorType: span.attributes["error.type"],
        code: span.attributes["http.response.status_code"],
      }));
      expect(spans).toEqual([
        {
          name: "server 204",
          scope: instrumentationScope,
          status: 0,
          errorType: undefined,
          code: 204,
        },
        {
          name: "server 404",
          scope: instrumentationScope,
          status: 0,
          errorType: undefined,
          code: 404,
        },
        { name: "server 503", scope: instrumentationScope, status: 2, errorType: "503", code: 503 },
        { name: "client 404", scope: instrumentationScope, status: 2, errorType: "404", code: 404 },
        {
          name: "client error",
          scope: instrumentationScope,
          status: 2,
          errorType: "TypeError",
          code: undefined,
        },
      ]);
    } finally {
      await otel.stop();
    }
  });

  it("runs a function with the span active", async () => {
    const otel = installInMemoryOpenTelemetry();
    try {
      const span = scopeOf(api).tracer.startSpan("outer");
      const result = withSpan(api, span, () => 42);
      expect(result).toBe(42);
      span.end();
    } finally {
      await otel.stop();
    }
  });

  it("exports counters to the in-memory exporter", async () => {
    const otel = installInMemoryOpenTelemetry();
    try {
      const counter = scopeOf(api).meter.createCounter("test.count");
      counter.add(2, { kind: "a" });
      counter.add(1, { kind: "a" });
      expect(await otel.metric("test.count")).toEqual([{ attributes: { kind: "a" }, value: 3 }]);
    } finally {
      await otel.stop();
    }
  });
});

describe("errorType", () => {
  it("names a failure by status, else by the error's class", () => {
    expect(errorType(503, new Error("x"))).toBe("503");
    expect(errorType(undefined, new RangeError("x"))).toBe("RangeError");
    expect(errorType(undefined, "text")).toBe("_OTHER");
  });
});
