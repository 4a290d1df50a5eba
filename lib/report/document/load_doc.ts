/**
 * The report of a load run (the capacity record and the serve_benchmark measurement it cites):
 * the capacity claim, the per-level table, the per-bucket table at each level, the
 * latency–throughput curve (one point per level, the SLO line, N* marked) for each latency the
 * SLO bounds (TTFT always), the TTFT CDF per level, and the limitations. A capacity record whose
 * measurement cannot be read names it and shows its own curve (capacity_curve.ts). Pure.
 * @module
 */
import { sloFromRecord } from "../../metrics/mod.ts";
import { sortBuckets } from "../../prompts/mod.ts";
import { sloCell } from "../terminal/capacity_table.ts";
import { nearestRank, orderStatisticCi } from "../../stats/mod.ts";
import { type Block, type ChartSpec, num, obj, text, withCi } from "./doc.ts";
import { identityFacts, limitationBlocks, ttftCdfBlocks } from "./record_doc.ts";
import type { RecordBundle } from "./inputs.ts";
import { capacityCurveEntries, capacityCurveLevels, capacityCurveTable } from "./capacity_curve.ts";
import type { CurveLevel } from "./curve_level.ts";
export type { CurveLevel } from "./curve_level.ts";

type Obj = Record<string, any>;
const strOrNull = (v: unknown): string | null => (typeof v === "string" && v ? v : null);


/** The SLO targets (ms) a run was held to. */
export interface SloTargets {
  ttftP95Ms?: number | null;
  tpotP95Ms?: number | null;
  e2eP95Ms?: number | null;
}

/**
 * N* from the levels' own SLO verdicts, by the capacity record's rule (lib/metrics/slo.ts `nStar`):
 * in ascending order of level (numeric levels are sorted; named ones, e.g. points, keep the order
 * given), the highest level where the SLO holds there and at every lower level; a level not judged
 * or not achieved ends the walk as a failing one does. Null when none holds.
 */
export function nStarOf(levels: readonly CurveLevel[]): number | string | null {
  const ordered = levels.every((l) => typeof l.level === "number") ? [...levels].sort((a, b) => (a.level as number) - (b.level as number)) : levels;
  let best: number | string | null = null;
  for (const l of ordered) {
    if (l.sloOk !== true || l.notJudged || l.notAchieved) break;
    best = l.level;
  }
  return best;
}

const LATENCIES = [
  ["ttft", "ttftP95Ms", "TTFT p95 (ms)", "TTFT"],
  ["tpot", "tpotP95Ms", "TPOT p95 (ms)", "TPOT"],
  ["e2e", "e2eP95Ms", "e2e p95 (ms)", "e2e"],
] as const;

/**
 * The latency–throughput charts: TTFT p95 always, TPOT and e2e p95 when the SLO bounds them;
 * each series one point per level, the SLO's horizontal line, N* marked.
 * @param series one entry per engine (one for a plain load run)
 * @param xLabel what x is
 * @param pointWord what one point is (`level`, `point`)
 */
export function curveCharts(series: readonly { name: string; levels: readonly CurveLevel[]; nStar: number | string | null }[], slo: SloTargets, xLabel: string, pointWord = "level"): ChartSpec[] {
  const charts: ChartSpec[] = [];
  for (const [key, sloKey, label, short] of LATENCIES) {
    const target = slo[sloKey];
    if (key !== "ttft" && !(typeof target === "number")) continue;
    const ss = series.map((s) => ({
      name: s.name,
      points: s.levels.filter((l) => l.x !== null && l[key] !== null).map((l) => ({ x: l.x as number, y: l[key] as number, label: l.name })),
    })).filter((s) => s.points.length);
    if (!ss.length) continue;
    const marks = series.flatMap((s) => {
      const l = s.levels.find((v) => v.level === s.nStar);
      return l && l.x !== null && l[key] !== null ? [{ x: l.x, y: l[key] as number, label: `N* = ${l.name}${series.length > 1 ? ` (${s.name})` : ""}` }] : [];
    });
    charts.push({
      kind: "curve", title: `${short} p95 against ${xLabel}, one point per ${pointWord}`, x: { label: xLabel }, y: { label },
      series: ss, marks, hlines: typeof target === "number" ? [{ y: target, label: `SLO ${short} p95 <= ${num(target)} ms` }] : [],
    });
  }
  return charts;
}

