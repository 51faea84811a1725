import * as api from "@opentelemetry/api";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
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
  return {
    api,
    spans: () => spans.getFinishedSpans(),
    resetSpans: () => spans.reset(),
    /** Every point of the metric `name`, after a collection. */
    async metric(name: string): Promise<Point[]> {
      metricExporter.reset();
      await reader.forceFlush();
      const points: Point[] = [];
      for (const resource of metricExporter.getMetrics()) {
        for (const scope of resource.scopeMetrics) {
          for (const metric of scope.metrics) {
            if (metric.descriptor.name !== name) continue;
            for (const point of metric.dataPoints) {
              const value = point.value as number | { count: number };
              points.push({
                attributes: point.attributes,
                value: typeof value === "number" ? value : value.count,
              });
            }
          }
        }
      }
      return points;
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
