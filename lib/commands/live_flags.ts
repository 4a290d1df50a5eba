/**
 * The live-metrics flags every measuring command takes (`bench serve`, `load-trial run`; `bench
 * rounds` passes them to each cell): `--metrics-listen`, `--prometheus-remote-write` with its
 * headers, `--push-interval-s`, `--metrics-linger-s`, and how they become the run's options. A
 * header's value is a secret: it is registered with the scrubber before anything can print it.
 * @module
 */
import { message } from "@optique/core/message";
import { multiple, optional, withDefault } from "@optique/core/modifiers";
import { option } from "@optique/core/primitives";
import { float, string } from "@optique/core/valueparser";
import { usageError } from "../cli/errors.ts";
import { registerSecret } from "../evidence/scrub.ts";
import { type LiveOptions, parseListen } from "../live_metrics/live_run.ts";

/** The flags, to spread into a command's object. */
export const liveFlags = {
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
};

/** The parsed flags (a caller that builds them by hand may leave the defaults out). */
export interface LiveFlagValues {
  metricsListen?: string;
  remoteWrite?: string;
  remoteWriteHeaders?: readonly string[];
  pushIntervalS?: number;
  metricsLingerS?: number;
}

/** The run's live options from the flags (usage errors, 64); header values registered as secrets. */
export function liveOptions(flags: LiveFlagValues): LiveOptions {
  const f = { ...flags, remoteWriteHeaders: flags.remoteWriteHeaders ?? [], pushIntervalS: flags.pushIntervalS ?? 5, metricsLingerS: flags.metricsLingerS ?? 0 };
  let listen: LiveOptions["listen"] = null;
  if (f.metricsListen !== undefined) {
    try {
      listen = parseListen(f.metricsListen);
    } catch (e) {
      throw usageError("--metrics-listen", (e as Error).message);
    }
  }
  const headers: Record<string, string> = {};
  for (const h of f.remoteWriteHeaders) {
    const i = h.indexOf("=");
    if (i <= 0) throw usageError("--prometheus-remote-write-header", "needs K=V (e.g. Authorization=Bearer ...)", "give the header's name, '=', then its value");
    const value = h.slice(i + 1);
    registerSecret(value);
    headers[h.slice(0, i).trim()] = value;
  }
  if (f.remoteWriteHeaders.length && f.remoteWrite === undefined) throw usageError("--prometheus-remote-write-header", "needs --prometheus-remote-write URL");
  let remoteWrite: LiveOptions["remoteWrite"] = null;
  if (f.remoteWrite !== undefined) {
    let u: URL;
    try {
      u = new URL(f.remoteWrite);
    } catch {
      throw usageError("--prometheus-remote-write", "is not a URL", "e.g. http://127.0.0.1:9090/api/v1/write");
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") throw usageError("--prometheus-remote-write", `${u.protocol} is not http or https`);
    if (u.password) registerSecret(decodeURIComponent(u.password));
    remoteWrite = { url: f.remoteWrite, headers };
  }
  if (f.metricsLingerS > 0 && !listen) throw usageError("--metrics-linger-s", "needs --metrics-listen");
  return { listen, remoteWrite, pushIntervalS: f.pushIntervalS, lingerS: f.metricsLingerS };
}
