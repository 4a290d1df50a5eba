/**
 * How the live-metrics flags (live_flags.ts) become a run's live options: usage errors (64) for
 * values that do not fit, and a header's value registered with the scrubber as a secret before
 * anything can print it.
 * @module
 */
import { usageError } from "../cli/errors.ts";
import { registerSecret } from "../evidence/scrub.ts";
import { type LiveOptions, parseListen } from "../live_metrics/live_run.ts";
import type { LiveFlagValues } from "./live_flags.ts";

/** The run's live options from the flags (usage errors, 64); header values registered as secrets. */
/** Headers remote write 1.0 reserves to the sender (its encoding, type, version, and who sends). */
const RESERVED_WRITE_HEADERS = ["content-encoding", "content-type", "x-prometheus-remote-write-version", "user-agent"];

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
    const name = h.slice(0, i).trim();
    // Remote write 1.0: the protocol's own headers and the sender's User-Agent are not the user's to set.
    if (RESERVED_WRITE_HEADERS.includes(name.toLowerCase())) throw usageError("--prometheus-remote-write-header", `${name} is set by the remote-write protocol itself`, "give other headers only (Authorization, X-Scope-OrgID, ...)");
    headers[name] = value;
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