/** The levels of a measured load record, read for the curve. */
export function curveLevels(measured: Obj): { levels: CurveLevel[]; xLabel: string } {
  const levels: Obj[] = (Array.isArray(obj(measured.data).levels) ? measured.data.levels as unknown[] : []).map(obj);
  const tok = levels.some((l) => typeof obj(l.summary).output_tok_s_per_gpu === "number");
  return {
    xLabel: tok ? "output tok/s per GPU" : "achieved req/s",
    levels: levels.map((l) => {
      const s = obj(l.summary);
      const x = tok ? s.output_tok_s_per_gpu : s.achieved_rps;
      const p95 = (k: string) => (typeof obj(s[k]).p95 === "number" ? s[k].p95 as number : null);
      return { level: l.level, name: text(l.name ?? l.level), x: typeof x === "number" ? x : null, ttft: p95("ttft_ms"), tpot: p95("tpot_ms"), e2e: p95("e2e_ms"), sloOk: typeof s.slo_ok === "boolean" ? s.slo_ok : null,
        notJudged: strOrNull(l.not_judged), notAchieved: strOrNull(l.not_achieved) };
    }),
  };
}

/** The SLO of a load run: the capacity record's, else the measurement's workload.slo (snake_case keys, or a schema-1 record's camelCase). */
export function sloOf(capacity: Obj | null, measured: Obj | null): SloTargets {
  return sloFromRecord(obj(capacity?.data).slo) ?? sloFromRecord(obj(obj(measured?.identity).workload).slo) ?? {};
}

function perLevelTable(levels: Obj[]): Block {
  return {
    kind: "table",
    head: ["level", "target/offered rps", "ok/failed", "TTFT p50 ms", "TTFT p95 ms [CI]", "TTFT p95 fail-adj", "TPOT p95 ms [CI]", "e2e p95 ms", "ITL p99 ms", "out tok/s/GPU", "goodput rps", "in flight", "SLO"],
    rows: levels.map((l) => {
      const s = obj(l.summary), fa = obj(obj(s.ttft_ms_failure_adjusted).p95);
      return [text(l.name ?? l.level) + (l.client_limited ? " (client-limited?)" : ""), `${num(l.target_rate_rps)}/${num(l.offered_rate_rps)}`, `${text(s.n_ok)}/${text(s.n_failed)}`,
        num(obj(s.ttft_ms).p50), withCi(obj(s.ttft_ms).p95, obj(s.ttft_ms).ci95_p95), fa.censored ? "> max" : num(fa.value), withCi(obj(s.tpot_ms).p95, obj(s.tpot_ms).ci95_p95),
        num(obj(s.e2e_ms).p95), num(obj(s.itl_ms).p99), num(s.output_tok_s_per_gpu), num(s.goodput_rps), num(s.mean_inflight), sloCell(s.slo_ok, strOrNull(l.not_judged), strOrNull(l.not_achieved))];
    }),
  };
}

function perBucketTable(levels: Obj[], rows: readonly Obj[]): Block | null {
  const out: string[][] = [];
  for (const l of levels) {
    const mine = rows.filter((r) => r.level === l.name);
    const buckets = sortBuckets(new Set(mine.map((r) => String(r.bucket ?? "all"))));
    for (const b of buckets) {
      const sel = mine.filter((r) => String(r.bucket ?? "all") === b), ok = sel.filter((r) => r.ok === true);
      const vals = (k: string) => ok.map((r) => r[k]).filter((v): v is number => typeof v === "number" && Number.isFinite(v));
      const ttft = vals("ttft_ms").sort((x, y) => x - y);
      out.push([text(l.name), b, String(ok.length), String(sel.length - ok.length), num(nearestRank(ttft, 50)), withCi(nearestRank(ttft, 95), orderStatisticCi(ttft, 95)), num(nearestRank(vals("tpot_ms"), 95)), num(nearestRank(vals("e2e_ms"), 95))]);
    }
  }
  return out.length ? { kind: "table", head: ["level", "bucket", "ok", "failed", "TTFT p50 ms", "TTFT p95 ms [CI]", "TPOT p95 ms", "e2e p95 ms"], rows: out, caption: "95% CI: order statistic, requests treated as independent (under load they are not: treat it as optimistic); none under 20 requests" } : null;
}

