/**
 * ik_bench.ts — the "ik" client of the interleaved client-CPU-per-SSE-event benchmark in
 * ../shared/perf (BASELINES.md, "Adding ik to the same runs"). It is what `--extra 'ik=…'` runs:
 *
 *   bun benchmarks/client/ik_bench.ts PORT REQUESTS CONCURRENCY TOKENS TIMEOUT_S
 *
 * Every request goes through ik's real streaming path, `streamCompletion()` from lib/client (the
 * one loop that `ik probe` and the benchmarks use: fetch, the hand-written SSE parser, JSON.parse
 * per chunk, a timestamp per token event, token counting), with the vLLM engine profile's body,
 * and every result is turned into its request row, as the benchmarks do. C workers pull from one
 * shared request counter (closed loop, no delay), like the peers.
 *
 * Each response is checked: ok, TOKENS token events with TOKENS timestamps (TOKENS - 1 ITLs),
 * n_tokens == TOKENS counted from usage, TOKENS + 3 SSE events (role, contents, usage, [DONE])
 * ending in [DONE] with finish_reason "length". Exit 0 only when every request passed.
 *
 * Prints one JSON line: requests, ok, events (TOKENS + 3 per passed request, the accounting of
 * BASELINES.md), wall_s and loop_user_s / loop_sys_s (process CPU around the request loop, from
 * the runtime shim's cpuUsage), plus the client name and a few checks' totals.
 * Loopback only; bounded in requests and in time (the process exits 3 after TIMEOUT_S).
 * @module
 */
import { itlMs, parseEndpoint, type RequestResult, requestRow, setDefaultFetch, streamCompletion } from "../../lib/client/mod.ts";
import { buildBody } from "../../lib/engines/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const argv = runtime.args();
const [port, nReq, conc, tokens, timeoutS] = argv.slice(0, 5).map(Number);
if (
  !(Number.isInteger(port) && port > 0 && port < 65536 && nReq >= 1 && nReq <= 1e6 && conc >= 1 && conc <= 1024 &&
    tokens >= 1 && tokens <= 65536 && timeoutS > 0 && timeoutS <= 3600)
) {
  runtime.writeStderr("usage: ik_bench.ts PORT REQUESTS CONCURRENCY TOKENS TIMEOUT_S\n");
  runtime.exit(64);
}
const killer = setTimeout(() => {
  runtime.writeStderr(`ik_bench: time limit of ${timeoutS} s hit\n`);
  runtime.exit(3);
}, timeoutS * 1000);
(killer as unknown as { unref?: () => void }).unref?.();

// The HTTP client ik measures with (as cli.ts sets it): on Bun, ik's HTTP/1.1 client unless
// IK_HTTP_CLIENT=fetch picks Bun's fetch.
setDefaultFetch(runtime.fetch);

const MODEL = "meta-llama/Meta-Llama-3.1-8B-Instruct";
const ep = parseEndpoint(`http://127.0.0.1:${port}/v1`);
const opts = { timeoutMs: timeoutS * 1000, idleTimeoutMs: 30_000 };
const MESSAGES = [{ role: "user", content: "Write a story about a fox." }];
// The vLLM profile's body, as `ik probe --engine vllm` sends it (max_tokens, min_tokens, ignore_eos,
// temperature 0, stream_options.include_usage, return_token_ids); the test server streams no ids,
// so the count comes from usage.
const mkBody = (): unknown => buildBody("chat", "vllm", MODEL, MESSAGES, tokens).body;

let next = 0, ok = 0, bad = 0, tokenEvents = 0, itls = 0, chars = 0, sseEvents = 0;
let ttftSum = 0;
let firstErr: string | null = null;

/** Why a result does not pass, or null when it does. */
function check(r: RequestResult, nItl: number): string | null {
  if (!r.ok) return `not ok: ${r.errorKind}: ${r.error}`;
  if (r.nTokenEvents !== tokens || r.eventTimesMs.length !== tokens) return `token events ${r.nTokenEvents} (times ${r.eventTimesMs.length}) != ${tokens}`;
  if (nItl !== tokens - 1) return `ITLs ${nItl} != ${tokens - 1}`;
  if (r.nTokens !== tokens || r.tokenCountMethod !== "usage" || r.nUsage !== tokens) return `n_tokens ${r.nTokens} (${r.tokenCountMethod}, usage ${r.nUsage}) != ${tokens}`;
  if (r.nSseEvents !== tokens + 3 || !r.endedWithDone) return `SSE events ${r.nSseEvents} (done ${r.endedWithDone}) != ${tokens + 3}`;
  if (r.finishReason !== "length") return `finish_reason ${r.finishReason}`;
  if (r.tFirstMs === null || r.tLastMs === null || r.tDoneMs === null || r.tHeadersMs === null) return "missing timestamp";
  if (!(r.tSendMs <= r.tHeadersMs && r.tHeadersMs <= r.tFirstMs && r.tFirstMs <= r.tLastMs && r.tLastMs <= r.tDoneMs && r.tDoneMs <= r.tEndMs)) return "timestamps out of order";
  if (r.text.length === 0) return "no text";
  return null;
}

async function worker(): Promise<void> {
  while (next < nReq) {
    next++;
    try {
      const r = await streamCompletion(ep, "chat", mkBody(), opts);
      const row = requestRow(r); // what the benchmarks journal per request
      const gaps = itlMs(r);
      const why = check(r, gaps.length);
      if (why === null) {
        ok++;
        tokenEvents += r.nTokenEvents;
        sseEvents += r.nSseEvents;
        itls += gaps.length;
        chars += r.text.length;
        ttftSum += row.ttft_ms ?? 0;
      } else {
        bad++;
        firstErr ??= why;
      }
    } catch (e) {
      bad++;
      firstErr ??= `threw: ${(e as Error)?.stack ?? e}`;
    }
  }
}

const c0 = runtime.cpuUsage();
const t0 = performance.now();
await Promise.all(Array.from({ length: Math.min(conc, nReq) }, worker));
const wall = (performance.now() - t0) / 1000;
const c1 = runtime.cpuUsage();
clearTimeout(killer);
if (bad) runtime.writeStderr(`ik_bench: ${bad} of ${nReq} requests failed the checks; first: ${firstErr}\n`);
runtime.writeStdout(
  JSON.stringify({
    client: `ik@${runtime.name} ${runtime.version}`,
    requests: nReq,
    ok,
    events: ok * (tokens + 3), // role + content chunks + usage + [DONE], as BASELINES.md counts
    sse_events: sseEvents,
    token_events: tokenEvents,
    itls,
    content_chars: chars,
    mean_ttft_ms: ok ? ttftSum / ok : null,
    wall_s: wall,
    loop_user_s: (c1.userUs - c0.userUs) / 1e6,
    loop_sys_s: (c1.systemUs - c0.systemUs) / 1e6,
  }) + "\n",
);
runtime.exit(bad ? 4 : 0);
