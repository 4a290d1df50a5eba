/**
 * `ik bench serve --mode conversations`: multi-turn chats. `sessions` conversations run at once;
 * in each, turn k+1 is sent when turn k's answer has ended plus a think time (seeded, mean and
 * stddev), and its messages are the history with the server's *actual* answers, so the shared
 * prefix a server can cache is the real one. Every request starts with the run's cache tag
 * (`[ik-c<hex>] `, the same in every turn of the run, unless --no-cache-salt), so a rerun cannot be
 * served from an earlier run's cache while each conversation still reuses its own history. Per
 * turn index: TTFT, TPOT and e2e (nearest-rank p50 and p95), the prompt tokens the server counted,
 * the cached tokens it reported (`usage.prompt_tokens_details.cached_tokens`, llama.cpp's
 * `timings.cache_n`) and the prefix-cache effect: each turn's median TTFT over turn 1's. A failed
 * turn ends its conversation (the rest are counted as not sent). Rows are journaled as they end; an
 * interrupt leaves an incomplete record, and a turn the interrupt cut off counts as not sent (no
 * row), as single mode drops its aborted request.
 * @module
 */
import { requestRow } from "../client/mod.ts";
import { itlMs } from "../client/row.ts";
import { MAX_TIMER_MS } from "../cli/limits.ts";
import type { LiveRun } from "../live_metrics/live_run.ts";
import { JsonlWriter, newEvidenceId, StagedRun, writeFailureStop } from "../evidence/mod.ts";
import type { Conversation, ConversationSet } from "../prompts/conversations.ts";
import type { Prompt, PromptMessage } from "../prompts/prompt.ts";
import { SeededRng } from "../stats/mod.ts";
import type { RequestResult } from "../client/types.ts";
import { addOkTurn, buildConversationRecord, type ConversationRecordConfig, newTurnStats, type RunTotals, type TurnStats } from "./conversation_record.ts";
import type { Runner } from "./runner.ts";
import { outputDoc, promptTokens } from "./single_rows.ts";

/** A conversations run's settings. */
export interface ConversationRun extends ConversationRecordConfig {
  runner: Runner;
  set: ConversationSet;
  sessions: number;
  /** Think time between an answer's end and the next turn, ms: mean and stddev (normal, clipped at 0). */
  thinkMs: { mean: number; sd: number };
  /** Whether every request starts with the run's cache tag (false: --no-cache-salt). */
  cacheSalt: boolean;
  seed: number;
  label: string;
  storeRoot: string;
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

/** The cache tag of a run: `ik-c` and the evidence id's random part, unique to the run. */
export function conversationSalt(evidenceId: string): string {
  return `ik-c${evidenceId.slice(evidenceId.lastIndexOf("-") + 1)}`;
}

/**
 * Waits `ms` (in pieces no timer overflows on), or until `signal` aborts.
 * @returns when the time is up or the signal aborted
 */
export function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((ok) => {
    if (!(ms > 0) || signal.aborted) return ok();
    let left = ms, t: ReturnType<typeof setTimeout> | undefined;
    const done = () => (clearTimeout(t), signal.removeEventListener("abort", done), ok());
    const step = () => {
      if (left <= 0) return done();
      const d = Math.min(left, MAX_TIMER_MS);
      left -= d;
      t = setTimeout(step, d);
    };
    signal.addEventListener("abort", done, { once: true });
    step();
  });
}

/** Runs the conversations and writes the record; returns it, its folder and whether it was interrupted. */
export async function runConversations(cfg: ConversationRun): Promise<{ record: Record<string, unknown>; dir: string; interrupted: boolean }> {
  const id = newEvidenceId("serve_benchmark");
  const run = await StagedRun.create(cfg.storeRoot, id);
  const io = writeFailureStop(cfg.signal);
  const journal = await JsonlWriter.open(`${run.dir}/requests.jsonl`, { onError: io.onError });
  const outRel = `outputs/${cfg.label}/conversations.jsonl`;
  const outputs = await JsonlWriter.open(`${run.dir}/${outRel}`, { onError: io.onError });
  const stopped = () => io.signal.aborted;
  const salt = cfg.cacheSalt ? conversationSalt(id) : null;
  const turns: TurnStats[] = [];
  const totals: RunTotals = { firstSendMs: null, lastEndMs: null, ended: 0, ok: 0, outputTokens: 0 };
  const live = cfg.live?.series ?? null;
  const queue = [...cfg.set.conversations];
  let notSent = 0, notSentAfterFailure = 0, finished = 0;
  const think = (c: number, t: number) => {
    if (cfg.thinkMs.mean <= 0 && cfg.thinkMs.sd <= 0) return 0;
    return Math.max(0, cfg.thinkMs.mean + cfg.thinkMs.sd * new SeededRng(cfg.seed, c, t, 0x7a1c).normal());
  };
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
      // The tag goes at the start of the first message, the same in every turn: the history stays a shared prefix.
      const { result } = await cfg.runner.send(prompt, salt);
      // Cut off by the interrupt: not sent, not failed (no row, as single mode drops it).
      if (stopped() && result.errorKind === "aborted") {
        notSent += conv.turns.length - t;
        return;
      }
      const row = requestRow(result, { conversation: conv.id, turn: t + 1, session, label: cfg.label, max_tokens: max, prompt_tokens: promptTokens(result), cached_tokens: cachedTokens(result) });
      journal.write(row);
      live?.ended(level, row, itlMs(result));
      outputs.write(outputDoc(result, prompt, max, { conversation: conv.id, turn: t + 1, salt }));
      totals.ended++;
      totals.firstSendMs = Math.min(totals.firstSendMs ?? result.tSendMs, result.tSendMs);
      totals.lastEndMs = Math.max(totals.lastEndMs ?? result.tEndMs, result.tEndMs);
      const s = turns[t] ??= newTurnStats();
      if (!row.ok) {
        s.failed++;
        notSent += conv.turns.length - t - 1;
        notSentAfterFailure += conv.turns.length - t - 1;
        return;
      }
      totals.ok++;
      totals.outputTokens += row.n_tokens ?? 0;
      addOkTurn(s, row, promptTokens(result), cachedTokens(result));
      history.push({ role: "assistant", content: result.text ?? "" });
      if (t + 1 < conv.turns.length) await sleepFor(think(index, t), io.signal);
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
  const writeFailure = io.fail ? `writing ${io.fail.where} failed: the run stopped; requests.jsonl keeps ${journal.lines} whole rows` : null;
  const record = await buildConversationRecord(cfg, id, run, { turns, totals, notSent, notSentAfterFailure, finished, interrupted, salt, outRel, writeFailure, liveReport });
  if (io.fail) {
    await run.finish(record).catch(() => {});
    throw io.fail;
  }
  return { record, dir: await run.finish(record), interrupted };
}
