// The clients' OpenTelemetry spans and metrics per attempt, when @opentelemetry/api is present.
import {
  endHttpSpan,
  errorType,
  lazyInstruments,
  type OpenTelemetryApi,
  scopeOf,
} from "../../internal/telemetry.ts";

/** What one attempt ended with: an answer's status, or the error of a failure to get one. */
export interface AttemptOutcome {
  status?: number;
  error?: unknown;
}

/**
 * Client-side telemetry of the Integration API, per OpenTelemetry's HTTP conventions: a CLIENT
 * span for each request sent (a retry is a new span with `http.request.resend_count`), and the
 * `http.client.request.duration` histogram. Nothing is built while OpenTelemetry is absent.
 */
export function createClientTelemetry(): {
  /** Starts one attempt's span; undefined without OpenTelemetry. Call the result when it ends. */
  startAttempt(
    method: string,
    redactedUrl: string,
    resendCount: number,
  ): ((outcome: AttemptOutcome) => void) | undefined;
} {
  const instruments = lazyInstruments((api: OpenTelemetryApi) => {
    const { tracer, meter } = scopeOf(api);
    const duration = meter.createHistogram("http.client.request.duration", {
      description: "Duration of the Integration API's HTTP requests, one per attempt.",
      unit: "s",
      advice: {
        explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      },
    });
    return { api, tracer, duration };
  });

  // Every call of a client goes to one origin: parse it once, not per attempt.
  let lastOrigin = "";
  let server = { "server.address": "", "server.port": 0 };

  return {
    startAttempt(method, redactedUrl, resendCount) {
      const tools = instruments();
      if (tools === undefined) return undefined;
      const { api, tracer, duration } = tools;
      if (!redactedUrl.startsWith(lastOrigin) || lastOrigin === "") {
        const url = new URL(redactedUrl);
        lastOrigin = `${url.origin}/`;
        const defaultPort = url.protocol === "https:" ? 443 : 80;
        server = {
          "server.address": url.hostname,
          "server.port": url.port === "" ? defaultPort : Number(url.port),
        };
      }
      const common = { "http.request.method": method, ...server };
      const span = tracer.startSpan(method, {
        kind: api.SpanKind.CLIENT,
        attributes: {
          ...common,
          "url.full": redactedUrl,
          ...(resendCount > 0 ? { "http.request.resend_count": resendCount } : {}),
        },
      });
      const started = performance.now();
      return (outcome) => {
        const { status } = outcome;
        endHttpSpan(api, span, "client", outcome);
        const failed = outcome.error !== undefined || (status !== undefined && status >= 400);
        duration.record((performance.now() - started) / 1000, {
          ...common,
          ...(status === undefined ? {} : { "http.response.status_code": status }),
          ...(failed ? { "error.type": errorType(status, outcome.error) } : {}),
        });
      };
    },
  };
}
