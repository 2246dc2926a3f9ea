// Where spans go, from --otlp-endpoint or the standard OTEL_EXPORTER_OTLP_* variables. A leaf
// module: a process that exports nothing decides so without loading OpenTelemetry.

/** The OTLP/HTTP traces URL asked for, or undefined when export is not asked for. */
export function otlpTracesUrl(endpoint: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  return endpoint ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base}/v1/traces` : undefined);
}