/** A merged sharded run's shards: send lag on each shard's clock and against the shared timetable. */
function shardBlocks(merge: Obj): Block[] {
  const slices: Obj[] = Array.isArray(merge.slices) ? (merge.slices as unknown[]).map(obj) : [];
  const sync = (c: Obj) => (c.source !== "adjtimex" ? "unreadable" : c.unsynced ? "UNSYNCED" : `est ${num(c.est_error_ms)} ms`);
  return [
    { kind: "heading", level: 3, text: `Shards (group ${text(merge.group)}, ${text(merge.shards)} shards)` },
    {
      kind: "table",
      head: ["shard", "sent", "send lag p50/p99 ms", "vs wall timetable p50/p99 ms", "median vs all shards ms", "clock moved ms", "host clock"],
      rows: slices.map((s) => {
        const own = obj(s.send_lag_ms), tt = obj(s.timetable_lag_ms), off = s.median_offset_ms as number | null;
        return [text(s.shard), text(s.sent), `${num(own.p50)}/${num(own.p99)}`, `${num(tt.p50)}/${num(tt.p99)}`,
          off === null || off === undefined ? "-" : `${num(off)}${Math.abs(off) > 5 ? " (OFF)" : ""}`, num(s.anchor_drift_ms), sync(obj(s.clock_sync))];
      }),
      caption: `schedule hash ${text(merge.schedule_hash).slice(0, 16)}…; a shard more than 5 ms from the median of all shards, or whose clock moved more than 5 ms, is named in the limitations`,
    },
  ];
}

/**
 * The level a capacity record's N* marks on the curve: `n_star` of a concurrency grid,
 * `rate_star_rps` of a `--rates` grid, or a partial merge's nominal level (`…_nominal`: its stated
 * value is that level scaled by the share sent, which matches no level); null when none.
 */
export function capacityNStar(capacity: Obj): number | string | null {
  const cd = obj(capacity.data);
  const key = cd.n_star !== undefined && cd.n_star !== null ? "n_star" : "rate_star_rps";
  const v = cd[`${key}_nominal`] ?? cd[key] ?? null;
  return typeof v === "number" || typeof v === "string" ? v : null;
}

/** A capacity record's N* as stated (a partial merge's scaled bound), `≥ ` before a lower bound; null when none. */
function statedNStar(cd: Obj): string | null {
  const v = cd.n_star ?? cd.rate_star_rps ?? null;
  if (typeof v !== "number" && typeof v !== "string") return null;
  return `${cd.n_star_lower_bound === true ? "≥ " : ""}${text(v)}`;
}

