import * as api from "@opentelemetry/api";
import {
  AggregationTemporality,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { useOpenTelemetry } from "../../src/internal/telemetry.ts";

/** One exported data point: its attributes and value (a number, or a histogram's count). */
export interface Point {
  attributes: api.Attributes;
  value: number;
}

/**
 * OpenTelemetry's SDK with its in-memory exporters, registered as the global providers: spans as
 * they end, metrics on `collect()`. `stop()` unregisters them and makes the API absent again.
 */
export function installInMemoryOpenTelemetry() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(spans)],
  });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 2_147_483_647,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  api.trace.setGlobalTracerProvider(tracerProvider);
  api.metrics.setGlobalMeterProvider(meterProvider);
  useOpenTelemetry(api);
  /** The metrics named `name`, after a collection. */
  async function collect(name: string): Promise<MetricData[]> {
    metricExporter.reset();
    await reader.forceFlush();
    return metricExporter
      .getMetrics()
      .flatMap((resource) => resource.scopeMetrics)
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === name);
  }
  return {
    api,
    spans: () => spans.getFinishedSpans(),
    resetSpans: () => spans.reset(),
    /** Every point of the metric `name`, after a collection. */
    async metric(name: string): Promise<Point[]> {
      return (await collect(name)).flatMap((metric) =>
        metric.dataPoints.map((point) => {
          const value = point.value as number | { count: number };
          return {
            attributes: point.attributes,
            value: typeof value === "number" ? value : value.count,
          };
        }),
      );
    },
    /** The histogram `name` after a collection: its unit, and each point's count, sum and buckets. */
    async histogram(name: string) {
      const [metric] = await collect(name);
      if (metric === undefined) return undefined;
      const points = metric.dataPoints.map((point) => {
        const value = point.value as Histogram;
        const { count, sum, buckets } = value;
        return { attributes: point.attributes, count, sum, boundaries: buckets.boundaries };
      });
      return { unit: metric.descriptor.unit, points };
    },
    async stop() {
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
      api.trace.disable();
      api.metrics.disable();
      useOpenTelemetry(undefined);
    },
  };
}
