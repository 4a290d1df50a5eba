/**
 * `ik bench serve --mode conversations`: multi-turn chats. `sessions` conversations run at once;
 * in each, turn k+1 is sent when turn k's answer has ended plus a think time (seeded, mean and
 * stddev), and its messages are the history with the server's *actual* answers, so the shared
 * prefix a server can cache is the real one. Per turn index: TTFT, TPOT and e2e (nearest-rank p50
 * and p95), the prompt tokens the server counted, the cached tokens it reported
 * (`usage.prompt_tokens_details.cached_tokens`, llama.cpp's `timings.cache_n`) and the prefix-cache
 * effect: each turn's median TTFT over turn 1's. A failed turn ends its conversation (the rest are
 * counted as not sent). Rows are journaled as they end; an interrupt leaves an incomplete record.
 * @module
 */
import { requestRow } from "../client/mod.ts";
import { itlMs } from "../client/row.ts";
import { type LiveReport, liveLimitation, type LiveRun } from "../live_metrics/live_run.ts";
import { buildRecord, JsonlWriter, newEvidenceId, StagedRun, writeFailureStop } from "../evidence/mod.ts";
import { type Metric, metric } from "../metrics/mod.ts";
import type { Conversation, ConversationSet } from "../prompts/conversations.ts";
import type { Prompt, PromptMessage } from "../prompts/prompt.ts";
import { median, nearestRank, SeededRng } from "../stats/mod.ts";
import { GIT_REV, VERSION } from "../version.ts";
import type { RequestResult } from "../client/types.ts";
import type { Runner } from "./runner.ts";
import { outputDoc, promptTokens } from "./single_rows.ts";

/** A conversations run's settings. */
export interface ConversationRun {
  runner: Runner;
  set: ConversationSet;
  sessions: number;
  /** Think time between an answer's end and the next turn, ms: mean and stddev (normal, clipped at 0). */
  thinkMs: { mean: number; sd: number };
  seed: number;
  label: string;
  storeRoot: string;
  args: Record<string, unknown>;
  gpu: Record<string, unknown>;
  engine: Record<string, unknown>;
  server: { limitations: string[]; info: unknown };
  isLocal: boolean;
  keyNote: string | null;
  signal?: AbortSignal;
  progress?: (line: string) => void;
  /** ik's live metrics for this run, when asked for (level = turn k). */
  live?: LiveRun | null;
}

/** The cached prompt tokens the server reported for a request, or null. */
export function cachedTokens(r: RequestResult): number | null {
  const d = (r.usage?.prompt_tokens_details ?? null) as Record<string, unknown> | null;
  const c = d && typeof d.cached_tokens === "number" ? d.cached_tokens : r.serverTimings?.cache_n;
  return typeof c === "number" && Number.isInteger(c) && c >= 0 ? c : null;
}

interface TurnStats {
  ttft: number[];
  tpot: number[];
  e2e: number[];
  prompt: number[];
  cached: number[];
  ok: number;
  failed: number;
}

const fmt = (x: number | null, d = 1) => (x === null ? "n/a" : x.toFixed(d));

