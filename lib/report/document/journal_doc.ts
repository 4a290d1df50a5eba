/**
 * The report of a `.staging/<id>/` journal: the request rows of a run that never wrote its record
 * (killed by SIGKILL, out of memory, a crash, a lost machine). Marked INCOMPLETE throughout: no
 * identity beyond the id, no confidence intervals, nothing integrity-checked; per level (load) or
 * bucket (single) the counts and nearest-rank percentiles of what was journaled, the TTFT CDF.
 * Pure.
 * @module
 */
import { parseEvidenceId } from "../../evidence/evidence_id.ts";
import { sortBuckets } from "../../prompts/mod.ts";
import { nearestRank } from "../../stats/percentile.ts";
import { type Block, num, text } from "./doc.ts";
import type { JournalInput } from "./inputs.ts";
import { ttftCdfBlocks } from "./record_doc.ts";

type Obj = Record<string, any>;

/** The one-sentence reason a journal is incomplete (shown in the report and its title). */
export const JOURNAL_INCOMPLETE =
  "INCOMPLETE: this is the staging journal of a run that never wrote its record (evidence.json). It ended without its own cleanup: killed by SIGKILL (the OOM killer, kill -9), a crash, or a lost machine. Below are only the request rows it had journaled; requests in flight at that moment are not among them.";

function utcOf(id: string): string {
  const u = parseEvidenceId(id)?.utc ?? "";
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(u);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z` : "-";
}

function stats(rows: readonly Obj[], key: string, p: number): string {
  const v = rows.filter((r) => r.ok === true && typeof r[key] === "number" && Number.isFinite(r[key])).map((r) => r[key] as number);
  return num(nearestRank(v, p));
}

/** Groups: per load level in the order first seen, else per bucket ("all" first when several). */
function groupsOf(rows: readonly Obj[]): { by: "level" | "bucket"; groups: { name: string; rows: Obj[] }[] } {
  const byLevel = rows.some((r) => r.level !== undefined && r.level !== null);
  if (byLevel) {
    const names: string[] = [];
    for (const r of rows) if (!names.includes(String(r.level))) names.push(String(r.level));
    return { by: "level", groups: names.map((n) => ({ name: n, rows: rows.filter((r) => String(r.level) === n) })) };
  }
  const buckets = sortBuckets([...new Set(rows.map((r) => String(r.bucket ?? "all")))]);
  const groups = buckets.map((b) => ({ name: b, rows: rows.filter((r) => String(r.bucket ?? "all") === b) }));
  return { by: "bucket", groups: groups.length > 1 ? [{ name: "all", rows: [...rows] }, ...groups] : groups };
}

/** Blocks for a journal. */
export function journalBlocks(input: JournalInput): Block[] {
  const rows = input.rows;
  const ok = rows.filter((r) => r.ok === true).length;
  const rounds = new Set(rows.map((r) => r.round).filter((x) => x !== undefined && x !== null));
  const { by, groups } = groupsOf(rows);
  const blocks: Block[] = [
    { kind: "heading", level: 2, text: `INCOMPLETE: ${input.id} (a journal without its record)` },
    { kind: "para", tone: "warn", text: JOURNAL_INCOMPLETE },
    {
      kind: "facts", items: [
        ["journal", input.path],
        ["kind", text(parseEvidenceId(input.id)?.kind)],
        ["started", utcOf(input.id)],
        ["last row written", text(input.lastWrite)],
        ["rows journaled", `${rows.length} (${ok} ok, ${rows.length - ok} failed)`],
        ...(rounds.size ? [["rounds seen", String(rounds.size)] as [string, string]] : []),
        ["complete", "NO: no record was written"],
      ],
    },
    { kind: "heading", level: 3, text: `Per ${by}: what was journaled (nearest-rank percentiles of ok requests, no CIs)` },
  ];
  if (rows.length) {
    blocks.push({
      kind: "table",
      head: [by, "requests", "ok", "failed", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms", "e2e p50 ms"],
      rows: groups.map((g) => {
        const k = g.rows.filter((r) => r.ok === true).length;
        return [g.name, String(g.rows.length), String(k), String(g.rows.length - k), stats(g.rows, "ttft_ms", 50), stats(g.rows, "ttft_ms", 95), stats(g.rows, "tpot_ms", 50), stats(g.rows, "e2e_ms", 50)];
      }),
      caption: "From the journal alone: a run cut short measured fewer requests than planned, so these are not the figures the run would have reported.",
    });
    blocks.push({ kind: "heading", level: 3, text: "TTFT CDF" });
    blocks.push(...ttftCdfBlocks(`TTFT CDF per ${by} (ok requests journaled)`, groups.filter((g) => g.name !== "all" || groups.length === 1), by));
  } else blocks.push({ kind: "para", text: "No request row was journaled before the run ended: nothing was measured." });
  const limits = [
    "incomplete: no evidence.json; the run's identity (engine, model, GPU, workload), its CIs and its limitations were never written",
    "not integrity-checked: a journal has no artifact list with sha256 to check against",
    "compare, --extend and rounds do not take a journal; rerun the benchmark for a record",
    ...(input.badLines ? [`${input.badLines} line(s) of requests.jsonl were not a JSON row and were left out (a last line cut short by the kill)`] : []),
    ...(input.files.length ? [`other staged files: ${input.files.join(", ")}`] : []),
    ...input.notes,
  ];
  blocks.push({ kind: "heading", level: 3, text: "Limitations" }, { kind: "list", items: limits });
  return blocks;
}
