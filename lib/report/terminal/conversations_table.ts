/** The human form of a conversations run: the summary, one row per turn index, the limitations (pure). */
import Table from "cli-table3";
import { escapeTerminalLine } from "../escape.ts";

const f = (v: unknown, nd = 1) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(nd) : "-");

interface TurnRow {
  turn: number;
  n_ok: number;
  n_failed: number;
  ttft_ms: { p50: number | null; p95: number | null };
  tpot_ms: { p50: number | null; p95: number | null };
  e2e_ms: { p50: number | null; p95: number | null };
  prompt_tokens_mean: number | null;
  cached_tokens_mean: number | null;
  ttft_p50_vs_turn1: number | null;
}

/** Renders a conversations record and where it is. */
export function renderConversations(record: Record<string, unknown>, dir: string): string {
  const turns = ((record.data as { turns?: TurnRow[] }).turns ?? []);
  const t = new Table({
    head: ["turn", "ok/failed", "prompt tok", "cached tok", "TTFT p50/p95 ms", "vs turn 1", "TPOT p50/p95 ms", "e2e p50/p95 ms"],
    style: { head: [], border: [], compact: true },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
  });
  for (const r of turns) {
    t.push([String(r.turn), `${r.n_ok}/${r.n_failed}`, f(r.prompt_tokens_mean, 0), f(r.cached_tokens_mean, 0), `${f(r.ttft_ms.p50)}/${f(r.ttft_ms.p95)}`,
      f(r.ttft_p50_vs_turn1, 2), `${f(r.tpot_ms.p50, 2)}/${f(r.tpot_ms.p95, 2)}`, `${f(r.e2e_ms.p50, 0)}/${f(r.e2e_ms.p95, 0)}`]);
  }
  const lines = [escapeTerminalLine(String(record.summary)), t.toString()];
  const lim = (record.limitations as string[]) ?? [];
  if (lim.length) lines.push("limitations:", ...lim.map((l) => `  - ${escapeTerminalLine(l)}`));
  lines.push(`record: ${escapeTerminalLine(dir)}`);
  return lines.join("\n") + "\n";
}
