/**
 * A series of requests against one mock, each paired with the mock's own log line for it
 * (request_log.ts). Every request of a series gets a distinct prompt word count, so pairing works
 * for sequential and concurrent requests alike.
 * @module
 */
import type { Check } from "./checks.ts";
import type { MockProcess } from "./mock_process.ts";
import { type MockRequestLog, pairByPrompt } from "./request_log.ts";
import type { Personality, SelftestDeps, SendRow } from "./send.ts";

/** One request's client row and the mock's log line for it. */
export interface Paired {
  /** What the client measured. */
  row: SendRow;
  /** What the mock did, on its own clock. */
  log: MockRequestLog;
}

/** What a series sends. */
export interface SeriesSpec {
  engine: Personality;
  /** One word naming the run (goes into the prompts). */
  label: string;
  /** Requests to send. */
  requests: number;
  maxTokens: number;
  /** Requests in flight at once (default 1: one after the other). */
  concurrency?: number;
  /**
   * Start `concurrency` requests at once and wait for all of them before the next wave (instead
   * of keeping `concurrency` workers busy, which starts requests while others stream).
   */
  waves?: boolean;
  exactLength?: boolean;
  api?: "chat" | "completions";
  /**
   * Unmeasured requests sent first, one after another (default 0): they open the keep-alive
   * connection and run the client's and the mock's code paths once, so the timed requests measure
   * the client in its steady state rather than a TCP connect and a cold JIT (a freshly started Node
   * mock answered its first requests up to ~1 ms later than its later ones).
   */
  warmup?: number;
}

/** Prompt of request `i`: `i + 3` words, distinct within the series. */
export function seriesPrompt(label: string, i: number): string {
  return `selftest ${label} ${"w ".repeat(i + 1).trim()}`;
}

/**
 * Sends the series and pairs every row with its log line.
 * @returns the pairs in send order, or a message saying why they could not be paired
 */
export async function runSeries(
  deps: SelftestDeps,
  mock: MockProcess,
  s: SeriesSpec,
): Promise<{ pairs: Paired[]; wallS: number } | string> {
  const warm = s.warmup ?? 0;
  if (warm > 0) {
    const before = (await mock.requestLog(0, 0)).length;
    for (let i = 0; i < warm && !deps.signal?.aborted; i++) {
      await deps.send({
        baseUrl: mock.baseUrl,
        engine: s.engine,
        maxTokens: Math.min(4, s.maxTokens),
        prompt: seriesPrompt(`${s.label}-warmup`, i),
        exactLength: s.exactLength ?? true,
        api: s.api,
      });
    }
    // Their log lines come just after their last bytes: wait for them, so none lands after the mark.
    await mock.requestLog(before + warm);
  }
  const mark = (await mock.requestLog(0, 0)).length;
  const rows: SendRow[] = new Array(s.requests);
  let next = 0;
  const t0 = performance.now();
  const sendOne = async (i: number) => {
    rows[i] = await deps.send({
      baseUrl: mock.baseUrl,
      engine: s.engine,
      maxTokens: s.maxTokens,
      prompt: seriesPrompt(s.label, i),
      exactLength: s.exactLength ?? true,
      api: s.api,
    });
  };
  const worker = async () => {
    while (next < s.requests && !deps.signal?.aborted) await sendOne(next++);
  };
  const width = Math.max(1, Math.min(s.concurrency ?? 1, s.requests));
  if (s.waves) {
    for (let w = 0; w < s.requests && !deps.signal?.aborted; w += width) {
      const end = Math.min(s.requests, w + width);
      await Promise.all(Array.from({ length: end - w }, (_, j) => sendOne(w + j)));
    }
  } else await Promise.all(Array.from({ length: width }, worker));
  const wallS = (performance.now() - t0) / 1000;
  if (deps.signal?.aborted) return "interrupted";
  const logs = (await mock.requestLog(mark + s.requests)).slice(mark);
  const paired = pairByPrompt(rows.map((_, i) => i), logs);
  if (typeof paired === "string") return paired;
  return { pairs: rows.map((row, i) => ({ row, log: paired[i] })), wallS };
}

/**
 * A per-row exact check summarised in one row: every request's value must equal its expected one
 * (printed: the distinct values seen, and the first request that differs).
 */
export function everyRow(
  group: string,
  name: string,
  pairs: readonly Paired[],
  got: (p: Paired) => unknown,
  want: (p: Paired) => unknown,
  unit: string | null = null,
): Check {
  const seen = new Set<string>();
  const wants = new Set<string>();
  let bad = -1;
  pairs.forEach((p, i) => {
    const g = String(got(p) ?? "n/a");
    const w = String(want(p));
    seen.add(g);
    wants.add(w);
    if (g !== w && bad < 0) bad = i;
  });
  const list = (s: Set<string>) => [...s].slice(0, 4).join(", ") + (s.size > 4 ? ", …" : "");
  const first = pairs.length ? got(pairs[bad < 0 ? 0 : bad]) : null;
  const wantFirst = pairs.length ? want(pairs[bad < 0 ? 0 : bad]) : null;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  return {
    group,
    name,
    measured: bad < 0 ? list(seen) : `${list(seen)} (request ${bad + 1}: ${String(first ?? "n/a")})`,
    expected: wants.size === 1 ? list(wants) : `per request: ${list(wants)}`,
    status: bad < 0 && pairs.length > 0 ? "PASS" : "FAIL",
    value: num(first),
    unit,
    expected_value: num(wantFirst),
    tolerance: num(wantFirst) === null ? null : { below: 0, above: 0 },
  };
}