/** Runs the conversations and writes the record; returns it, its folder and whether it was interrupted. */
export async function runConversations(cfg: ConversationRun): Promise<{ record: Record<string, unknown>; dir: string; interrupted: boolean }> {
  const id = newEvidenceId("serve_benchmark");
  const run = await StagedRun.create(cfg.storeRoot, id);
  const io = writeFailureStop(cfg.signal);
  const journal = await JsonlWriter.open(`${run.dir}/requests.jsonl`, { onError: io.onError });
  const outRel = `outputs/${cfg.label}/conversations.jsonl`;
  const outputs = await JsonlWriter.open(`${run.dir}/${outRel}`, { onError: io.onError });
  const stopped = () => io.signal.aborted;
  const turns: TurnStats[] = [];
  const live = cfg.live?.series ?? null;
  const queue = [...cfg.set.conversations];
  let notSent = 0, finished = 0;
  const think = (c: number, t: number) => {
    if (cfg.thinkMs.mean <= 0 && cfg.thinkMs.sd <= 0) return 0;
    return Math.max(0, cfg.thinkMs.mean + cfg.thinkMs.sd * new SeededRng(cfg.seed, c, t, 0x7a1c).normal());
  };
  const sleep = (ms: number) => new Promise<void>((ok) => {
    if (ms <= 0 || stopped()) return ok();
    const t = setTimeout(ok, ms);
    io.signal.addEventListener("abort", () => (clearTimeout(t), ok()), { once: true });
  });
  const converse = async (conv: Conversation, index: number, session: number) => {
    const history: PromptMessage[] = conv.system ? [{ role: "system", content: conv.system }] : [];
    for (const [t, text] of conv.turns.entries()) {
      if (stopped()) {
        notSent += conv.turns.length - t;
        return;
      }
      history.push({ role: "user", content: text });
      const prompt: Prompt = { id: `${conv.id}#${t + 1}`, bucket: `turn${t + 1}`, messages: [...history], maxTokens: conv.maxTokens, kind: "chat", extra: {} };
      const max = cfg.runner.maxFor(prompt);
      const level = `turn${t + 1}`;
      live?.sent(level);
      const { result } = await cfg.runner.send(prompt, null);
      const row = requestRow(result, { conversation: conv.id, turn: t + 1, session, label: cfg.label, max_tokens: max, prompt_tokens: promptTokens(result), cached_tokens: cachedTokens(result) });
      journal.write(row);
      live?.ended(level, row, itlMs(result));
      outputs.write(outputDoc(result, prompt, max, { conversation: conv.id, turn: t + 1 }));
      const s = turns[t] ??= { ttft: [], tpot: [], e2e: [], prompt: [], cached: [], ok: 0, failed: 0 };
      if (!row.ok) {
        s.failed++;
        notSent += conv.turns.length - t - 1;
        return;
      }
      s.ok++;
      if (row.ttft_ms !== null) s.ttft.push(row.ttft_ms);
      if (row.tpot_ms !== null) s.tpot.push(row.tpot_ms);
      if (row.e2e_ms !== null) s.e2e.push(row.e2e_ms);
      const pt = promptTokens(result), ct = cachedTokens(result);
      if (pt !== null) s.prompt.push(pt);
      if (ct !== null) s.cached.push(ct);
      history.push({ role: "assistant", content: result.text ?? "" });
      if (t + 1 < conv.turns.length) await sleep(think(index, t));
    }
    finished++;
  };
  let next = 0, lastNote = performance.now();
  const worker = async (session: number) => {
    while (queue.length && !stopped()) {
      const conv = queue.shift() as Conversation;
      const index = next++;
      await converse(conv, index, session);
      if (performance.now() - lastNote >= 2000 || finished === cfg.set.conversations.length) {
        lastNote = performance.now();
        cfg.progress?.(`conversations: ${finished} of ${cfg.set.conversations.length} done`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(cfg.sessions, cfg.set.conversations.length) }, (_, s) => worker(s)));
  for (const c of queue) notSent += c.turns.length;
  await journal.close().catch(io.onError);
  await outputs.close().catch(io.onError);
  const interrupted = cfg.signal?.aborted === true || io.fail !== null;
  const liveReport = cfg.live ? await cfg.live.finish() : null;
  const record = await buildConversationRecord(cfg, id, run, turns, { liveReport, notSent, finished, interrupted, outRel, writeFailure: io.fail ? `writing ${io.fail.where} failed: the run stopped; requests.jsonl keeps ${journal.lines} whole rows` : null });
  if (io.fail) {
    await run.finish(record).catch(() => {});
    throw io.fail;
  }
  return { record, dir: await run.finish(record), interrupted };
}

async function buildConversationRecord(
  cfg: ConversationRun, id: string, run: StagedRun, turns: TurnStats[],
  x: { notSent: number; finished: number; interrupted: boolean; outRel: string; writeFailure: string | null; liveReport: LiveReport | null },
): Promise<Record<string, unknown>> {
  const first = turns[0] ? median(turns[0].ttft) : null;
  const perTurn = turns.map((s, i) => {
    const p50 = median(s.ttft);
    return {
      turn: i + 1, n_ok: s.ok, n_failed: s.failed,
      ttft_ms: { p50, p95: nearestRank(s.ttft, 95), n: s.ttft.length },
      tpot_ms: { p50: median(s.tpot), p95: nearestRank(s.tpot, 95), n: s.tpot.length },
      e2e_ms: { p50: median(s.e2e), p95: nearestRank(s.e2e, 95), n: s.e2e.length },
      prompt_tokens_mean: s.prompt.length ? s.prompt.reduce((a, b) => a + b, 0) / s.prompt.length : null,
      cached_tokens_mean: s.cached.length ? s.cached.reduce((a, b) => a + b, 0) / s.cached.length : null,
      cached_share: s.cached.length && s.prompt.length ? s.cached.reduce((a, b) => a + b, 0) / s.prompt.slice(0, s.cached.length).reduce((a, b) => a + b, 0) : null,
      ttft_p50_vs_turn1: p50 !== null && first ? p50 / first : null,
    };
  });
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
  if (!perTurn.some((t) => t.cached_tokens_mean !== null)) limitations.push("the server reported no cached prompt tokens (usage.prompt_tokens_details or llama.cpp timings.cache_n): the prefix-cache effect is seen only in TTFT");
  // Turn 1 is the cold baseline every later turn is read against: a server that already held
  // its start (an earlier run of the same seeded conversations, a shared system message) is said.
  const firstTurn = perTurn[0];
  if (firstTurn && firstTurn.cached_tokens_mean !== null && firstTurn.cached_tokens_mean > 0) {
    limitations.push(`the server reported cached prompt tokens on first turns (mean ${firstTurn.cached_tokens_mean.toFixed(1)}, ${((firstTurn.cached_share ?? 0) * 100).toFixed(0)}% of their prompt): turn 1 is not a cold prefill (an earlier run of the same conversations, or a start they share), so ttft_p50_vs_turn1 understates the cache's effect`);
  }
  if (cfg.sessions > 1) limitations.push(`${cfg.sessions} conversations ran at once: TTFT includes their contention, and one session's prefix can be evicted by another's`);
  if (!cfg.isLocal) limitations.push("server is not on this host: TTFT and e2e include the network round trip");
  if (cfg.keyNote) limitations.push(cfg.keyNote);
  const failed = perTurn.reduce((a, t) => a + t.n_failed, 0);
  if (failed) limitations.push(`${failed} turn(s) failed; each ended its conversation (${x.notSent} later turn(s) not sent)`);
  const liveNote = liveLimitation(x.liveReport);
  if (liveNote) limitations.push(liveNote);
  if (x.interrupted) limitations.push(`interrupted: ${x.finished} of ${cfg.set.conversations.length} conversation(s) finished, ${x.notSent} turn(s) not sent`);
  const t1 = perTurn[0], tl = perTurn[perTurn.length - 1];
  let summary = `${cfg.label} ${cfg.runner.cfg.model}: ${cfg.set.conversations.length} conversation(s), ${perTurn.length} turn(s), ${cfg.sessions} at once`;
  if (t1 && tl) summary += `; TTFT p50 turn 1 ${fmt(t1.ttft_ms.p50)} ms, turn ${tl.turn} ${fmt(tl.ttft_ms.p50)} ms (x${fmt(tl.ttft_p50_vs_turn1, 2)})`;
  if (tl?.cached_share !== null && tl?.cached_share !== undefined) summary += `, ${(tl.cached_share * 100).toFixed(0)} % of turn ${tl.turn}'s prompt cached`;
  if (x.interrupted) summary += "; INTERRUPTED";
  return buildRecord({
    evidence_id: id, kind: "serve_benchmark", claim_class: "observed", summary,
    tool: { name: "ik", version: VERSION, rev: GIT_REV }, request: { command: "bench serve", args: cfg.args },
    identity: {
      gpu: cfg.gpu, engine: cfg.engine, model: { id: cfg.runner.cfg.model },
      workload: { mode: "conversations", conversations: { name: cfg.set.name, sha256: cfg.set.sha256, n: cfg.set.conversations.length }, sessions: cfg.sessions, think_ms: cfg.thinkMs, seed: cfg.seed, endpoint_kind: `openai_${cfg.runner.cfg.api}` },
    },
    metrics, artifacts: [await run.artifact("requests.jsonl", "requests"), await run.artifact(x.outRel, "outputs")], missing: [], limitations,
    data: {
      label: cfg.label, mode: "conversations", server: cfg.server.info, source: cfg.set.source, turns: perTurn, not_sent_turns: x.notSent, finished_conversations: x.finished,
      ...(x.liveReport ? { live_metrics: x.liveReport } : {}),
      definitions: {
        turn: "the k-th user turn of a conversation; its messages are every earlier user turn and the server's own answers to them, then the new turn",
        ttft_p50_vs_turn1: "median TTFT of turn k / median TTFT of turn 1: below the growth of the prompt when the server's prefix cache serves the history",
        cached_tokens: "usage.prompt_tokens_details.cached_tokens (vLLM, SGLang, TensorRT-LLM) or timings.cache_n (llama.cpp), as the server reported them",
        think_ms: "the pause between an answer's end and the next turn: normal(mean, sd) clipped at 0, seeded by (seed, conversation, turn)",
        percentiles: "nearest rank", timer: "client monotonic clock (performance.now), one timestamp per network read",
      },
    },
    complete: !x.interrupted,
  }) as unknown as Record<string, unknown>;
}
