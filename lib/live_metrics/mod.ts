/**
 * Live metrics: a registry of counters, gauges and histograms (Prometheus text 0.0.4 and
 * snapshots), the label guard that keeps secrets out of labels, the bucket bounds for LLM
 * latencies, and the remote write 1.0 pusher.
 * @module
 */
export { checkBuckets, LATENCY_BUCKETS_SECONDS, TOKEN_GAP_BUCKETS_SECONDS } from "./buckets.ts";
export { assertSafeLabel, labelNameProblem, LabelRefusedError, labelValueProblem, MAX_LABEL_VALUE_LENGTH } from "./label_guard.ts";
export { Counter, Gauge, Histogram, MetricsRegistry, PROM_TEXT_CONTENT_TYPE } from "./registry.ts";
export type { RegistryOptions } from "./registry.ts";
export { CounterChild, escapeHelp, escapeLabelValue, formatPromValue, GaugeChild, HistogramChild } from "./series.ts";
export type { HistogramOptions, Label, Labels, MetricOptions, SeriesSample, Snapshot } from "./series.ts";
export { MAX_NOTE_LENGTH, RemoteWriter } from "./remote_write.ts";
export type { FetchLike, RemoteWriterCloseOptions, RemoteWriterOptions, RemoteWriteStats } from "./remote_write.ts";
export { encodeRemoteWriteBody, encodeWriteRequest, REMOTE_WRITE_HEADERS, snappyCompress, snappyUncompress } from "./write_request.ts";
