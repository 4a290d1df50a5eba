/**
 * The record of a `bench serve --mode conversations` run (pure but for the artifacts' hashes): per
 * turn index the nearest-rank p50/p95 of TTFT, TPOT and e2e, the prompt and cached tokens the
 * server reported and the prefix-cache effect (turn k's median TTFT over turn 1's); the run's
 * duration, requests/s and output tok/s; the cache tag it carried; the headline and limitations.
 * @module
 */
import type { LiveReport } from "../live_metrics/live_run.ts";
import { liveLimitation } from "../live_metrics/live_run.ts";
import { buildRecord, type StagedRun } from "../evidence/mod.ts";
import { type Metric, metric } from "../metrics/mod.ts";
import { median, nearestRank } from "../stats/mod.ts";
import { GIT_REV, VERSION } from "../version.ts";
import type { ConversationSet } from "../prompts/conversations.ts";
import type { Runner } from "./runner.ts";

/** What the record takes from a run's settings (a `ConversationRun` is one). */
export interface ConversationRecordConfig {
  runner: Runner;
  set: ConversationSet;
  sessions: number;
  thinkMs: { mean: number; sd: number };
  seed: number;
  label: string;
  args: Record<string, unknown>;
  gpu: Record<string, unknown>;
  engine: Record<string, unknown>;
  server: { limitations: string[]; info: unknown };
  isLocal: boolean;
  keyNote: string | null;
}

/** What one turn index gathered over its ok turns (TTFT, TPOT, e2e; prompt and cached tokens, each as reported). */
export interface TurnStats {
  ttft: number[];
  tpot: number[];
  e2e: number[];
  prompt: number[];
  cached: number[];
  /** The turns that reported both their prompt and their cached tokens, each pair from one response. */
  promptCachedPairs: [prompt: number, cached: number][];
  ok: number;
  failed: number;
}

/** An empty {@link TurnStats}. */
export function newTurnStats(): TurnStats {
  return { ttft: [], tpot: [], e2e: [], prompt: [], cached: [], promptCachedPairs: [], ok: 0, failed: 0 };
}

/** Adds one ok turn's row (its TTFT, TPOT, e2e) and the prompt and cached tokens its server reported. */
export function addOkTurn(s: TurnStats, row: { ttft_ms: number | null; tpot_ms: number | null; e2e_ms: number | null }, prompt: number | null, cached: number | null): void {
  s.ok++;
  if (row.ttft_ms !== null) s.ttft.push(row.ttft_ms);
  if (row.tpot_ms !== null) s.tpot.push(row.tpot_ms);
  if (row.e2e_ms !== null) s.e2e.push(row.e2e_ms);
  if (prompt !== null) s.prompt.push(prompt);
  if (cached !== null) s.cached.push(cached);
  if (prompt !== null && cached !== null) s.promptCachedPairs.push([prompt, cached]);
}

