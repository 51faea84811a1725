import type * as OpenTelemetry from "@opentelemetry/api";
import { packageVersion } from "./package-version.ts";

/** The `@opentelemetry/api` module: an optional peer dependency, never imported statically. */
export type OpenTelemetryApi = typeof OpenTelemetry;
export type Span = OpenTelemetry.Span;
export type Attributes = OpenTelemetry.Attributes;

/** The instrumentation scope every span and instrument of the SDK is created under. */
export const instrumentationScope = "platform-integration";

// A variable keeps bundlers from resolving (and failing on) a package the application may not have.
const moduleName = "@opentelemetry/api";
let loaded: OpenTelemetryApi | undefined;
let loading: Promise<boolean> | undefined;

/**
 * Loads `@opentelemetry/api` once, in the background, the first time a client or handler is
 * created; resolves whether it is installed. Until it has loaded, and for good when it is absent,
 * the SDK records nothing and pays one check per operation.
 */
export function loadOpenTelemetry(): Promise<boolean> {
  loading ??= import(/* webpackIgnore: true */ /* @vite-ignore */ moduleName).then(
    (module: OpenTelemetryApi & { default?: OpenTelemetryApi }) => {
      // CommonJS builds arrive as a default export on some runtimes.
      loaded ??= module.trace === undefined ? module.default : module;
      return loaded !== undefined;
    },
    () => false,
  );
  return loading;
}

/**
 * Replaces the loaded module: `undefined` behaves as if `@opentelemetry/api` were not installed.
 * For the SDK's own tests and benchmarks, which compare both cases in one process.
 */
export function useOpenTelemetry(api: OpenTelemetryApi | undefined): void {
  loaded = api;
  loading = Promise.resolve(api !== undefined);
}

/**
 * A getter for one client's or handler's instruments (tracer, counters, histograms): undefined
 * while OpenTelemetry is absent or no SDK has registered a tracer or meter provider, else created
 * with the global providers of that moment, and again whenever they (or the module) change. An
 * application that installs the API without an SDK pays two lookups per operation, not a span.
 */
export function lazyInstruments<T>(create: (api: OpenTelemetryApi) => T): () => T | undefined {
  void loadOpenTelemetry();
  let from: OpenTelemetryApi | undefined;
  let tracerProvider: OpenTelemetry.TracerProvider | undefined;
  let meterProvider: OpenTelemetry.MeterProvider | undefined;
  let instruments: T | undefined;
  return () => {
    if (loaded === undefined) return undefined;
    const tracing = registeredTracerProvider(loaded);
    const metering = loaded.metrics.getMeterProvider();
    if (from !== loaded || tracing !== tracerProvider || metering !== meterProvider) {
      from = loaded;
      tracerProvider = tracing;
      meterProvider = metering;
      instruments = hasSdk(loaded, tracing, metering) ? create(loaded) : undefined;
    }
    return instruments;
  };
}

/**
 * The tracer provider an SDK registered. The API's global is always its proxy provider (the same
 * object before and after registration); what changes is the proxy's delegate.
 */
function registeredTracerProvider(api: OpenTelemetryApi): OpenTelemetry.TracerProvider {
  const provider = api.trace.getTracerProvider();
  return provider instanceof api.ProxyTracerProvider ? provider.getDelegate() : provider;
}

/**
 * Whether an SDK registered either provider. Without one, a proxy provider answers with the no-op
 * tracer provider, and the meter provider's meter is the API's no-op meter.
 */
function hasSdk(
  api: OpenTelemetryApi,
  tracing: OpenTelemetry.TracerProvider,
  metering: OpenTelemetry.MeterProvider,
): boolean {
  return (
    tracing !== new api.ProxyTracerProvider().getDelegate() ||
    metering.getMeter(instrumentationScope) !== api.createNoopMeter()
  );
}

/**
 * Runs `register` once `@opentelemetry/api` has loaded (never when it is absent), for instruments
 * read on collection (observable gauges and counters), which cost nothing between collections.
 * Returns a function that undoes the registration, also when called before it happened.
 */
export function onOpenTelemetry(register: (api: OpenTelemetryApi) => () => void): () => void {
  let undo: (() => void) | undefined;
  let cancelled = false;
  void loadOpenTelemetry().then(() => {
    if (!cancelled && loaded !== undefined) undo = register(loaded);
  });
  return () => {
    cancelled = true;
    undo?.();
    undo = undefined;
  };
}

/** The SDK's tracer and meter from the global providers, named after the package and version. */
export function scopeOf(api: OpenTelemetryApi): {
  tracer: OpenTelemetry.Tracer;
  meter: OpenTelemetry.Meter;
} {
  return {
    tracer: api.trace.getTracer(instrumentationScope, packageVersion),
    meter: api.metrics.getMeter(instrumentationScope, packageVersion),
  };
}

/** Runs `fn` with `span` as the active span, so that spans started inside (a store's) nest under it. */
export function withSpan<T>(api: OpenTelemetryApi, span: Span, fn: () => T): T {
  return api.context.with(api.trace.setSpan(api.context.active(), span), fn);
}

/**
 * Ends an HTTP span per OpenTelemetry's semantic conventions: the status code, and for a failure
 * `error.type` (the status code, or the error's class) with an error status. A server span fails
 * on 5xx only (a 4xx is the client's error); a client span on 4xx and 5xx.
 */
export function endHttpSpan(
  api: OpenTelemetryApi,
  span: Span,
  kind: "server" | "client",
  outcome: { status?: number | undefined; error?: unknown },
): void {
  const { status, error } = outcome;
  if (status !== undefined) span.setAttribute("http.response.status_code", status);
  const failed =
    error !== undefined || (status !== undefined && status >= (kind === "server" ? 500 : 400));
  if (failed) {
    span.setAttribute("error.type", errorType(status, error));
    span.setStatus({ code: api.SpanStatusCode.ERROR });
  }
  span.end();
}

/** A low-cardinality name of a failure: the status code, else the error's class name. */
export function errorType(status: number | undefined, error: unknown): string {
  if (status !== undefined && status >= 400) return String(status);
  if (error instanceof Error) return error.name;
  return "_OTHER";
}