/** Blocks for a load run: `bundle.record` is the capacity record or the measurement. */
export function loadRunBlocks(bundle: RecordBundle): Block[] {
  const isCap = bundle.record.kind === "capacity";
  const capacity = isCap ? bundle.record : bundle.capacity ?? null;
  const measured = isCap ? bundle.measured?.record ?? null : bundle.record;
  const rows = isCap ? bundle.measured?.rows ?? null : bundle.rows;
  const cd = obj(capacity?.data);
  const blocks: Block[] = [{ kind: "heading", level: 2, text: `Load run ${text(measured?.evidence_id ?? bundle.id)}` }];
  if (capacity) blocks.push({ kind: "para", text: text(capacity.summary) });
  if (measured) blocks.push({ kind: "para", text: text(measured.summary) });
  const merge = obj(obj(measured?.data).merge);
  for (const r of [capacity, measured]) {
    if (!r || r.complete === true) continue;
    blocks.push({ kind: "para", tone: "warn", text: Object.keys(merge).length
      ? `PARTIAL: ${text(r.evidence_id)} merges ${text((merge.present as unknown[] | undefined)?.length ?? 0)} of ${text(merge.shards)} shards (absent: ${[...(merge.missing as number[] ?? []), ...(merge.killed as number[] ?? [])].join(", ") || "none"}; interrupted: ${(merge.interrupted as number[] ?? []).join(", ") || "none"}); N* is a lower bound.`
      : `INCOMPLETE: ${text(r.evidence_id)} was interrupted; its numbers cover only what finished.` });
  }
  // Without the measurement, the capacity record's own curve still holds the levels' p95s.
  const fromCurve = !measured && capacity !== null && capacityCurveEntries(capacity).length > 0;
  const { levels, xLabel } = measured ? curveLevels(measured) : fromCurve ? capacityCurveLevels(capacity!) : { levels: [], xLabel: "" };
  const nStar = capacity ? capacityNStar(capacity) : nStarOf(levels);
  const slo = sloOf(capacity, measured);
  const sloText = [["TTFT", slo.ttftP95Ms], ["TPOT", slo.tpotP95Ms], ["e2e", slo.e2eP95Ms]].filter(([, v]) => typeof v === "number").map(([k, v]) => `${k} p95 <= ${num(v)} ms`).join(", ");
  const facts: [string, string][] = [
    ["N*", `${capacity ? text(statedNStar(cd)) : text(nStar)}${capacity ? "" : " (from the levels' SLO checks: no capacity record found)"}${cd.reason ? ` (${text(cd.reason)})` : ""}`],
    ["SLO", sloText || "none given"],
  ];
  if (capacity) {
    facts.push(["cost at N*", cd.usd_per_1m_output_tokens === null || cd.usd_per_1m_output_tokens === undefined ? "-" : `${cd.usd_per_1m_output_tokens_bound === "upper" ? "≤ " : ""}$${num(cd.usd_per_1m_output_tokens)} per 1M output tokens at $${num(cd.gpu_price_usd_h)}/GPU-h x ${text(cd.gpu_count)}`]);
    facts.push(["in flight at N*", num(cd.mean_inflight_at_n_star)], ["capacity record", text(capacity.evidence_id)]);
  }
  if (measured) {
    const md = obj(measured.data);
    facts.push(["levels", `${text(md.level_kind)}${md.open_loop === false ? " (closed loop)" : md.open_loop ? " (open loop)" : ""}`], ["e2e reference", md.e2e_ref_ms ? `${num(md.e2e_ref_ms)} ms (${text(md.e2e_ref_source)})` : "-"]);
    facts.push(...identityFacts(measured).filter(([k]) => k !== "complete"));
  }
  blocks.push({ kind: "facts", items: facts });
  const rawLevels: Obj[] = (Array.isArray(obj(measured?.data).levels) ? measured!.data.levels as unknown[] : []).map(obj);
  blocks.push({ kind: "heading", level: 3, text: "Per level" });
  if (rawLevels.length) blocks.push(perLevelTable(rawLevels));
  else if (isCap && !measured) {
    const mid = typeof cd.measurement === "string" ? cd.measurement : "(none named in data.measurement)";
    const table = capacityCurveTable(capacity!);
    blocks.push({ kind: "para", tone: "warn", text: `The levels were measured in ${mid}, which could not be read (see the limitations): ${table ? "the figures below are the capacity record's own curve, without CIs, per-bucket rows or a TTFT CDF" : "the capacity record holds no curve of its own to show"}.` });
    if (table) blocks.push(table);
  } else blocks.push({ kind: "para", text: "No level was measured." });
  if (Object.keys(merge).length) blocks.push(...shardBlocks(merge));
  const pb = rows ? perBucketTable(rawLevels, rows) : null;
  if (pb) blocks.push({ kind: "heading", level: 3, text: "Per bucket at each level" }, pb);
  blocks.push({ kind: "heading", level: 3, text: "Latency–throughput curve" });
  const charts = curveCharts([{ name: text(obj(measured?.data).label ?? cd.label ?? "run"), levels, nStar }], slo, xLabel);
  blocks.push(...(charts.length ? charts.map((c): Block => ({ kind: "chart", chart: c })) : [{ kind: "para", tone: "note", text: "No level has both a throughput and a latency to draw." } as Block]));
  blocks.push({ kind: "heading", level: 3, text: "TTFT CDF" });
  if (rows) blocks.push(...ttftCdfBlocks("TTFT CDF per level (ok requests)", rawLevels.map((l) => ({ name: text(l.name), rows: rows.filter((r) => r.level === l.name) })), "level"));
  else blocks.push({ kind: "para", tone: "note", text: "The measured record's request rows are not available: no CDF." });
  blocks.push(...limitationBlocks([capacity, measured].filter((r): r is Obj => r !== null), bundle.notes));
  return blocks;
}