/** The turns that ended and what they produced, over the whole run (client monotonic clock, ms). */
export interface RunTotals {
  /** The earliest send and the latest end of a journaled turn, or null before any. */
  firstSendMs: number | null;
  lastEndMs: number | null;
  /** Turns that ended (ok or failed) and ok ones. */
  ended: number;
  ok: number;
  /** Output tokens of the ok turns (as counted, n_tokens). */
  outputTokens: number;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/**
 * The share of prompt tokens served from the cache over the turns that reported both counts:
 * Σ cached / Σ prompt, each pair from one response; never above 1; null when no turn reported both.
 */
export function cachedShare(pairs: readonly (readonly [number, number])[]): number | null {
  let p = 0, c = 0;
  for (const [prompt, cached] of pairs) (p += prompt, c += cached);
  return pairs.length && p > 0 ? Math.min(1, c / p) : null;
}

/** One turn index's figures, as the record's `data.turns` holds them. */
export type TurnSummary = ReturnType<typeof turnSummaries>[number];

/** The per-turn figures of a run (`data.turns`). */
export function turnSummaries(turns: readonly TurnStats[]) {
  const first = turns[0] ? median(turns[0].ttft) : null;
  return turns.map((s, i) => {
    const p50 = median(s.ttft);
    return {
      turn: i + 1, n_ok: s.ok, n_failed: s.failed,
      ttft_ms: { p50, p95: nearestRank(s.ttft, 95), n: s.ttft.length },
      tpot_ms: { p50: median(s.tpot), p95: nearestRank(s.tpot, 95), n: s.tpot.length },
      e2e_ms: { p50: median(s.e2e), p95: nearestRank(s.e2e, 95), n: s.e2e.length },
      prompt_tokens_mean: mean(s.prompt),
      cached_tokens_mean: mean(s.cached),
      cached_share: cachedShare(s.promptCachedPairs),
      ttft_p50_vs_turn1: p50 !== null && first ? p50 / first : null,
    };
  });
}

/** The run's duration, ok requests/s and output tok/s (`data.throughput`); rates null when nothing ended or no time passed. */
export function throughput(t: RunTotals): { duration_s: number | null; n_turns_ended: number; n_turns_ok: number; output_tokens: number; requests_per_s: number | null; output_tok_s: number | null } {
  const d = t.firstSendMs !== null && t.lastEndMs !== null ? (t.lastEndMs - t.firstSendMs) / 1000 : null;
  const per = (n: number) => (d !== null && d > 0 ? n / d : null);
  return { duration_s: d, n_turns_ended: t.ended, n_turns_ok: t.ok, output_tokens: t.outputTokens, requests_per_s: per(t.ok), output_tok_s: per(t.outputTokens) };
}

const fmt = (x: number | null, d = 1) => (x === null ? "n/a" : x.toFixed(d));

/**
 * The record's headline: the conversations and turns planned, how many ran at once, turn 1's
 * median TTFT against the last turn index with an ok TTFT, its cached share, and the throughput.
 */
export function conversationSummary(
  head: { label: string; model: string; conversations: number; plannedTurns: number; maxTurns: number; atOnce: number; interrupted: boolean },
  perTurn: readonly TurnSummary[], tp: ReturnType<typeof throughput>,
): string {
  let s = `${head.label} ${head.model}: ${head.conversations} conversation(s), ${head.plannedTurns} turn(s) planned (up to ${head.maxTurns} each), ${head.atOnce} at once`;
  const t1 = perTurn[0];
  const tl = [...perTurn].reverse().find((t) => t.ttft_ms.p50 !== null);
  if (!t1 || !tl) s += "; no turn answered";
  else if (t1.ttft_ms.p50 === null) s += `; no turn 1 answered, TTFT p50 turn ${tl.turn} ${fmt(tl.ttft_ms.p50)} ms`;
  else {
    s += `; TTFT p50 turn 1 ${fmt(t1.ttft_ms.p50)} ms`;
    if (tl.turn > 1) s += `, turn ${tl.turn} ${fmt(tl.ttft_ms.p50)} ms (x${fmt(tl.ttft_p50_vs_turn1, 2)})`;
  }
  if (tl && tl.cached_share !== null) s += `, ${(tl.cached_share * 100).toFixed(0)} % of turn ${tl.turn}'s prompt cached`;
  if (tp.duration_s !== null) s += `; ${tp.n_turns_ok} ok turn(s) in ${tp.duration_s.toFixed(1)} s: ${fmt(tp.requests_per_s, 2)} req/s, ${fmt(tp.output_tok_s)} output tok/s`;
  if (head.interrupted) s += "; INTERRUPTED";
  return s;
}

/** What the run itself adds to the record. */
export interface ConversationOutcome {
  turns: TurnStats[];
  totals: RunTotals;
  /** Turns not sent: after a failed turn, and (separately) when the run stopped. */
  notSentAfterFailure: number;
  notSent: number;
  finished: number;
  interrupted: boolean;
  /** The run's cache tag (`ik-c…`), or null with --no-cache-salt. */
  salt: string | null;
  outRel: string;
  writeFailure: string | null;
  liveReport: LiveReport | null;
}

/** Builds the record of a conversations run. */
export async function buildConversationRecord(cfg: ConversationRecordConfig, id: string, run: StagedRun, x: ConversationOutcome): Promise<Record<string, unknown>> {
  const perTurn = turnSummaries(x.turns);
  const tp = throughput(x.totals);
  const n = cfg.set.conversations.length;
  const atOnce = Math.min(cfg.sessions, n);
  const metrics: Metric[] = [];
  for (const t of perTurn) {
    const subject = `turn${t.turn}`;
    for (const name of ["ttft_ms", "tpot_ms", "e2e_ms"] as const) {
      metrics.push(metric(name, t[name].p50, "ms", "p50", { n: t[name].n, subject }), metric(name, t[name].p95, "ms", "p95", { n: t[name].n, subject }));
    }
    metrics.push(metric("ttft_p50_vs_turn1", t.ttft_p50_vs_turn1, "ratio", "median_ratio", { n: t.ttft_ms.n, subject }));
  }
  const limitations = [...cfg.server.limitations];
  if (x.writeFailure) limitations.unshift(`STOPPED EARLY: ${x.writeFailure}`);
  limitations.push("later turns carry the server's own earlier answers: their input lengths depend on what it said, so two engines' turn k can differ in length");
  if (cfg.set.source.kind === "synthetic") limitations.push("the user turns are seeded words (pseudo-tokens, as ik mock counts): their token counts are approximate on a real model");
  if (x.salt) limitations.push(`every request starts with this run's cache tag [${x.salt}] (a few prompt tokens): no turn can be served from an earlier run's prefix cache; within the run a conversation reuses its own history, and conversations that open alike still share that start`);
  else limitations.push("--no-cache-salt: requests carry no cache tag, so turn 1 (and more) can be served from a prefix cache an earlier run filled");
  if (!perTurn.some((t) => t.cached_tokens_mean !== null)) limitations.push("the server reported no cached prompt tokens (usage.prompt_tokens_details or llama.cpp timings.cache_n): the prefix-cache effect is seen only in TTFT");
  // Turn 1 is the cold baseline every later turn is read against: a server that already held
  // its start (an earlier unsalted run of the same conversations, a start they share) is said.
  const firstTurn = perTurn[0];
  if (firstTurn && firstTurn.cached_tokens_mean !== null && firstTurn.cached_tokens_mean > 0) {
    limitations.push(`the server reported cached prompt tokens on first turns (mean ${firstTurn.cached_tokens_mean.toFixed(1)}, ${((firstTurn.cached_share ?? 0) * 100).toFixed(0)}% of their prompt): turn 1 is not a cold prefill (${x.salt ? "a start the conversations share" : "an earlier run of the same conversations, or a start they share"}), so ttft_p50_vs_turn1 understates the cache's effect`);
  }
  if (atOnce > 1) limitations.push(`${atOnce} conversations ran at once: TTFT includes their contention, and one session's prefix can be evicted by another's`);
  if (!cfg.isLocal) limitations.push("server is not on this host: TTFT and e2e include the network round trip");
  if (cfg.keyNote) limitations.push(cfg.keyNote);
  const failed = perTurn.reduce((a, t) => a + t.n_failed, 0);
  if (failed) limitations.push(`${failed} turn(s) failed; each ended its conversation (${x.notSentAfterFailure} later turn(s) not sent)`);
  const liveNote = liveLimitation(x.liveReport);
  if (liveNote) limitations.push(liveNote);
  if (x.interrupted) limitations.push(`interrupted: ${x.finished} of ${n} conversation(s) finished, ${x.notSent} turn(s) not sent`);
  const plannedTurns = cfg.set.conversations.reduce((a, c) => a + c.turns.length, 0);
  const maxTurns = cfg.set.conversations.reduce((a, c) => Math.max(a, c.turns.length), 0);
  const summary = conversationSummary({ label: cfg.label, model: cfg.runner.cfg.model, conversations: n, plannedTurns, maxTurns, atOnce, interrupted: x.interrupted }, perTurn, tp);
  return buildRecord({
    evidence_id: id, kind: "serve_benchmark", claim_class: "observed", summary,
    tool: { name: "ik", version: VERSION, rev: GIT_REV }, request: { command: "bench serve", args: cfg.args },
    identity: {
      gpu: cfg.gpu, engine: cfg.engine, model: { id: cfg.runner.cfg.model },
      workload: {
        mode: "conversations", conversations: { name: cfg.set.name, sha256: cfg.set.sha256, n }, sessions: cfg.sessions, think_ms: cfg.thinkMs, seed: cfg.seed,
        cache_salt: x.salt !== null, endpoint_kind: `openai_${cfg.runner.cfg.api}`,
      },
    },
    metrics, artifacts: [await run.artifact("requests.jsonl", "requests"), await run.artifact(x.outRel, "outputs")], missing: [], limitations,
    data: {
      label: cfg.label, mode: "conversations", server: cfg.server.info, source: cfg.set.source, turns: perTurn, planned_turns: plannedTurns,
      not_sent_turns: x.notSent, not_sent_after_failure: x.notSentAfterFailure, finished_conversations: x.finished, sessions_at_once: atOnce,
      throughput: tp, cache_salt: x.salt === null ? null : { tag: `[${x.salt}] `, at: "the start of each conversation's first message (its system message, else its first user turn), in every turn; one tag per run" },
      ...(x.liveReport ? { live_metrics: x.liveReport } : {}),
      definitions: {
        turn: "the k-th user turn of a conversation; its messages are every earlier user turn and the server's own answers to them, then the new turn",
        ttft_p50_vs_turn1: "median TTFT of turn k / median TTFT of turn 1: below the growth of the prompt when the server's prefix cache serves the history",
        cached_tokens: "usage.prompt_tokens_details.cached_tokens (vLLM, SGLang, TensorRT-LLM) or timings.cache_n (llama.cpp), as the server reported them",
        cached_share: "Σ cached tokens / Σ prompt tokens over the ok turns of that index that reported both (each pair from one response), at most 1",
        think_ms: "the pause between an answer's end and the next turn: normal(mean, sd) clipped at 0, seeded by (seed, conversation, turn)",
        sessions_at_once: "conversations in flight at once: min(--sessions, conversations)",
        duration_s: "from the first turn's send to the last turn's end (client monotonic clock), think times included",
        requests_per_s: "ok turns / duration_s",
        output_tok_s: "output tokens of the ok turns (n_tokens) / duration_s",
        not_sent_turns: "turns never sent: after a failed turn of the same conversation, or because the run stopped (an interrupted turn counts here, not as failed)",
        percentiles: "nearest rank", timer: "client monotonic clock (performance.now), one timestamp per network read",
      },
    },
    complete: !x.interrupted,
  }) as unknown as Record<string, unknown>;
}
