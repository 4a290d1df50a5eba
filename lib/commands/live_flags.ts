/**
 * The live-metrics flags every measuring command takes (`bench serve`, `load-trial run`; `bench
 * rounds` passes them to each cell): `--metrics-listen`, `--prometheus-remote-write` with its
 * headers, `--push-interval-s`, `--metrics-linger-s`. Parser only: how they become the run's
 * options is live_options.ts, so the parser loads no metrics code.
 * @module
 */
import { message } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import { option } from "@optique/core/primitives";
import { float, string } from "@optique/core/valueparser";

/** Builds the flags, to spread into a command's object (fresh per call). */
export const liveFlags = () => ({
  metricsListen: optional(option("--metrics-listen", string({ metavar: "HOST:PORT" }), {
    description: message`Serve ik's own Prometheus metrics at http://HOST:PORT/metrics while the run goes (:PORT binds 127.0.0.1; port 0 picks one and says it).`,
  })),
  remoteWrite: optional(option("--prometheus-remote-write", string({ metavar: "URL" }), {
    description: message`Push the same series to this Prometheus remote-write 1.0 endpoint (e.g. http://prom:9090/api/v1/write) every --push-interval-s and at the end; failures are retried and counted, never fatal.`,
  })),
  remoteWriteHeaders: multiple(option("--prometheus-remote-write-header", string({ metavar: "K=V" }), {
    description: message`A header for the remote write (auth); the value is treated as a secret (never stored or printed).`,
  })),
  pushIntervalS: withDefault(option("--push-interval-s", float({ min: 0.1, max: 3600, metavar: "S" }), { description: message`Seconds between remote-write pushes.` }), 5),
  metricsLingerS: withDefault(option("--metrics-linger-s", float({ min: 0, max: 3600, metavar: "S" }), {
    description: message`Keep serving --metrics-listen this long after the run ends (a last scrape sees the final counts).`,
  }), 0),
});

/** The parsed flags (a caller that builds them by hand may leave the defaults out). */
export interface LiveFlagValues {
  metricsListen?: string;
  remoteWrite?: string;
  remoteWriteHeaders?: readonly string[];
  pushIntervalS?: number;
  metricsLingerS?: number;
}
