/**
 * The child `ik bench serve` of a `bench rounds` cell: spawned in its own process group with the
 * run's environment, stdout captured (its JSON record), stderr scrubbed line by line into the cell's
 * log, ended at `--serve-timeout-s` or on ik's interrupt; and its command line as a cell stores it.
 * @module
 */
import { homedir } from "node:os";
import type { Endpoint } from "../client/mod.ts";
import { endpointKeyPath, endpointTag, loadEndpointKey, scrubArgv, scrubText } from "../evidence/mod.ts";
import type { Runtime } from "../runtime/mod.ts";

/** What the child `bench serve` needs of a cell's settings (a subset of cell.ts's CellConfig). */
export interface ServeChildConfig {
  rt: Runtime;
  storeRoot: string;
  serveTimeoutMs: number;
  childEnv: Record<string, string>;
  onServeLine?: (line: string) => void;
  signal?: AbortSignal;
}

/** Once interrupted, how long the child `bench serve` gets to write its record before SIGKILL (ms). */
const INTERRUPTED_SERVE_WAIT_MS = 3000;

/** Runs the child `bench serve` of a cell: stdout captured, stderr to `stderrPath`, killed (group) at the timeout or on interrupt. */
export async function runServe(cfg: ServeChildConfig, argv: string[], stderrPath: string): Promise<{ code: number | null; stdout: string; timedOut: boolean; seconds: number }> {
  const t0 = performance.now();
  const env = { ...cfg.rt.envAll(), ...cfg.childEnv, IK_RUNS_DIR: cfg.storeRoot, IK_OUTPUT: "json", IK_REEXEC_PARENT: String(cfg.rt.pid()) };
  const onLine = cfg.onServeLine;
  const transform = onLine ? (line: string) => {
    const clean = scrubText(line);
    onLine(clean);
    return clean;
  } : scrubText;
  const g = cfg.rt.spawn(argv, { env, replaceEnv: true, pipeStdout: true, logFile: stderrPath, logTransform: transform });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    g.killGroup("SIGTERM");
    setTimeout(() => g.killGroup("SIGKILL"), 5000);
  }, cfg.serveTimeoutMs);
  // Interrupted: the child ends its record on SIGINT; one that has not left after a while is
  // killed, so the engine's stop and this run's files still fit in the CLI's grace.
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const onAbort = () => {
    g.killGroup("SIGINT");
    killTimer = setTimeout(() => g.killGroup("SIGKILL"), INTERRUPTED_SERVE_WAIT_MS);
  };
  if (cfg.signal?.aborted) onAbort();
  else cfg.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const stdout = g.stdout ? await new Response(g.stdout).text().catch(() => "") : "";
    const st = await g.exited;
    return { code: st.code, stdout, timedOut, seconds: Math.round(performance.now() - t0) / 1000 };
  } finally {
    clearTimeout(timer);
    clearTimeout(killTimer);
    cfg.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * The child's argv as a cell stores it: scrubbed, and the engine's base URL replaced by its keyed
 * HMAC tag (`hmac-sha256:…`, the tag the child's own record carries: the same key file, read with
 * the child's environment), since base URLs are stored only that way.
 */
export async function storedServeArgv(cfg: Pick<ServeChildConfig, "rt" | "childEnv">, argv: readonly string[], base: string, ep: Endpoint): Promise<string[]> {
  const env = (n: string) => cfg.childEnv[n] ?? cfg.rt.env(n);
  const key = await loadEndpointKey(endpointKeyPath(env, env("HOME") || homedir()), { warn: () => {} });
  const tag = endpointTag(key.key, ep);
  // The URL as a whole word or a flag's `=value`, not a prefix of a longer one (port 80 in 8000).
  const url = new RegExp(base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "(?![\\w.:-])", "g");
  return scrubArgv(argv.map((w) => w.replace(url, tag)));
}
