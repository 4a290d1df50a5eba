/**
 * `ik mock`: runs the mock OpenAI-compatible server standalone (../../shared/spec/MOCK.md).
 *
 * stderr carries, once listening, exactly one line `ik mock: listening on http://HOST:PORT (…)`
 * (tests and `ik selftest` find the port there with --port 0); with --spawn-child also
 * `ik mock: child pid N`; with --startup-log the engine's log. stdout carries only the
 * --request-log lines. Runs until SIGINT/SIGTERM (exit 130), exits 1 after --exit-after-s, and
 * exits 0 once the --parent-pid process is gone (checked every 0.25 s).
 * @module
 */
import { ExitCode } from "../cli/exit_codes.ts";
import { IkError, usageError } from "../cli/errors.ts";
import { createMock, type MockOptions, resolveMockOptions, startupLog } from "../mock/mod.ts";
import type { ProcessGroup } from "../runtime/mod.ts";
import type { CommandContext } from "./context.ts";
import type { MockFlags } from "./mock_flags.ts";

/** Maps parsed flags to mock settings. */
export function mockOptionsFromFlags(f: MockFlags): MockOptions {
  if (f.specDepth !== undefined && f.specAccept === undefined) {
    throw usageError("--spec-depth", "needs --spec-accept P (the draft acceptance probability)");
  }
  return resolveMockOptions({
    host: f.host,
    port: f.port,
    engine: f.engine,
    model: f.model,
    maxModelLen: f.maxModelLen,
    ttftMs: f.ttftMs,
    prefillMsPerToken: f.prefillMsPerToken,
    tpotMs: f.tpotMs,
    tokensPerEvent: f.tokensPerEvent,
    specDepth: f.specDepth,
    specAccept: f.specAccept,
    eosAfter: f.eosAfter ?? null,
    jitterMs: f.jitterMs,
    seed: f.seed,
    maxBatch: f.maxBatch ?? null,
    stepMs: f.stepMs ?? null,
    stepMsPerSeq: f.stepMsPerSeq ?? 0,
    kvTokens: f.kvTokens ?? null,
    prefixCacheTokens: f.prefixCacheTokens,
    faults: [...f.faults],
    metrics: f.metrics === "on",
    startupDelayS: f.startupDelayS,
    readyDelayS: f.readyDelayS,
    startupLog: f.startupLog ?? null,
    exitAfterS: f.exitAfterS ?? null,
    spawnChild: f.spawnChild,
    requestLog: f.requestLog,
    parentPid: f.parentPid ?? null,
  });
}

/** How often `--parent-pid` is checked, ms (MOCK.md: at least every 0.5 s). */
const PARENT_CHECK_MS = 250;

function waitFor(signal: AbortSignal, ms = Infinity): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * Runs `ik mock` until interrupted (exit 130 via cli.ts), --exit-after-s (exit 1) or the
 * --parent-pid process is gone (exit 0).
 * @throws IkError (usage, exit 64) for bad flag values or combinations, and when it cannot listen
 */
export async function runMock(ctx: CommandContext, flags: MockFlags): Promise<number> {
  return await serveMock(ctx, mockOptionsFromFlags(flags));
}

async function serveMock(ctx: CommandContext, o: MockOptions): Promise<number> {
  const rt = ctx.runtime;
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  ctx.signal.addEventListener("abort", onSignal, { once: true });
  if (ctx.signal.aborted) stop.abort();
  let expired = false;
  const exitTimer = o.exitAfterS === null ? undefined : setTimeout(() => {
    expired = true;
    stop.abort();
  }, o.exitAfterS * 1000);
  let orphaned = false;
  const parentTimer = o.parentPid === null ? undefined : setInterval(() => {
    if (o.parentPid !== null && !rt.pidAlive(o.parentPid)) {
      orphaned = true;
      stop.abort();
    }
  }, PARENT_CHECK_MS);
  const log = o.startupLog ? startupLog(o.startupLog, o, rt.pid()) : null;
  let child: ProcessGroup | null = null;
  try {
    if (log) ctx.err(log.before.join("\n") + "\n");
    if (o.spawnChild) {
      // Same process group as the mock (newGroup: false): killing the mock's group must take it too.
      child = rt.spawn(["sleep", "3600"], { newGroup: false });
      ctx.err(`ik mock: child pid ${child.pid}\n`);
    }
    if (o.startupDelayS > 0) await waitFor(stop.signal, o.startupDelayS * 1000);
    if (!stop.signal.aborted) {
      const mock = createMock(o, { requestLog: (line) => ctx.out(line + "\n"), pid: rt.pid() });
      let served;
      try {
        served = await rt.serve(mock.fetch, { hostname: o.host, port: o.port });
      } catch (e) {
        mock.close();
        throw new IkError(
          ExitCode.USAGE,
          `--host ${o.host} --port ${o.port}`,
          `cannot listen: ${(e as Error).message}`,
          "pick another --port (0 = any free port) or --host",
        );
      }
      if (log) ctx.err(log.after(urlHost(o.host), served.port).join("\n") + "\n");
      ctx.err(
        `ik mock: listening on http://${
          urlHost(o.host)
        }:${served.port} (engine ${o.engine}, model ${o.model}, ${
          o.maxBatch === null ? "timing model" : `simulator B=${o.maxBatch}`
        })\n`,
      );
      await waitFor(stop.signal);
      mock.close();
      await served.close();
    }
  } finally {
    clearTimeout(exitTimer);
    clearInterval(parentTimer);
    ctx.signal.removeEventListener("abort", onSignal);
    child?.killGroup("SIGTERM");
  }
  if (orphaned) {
    ctx.err(`ik mock: exiting, --parent-pid ${o.parentPid} is gone\n`);
    return ExitCode.OK;
  }
  if (expired) {
    ctx.err(`ik mock: exiting after --exit-after-s ${o.exitAfterS}\n`);
    return ExitCode.VERDICT_NEGATIVE;
  }
  return ExitCode.OK;
}
