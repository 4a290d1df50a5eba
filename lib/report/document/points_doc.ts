/**
 * The report of a `bench points` output dir (seed 004), read tolerantly: whatever of
 * manifest.json, <point>/result.json and the load-trial client's summary.json and requests.jsonl
 * is there. Per point: status, client exit, attainment, validity, percentiles and drains; the
 * latency–rate curve with the SLO line and N* (the highest rate that passed there and at every
 * lower rate); the TTFT CDF per point. Pure.
 * @module
 */
import { type Block, num, obj, text } from "./doc.ts";
import type { PointInput, PointsInput } from "./inputs.ts";
import { curveCharts, type CurveLevel, nStarOf } from "./load_doc.ts";
import { ttftCdfBlocks } from "./record_doc.ts";

type Obj = Record<string, any>;

function rateOf(p: PointInput): number | null {
  const s = obj(p.clientSummary), w = obj(obj(p.result).workload ?? obj(p.planned).workload);
  const r = typeof s.achieved_rate_rps === "number" ? s.achieved_rate_rps : typeof s.rate_rps === "number" ? s.rate_rps : w.rate_rps;
  return typeof r === "number" && Number.isFinite(r) ? r : null;
}

function drain(d: unknown): string {
  const x = obj(d);
  if (!Object.keys(x).length) return "-";
  return `${x.drained === true ? "drained" : x.drained === false ? "NOT drained" : "?"}${typeof x.seconds === "number" ? ` in ${num(x.seconds)} s` : ""}`;
}

/** The points as curve levels, in rate order (the order N* is judged in). */
export function pointLevels(points: readonly PointInput[]): CurveLevel[] {
  return points.map((p) => {
    const pc = obj(obj(p.clientSummary).percentiles);
    const p95 = (k: string) => (typeof obj(pc[k]).p95 === "number" ? pc[k].p95 as number : null);
    const passed = obj(p.clientSummary).passed;
    return { level: p.id, name: p.id, x: rateOf(p), ttft: p95("ttft_ms"), tpot: p95("tpot_ms"), e2e: p95("e2e_ms"), sloOk: typeof passed === "boolean" ? passed : null };
  }).sort((a, b) => (a.x ?? Infinity) - (b.x ?? Infinity));
}

/** Blocks for a points run. */
export function pointsBlocks(input: PointsInput): Block[] {
  const m = input.manifest, outcome = obj(m.outcome);
  const blocks: Block[] = [
    { kind: "heading", level: 2, text: `bench points: ${input.points.length} point(s), ${text(outcome.status ?? "no outcome recorded (still running, or killed)")}` },
  ];
  if (outcome.reason) blocks.push({ kind: "para", tone: outcome.status === "completed" ? undefined : "warn", text: text(outcome.reason) });
  const digest = obj(m.runner_digest);
  blocks.push({
    kind: "facts", items: [
      ["model", text(m.model)], ["plan", `${text(m.plan_file)} (sha256 ${String(m.plan_sha256 ?? "?").slice(0, 12)})`],
      ["runner", digest.sha256 ? `sha256 ${String(digest.sha256).slice(0, 12)} of the ${text(digest.of)}` : "-"],
      ["started", text(m.started_at)], ["ended", text(m.ended_at)], ["drain source", text(obj(m.drain_source).kind)], ["output dir", input.path],
    ],
  });
  blocks.push({ kind: "heading", level: 3, text: "Per point" }, {
    kind: "table",
    head: ["point", "rate rps (asked/achieved)", "requests", "status", "client exit", "attainment (target)", "valid", "TTFT p50/p95 ms", "TPOT p95 ms", "drain before", "drain after"],
    rows: input.points.map((p) => {
      const listed = (Array.isArray(outcome.points) ? outcome.points : []).map(obj).find((q) => q.id === p.id);
      const r = obj(p.result), s = obj(p.clientSummary), c = obj(r.client), w = obj(r.workload ?? obj(p.planned).workload), pc = obj(s.percentiles);
      return [p.id, `${num(w.rate_rps)}/${num(s.achieved_rate_rps)}`, text(w.requests ?? s.requested), text(r.status ?? (p.result ? null : listed?.status === "not_run" ? "not run" : "no result.json")),
        c.exit_code === undefined ? "-" : text(c.exit_code), s.attainment === undefined ? "-" : `${num(s.attainment)} (${num(s.attainment_target)})`,
        s.valid === undefined ? "-" : s.valid ? "yes" : "NO", `${num(obj(pc.ttft_ms).p50)}/${num(obj(pc.ttft_ms).p95)}`, num(obj(pc.tpot_ms).p95),
        drain(r.drain_initial), drain(r.drain_final)];
    }),
  });
  const levels = pointLevels(input.points);
  const slo = obj(input.points.map((p) => obj(p.clientSummary).slo).find((s) => s && typeof s === "object"));
  const targets = { ttftP95Ms: typeof slo.ttft_s === "number" ? slo.ttft_s * 1000 : null, tpotP95Ms: typeof slo.tpot_s === "number" ? slo.tpot_s * 1000 : null };
  const nStar = nStarOf(levels.filter((l) => l.sloOk !== null));
  blocks.push({ kind: "heading", level: 3, text: "Latency–rate curve" });
  if (nStar !== null) blocks.push({ kind: "para", text: `N* = ${text(nStar)}: the highest rate whose trial passed (attainment and scheduling validity) there and at every lower rate.` });
  const charts = curveCharts([{ name: "points", levels, nStar }], targets, "achieved req/s", "point");
  blocks.push(...(charts.length ? charts.map((c): Block => ({ kind: "chart", chart: c })) : [{ kind: "para", tone: "note", text: "No point has a client summary with a rate and a TTFT to draw." } as Block]));
  blocks.push({ kind: "heading", level: 3, text: "TTFT CDF" });
  const withRows = input.points.filter((p) => p.rows);
  blocks.push(...(withRows.length ? ttftCdfBlocks("TTFT CDF per point (ok requests)", withRows.map((p) => ({ name: p.id, rows: p.rows! })), "point") : [{ kind: "para", tone: "note", text: "No point has client/requests.jsonl: no CDF." } as Block]));
  const limits: string[] = [...input.notes];
  for (const p of input.points) {
    const r = obj(p.result), s = obj(p.clientSummary);
    if (!p.result) limits.push(`${p.id}: not run (no result.json)`);
    else if (r.status !== "ok") limits.push(`${p.id}: ${text(r.status)}${r.stop_reason ? `: ${text(r.stop_reason)}` : ""}`);
    if (s.valid === false) limits.push(`${p.id}: the schedule was not valid (${(Array.isArray(obj(s.validity).reasons) ? s.validity.reasons : []).map(text).join("; ") || "see summary.json"}): its latencies are not a measurement of that rate`);
    if (p.result && !p.clientSummary) limits.push(`${p.id}: no client/summary.json (the client writes it with --out {point_dir}/client)`);
  }
  blocks.push({ kind: "heading", level: 3, text: "Limitations" }, limits.length ? { kind: "list", items: limits } : { kind: "para", text: "None recorded." });
  return blocks;
}
