/**
 * How the live-metrics flags (live_flags.ts) become a run's live options: usage errors (64) for
 * values that do not fit (a `--label` that the live metrics would refuse to carry included), and
 * the value of a secret-looking header (`Authorization`, `Cookie`, `X-Api-Key`…) registered with
 * the scrubber before anything can print it. Other headers (`X-Scope-OrgID=tiny`) are not
 * registered: their value is often an ordinary word (a tenant, a model name) that the scrubber
 * would erase from every record; the remote writer still keeps all header values out of its own
 * notes.
 * @module
 */
import { Buffer } from "node:buffer";
import { usageError } from "../cli/errors.ts";
import { isSecretKey } from "../evidence/redact.ts";
import { registerSecret } from "../evidence/scrub.ts";
import { labelValueProblem } from "../live_metrics/label_guard.ts";
import { type LiveOptions, parseListen } from "../live_metrics/live_run.ts";
import type { LiveFlagValues } from "./live_flags.ts";

/** Headers remote write 1.0 reserves to the sender (its encoding, type, version, and who sends). */
const RESERVED_WRITE_HEADERS = ["content-encoding", "content-type", "x-prometheus-remote-write-version", "user-agent"];

/**
 * Registers a secret-looking header's value as a secret: the whole value, the credential after an
 * auth scheme (`Bearer X`), and a Basic credential's decoded `user:pass` and password.
 */
function registerHeaderSecret(name: string, value: string): void {
  if (!isSecretKey(name)) return;
  registerSecret(value);
  const m = value.match(/^\s*([A-Za-z][A-Za-z0-9_-]*)\s+(\S.*?)\s*$/);
  if (!m) return;
  registerSecret(m[2]);
  if (m[1].toLowerCase() !== "basic") return;
  const plain = Buffer.from(m[2], "base64").toString("utf8");
  const colon = plain.indexOf(":");
  if (colon < 0) return;
  registerSecret(plain);
  registerSecret(plain.slice(colon + 1));
}

/**
 * The run's live options from the flags (usage errors, 64); secret-looking header values
 * registered as secrets. `label` is the run's `--label`, sent with every live series: a value the
 * label guard would refuse is a usage error here, before anything is measured.
 */
export function liveOptions(flags: LiveFlagValues & { label?: string }): LiveOptions {
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
    const name = h.slice(0, i).trim();
    registerHeaderSecret(name, value);
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
  if ((listen || remoteWrite) && f.label !== undefined) {
    const why = labelValueProblem("label", f.label);
    if (why) {
      throw usageError("--label", `${why.replace(/^label label: /, "the ")} (live metrics send it with every series)`, "give a --label that is not a secret, or run without live metrics");
    }
  }
  return { listen, remoteWrite, pushIntervalS: f.pushIntervalS, lingerS: f.metricsLingerS };
}
