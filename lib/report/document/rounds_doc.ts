/**
 * The report of a `bench rounds` output dir: the design and outcome, per bucket the engines'
 * medians over rounds with 95% CIs and their ratios to the reference engine with paired CIs, read
 * and marked as the run's own summary.md has them (lib/rounds/markdown.ts: the verdict, `≥` for an
 * N* at the top of the grid, [FAILURES], [HARD GATE]), failures, failed cells, resolved configs;
 * then, from the engines' bench serve records when the store holds them, the latency–throughput
 * curves with each engine's N* (load mode) and the TTFT CDF per engine. Pure.
 * @module
 */
import { sortBuckets } from "../../prompts/mod.ts";
import { type Block, num, obj, strings, text, withCi } from "./doc.ts";
import type { RoundsInput } from "./inputs.ts";
import { capacityNStar, curveCharts, curveLevels, nStarOf, sloOf } from "./load_doc.ts";
import { ttftCdfBlocks } from "./record_doc.ts";

type Obj = Record<string, any>;

/** Whether the row's engine is the one its `best` or `reference` field names. */
const isEngine = (r: Obj, field: "best" | "reference"): boolean => typeof r[field] === "string" && r.engine === r[field];

/**
 * An engine's marks in a bucket table, as the run's own summary.md has them (lib/rounds/markdown.ts):
 * `(best)` or `(reference)`, `[FAILURES]`, `[HARD GATE]`, `[SELF-REPORTED CONFIG]`.
 */
function engineMarks(r: Obj, resolved: Obj): string {
  const info = obj(resolved[String(r.engine)]);
  let marks = isEngine(r, "best") ? " (best)" : isEngine(r, "reference") ? " (reference)" : "";
  if (r.failed_requests) marks += " [FAILURES]";
  if (strings(info.violations).length || String(r.verdict ?? "").includes("[HARD GATE]")) marks += " [HARD GATE]";
  if (info.status === "SELF_REPORTED") marks += " [SELF-REPORTED CONFIG]";
  return marks;
}

/**
 * How a row reads: summary.json's verdict (`best`, `worse`, `no clear difference …`, `too few
 * rounds …`, `never ranked: …`) and its note on differing N*, as summary.md shows them; a summary
 * from before verdicts falls back to why the engine was left out of the ranking.
 */
function reading(r: Obj): string {
  const parts = [r.verdict, r.n_star_note].filter((x): x is string => typeof x === "string" && x !== "");
  if (parts.length) return parts.join("; ");
  return typeof r.excluded_from_best === "string" && r.excluded_from_best ? `never ranked: ${r.excluded_from_best}` : "-";
}

function bucketTables(rows: Obj[], resolved: Obj): Block[] {
  const seen = new Set(rows.map((r) => String(r.bucket)));
  const buckets = [...(seen.has("all") ? ["all"] : []), ...sortBuckets([...seen].filter((b) => b !== "all"))];
  const out: Block[] = [];
  for (const b of buckets) {
    const mine = rows.filter((r) => String(r.bucket) === b);
    out.push({ kind: "heading", level: 4, text: `Bucket ${b}` }, {
      kind: "table",
      head: ["metric", "engine", "median [95% CI]", "rounds", "ratio to reference [95% CI]", "pairs", "reading"],
      rows: mine.map((r) => {
        const unit = r.unit ? ` ${r.unit}` : "";
        return [text(r.metric), `${text(r.engine)}${engineMarks(r, resolved)}`, `${r.lower_bound ? "≥ " : ""}${withCi(r.median, r.ci95)}${unit}`, text(r.n),
          isEngine(r, "reference") ? "1" : withCi(r.ratio_to_best, r.ratio_ci95), text(r.n_pairs), reading(r)];
      }),
    });
  }
  out.push({
    kind: "para", tone: "note",
    text: "Ratios are to the reference (the best median among the ranked engines); an engine is named (best) only where every other ranked engine's ratio CI excludes 1 with at least 3 round pairs. " +
      "[FAILURES]: failed requests in that bucket (its latencies cover only the requests it answered), never ranked. [HARD GATE]: ran with a config the manifest's expect contradicts, never ranked." +
      (rows.some((r) => r.lower_bound) ? " ≥: a lower bound (an N* at the top of the grid, or below a level that was not judged)." : ""),
  });
  return out;
}

/** Blocks for a rounds run. */
export function roundsBlocks(input: RoundsInput): Block[] {
  const plan = input.plan, summary = input.summary;
  const engines = (Array.isArray(plan.engines) ? plan.engines : []).map(obj);
  const cells = input.cells;
  const bad = cells.filter((c) => c.status !== "ok");
  const design = obj(plan.design), prompts = obj(plan.prompts);
  // A run stopped short (run.ts ranSoFar): its whole rounds and their balance, not the plan's.
  const ran = plan.ran && typeof plan.ran === "object" ? obj(plan.ran) : null;
  const balanced = ran ? ran.balanced === true : design.balanced === true;
  const blocks: Block[] = [
    {
      kind: "heading", level: 2,
      text: ran
        ? `bench rounds: ${text(plan.mode)} mode, STOPPED SHORT: ${text(ran.whole_rounds)} of ${text(plan.rounds)} rounds whole, ${engines.length} engines`
        : `bench rounds: ${text(plan.mode)} mode, ${text(plan.rounds)} rounds, ${engines.length} engines`,
    },
    ...(input.incomplete ? [{ kind: "para", tone: "warn", text: `INCOMPLETE: ${input.incomplete}.` } as Block] : []),
    { kind: "para", text: `${cells.length} cells, ${bad.length} not ok. Order: ${text(design.design)} design, period ${text(design.period)}, balanced: ${balanced ? "yes" : "NO"}${ran ? ` over the ${text(ran.whole_rounds)} whole round(s) that ran` : ""}. ${plan.mode === "load" ? "Medians are [derived] from each round's capacity record" : "Medians are [observed] (client-side timer in bench serve)"}; ratios are [derived].` },
    {
      kind: "facts", items: [
        ["engines", engines.map((e) => `${text(e.label)} (${text(e.name ?? e.kind)}${e.version ? ` ${text(e.version)}` : ""})`).join(", ") || "-"],
        ["prompt set", `${text(prompts.name)} (sha256 ${String(prompts.sha256 ?? "?").slice(0, 12)}, n=${text(prompts.n)})`],
        ["started", text(plan.started)], ["ended", text(plan.ended)],
        ["serve args", text(obj(plan.settings).serve_args)],
        ["output dir", input.path],
      ],
    },
  ];
  const rows = Array.isArray(summary.rows) ? summary.rows.map(obj) : [];
  blocks.push({ kind: "heading", level: 3, text: "Per bucket: medians over rounds and ratios to the reference engine" });
  blocks.push(...(rows.length ? bucketTables(rows, input.resolved) : [{ kind: "para", text: "No successful rounds: nothing to compare." } as Block]));
  const failures = Array.isArray(summary.failures) ? summary.failures.map(obj) : [];
  if (failures.length) {
    blocks.push({ kind: "heading", level: 3, text: "Failed requests" }, {
      kind: "table", head: ["engine", "bucket", "failed", "requests", "rounds"],
      rows: failures.map((f) => [text(f.engine), text(f.bucket), num(f.failed_requests), num(f.requests), text(f.rounds)]),
    });
  }
  if (bad.length) {
    blocks.push({ kind: "heading", level: 3, text: "Failed cells" }, {
      kind: "table", head: ["round", "engine", "status", "detail"],
      rows: bad.map((c) => [text(c.round), text(c.label), text(c.status), text(c.detail ?? obj(c.ready).last ?? obj(c.serve).returncode).slice(0, 200)]),
    });
  }
  const resolved = Object.entries(input.resolved).map(([label, v]) => [label, obj(v)] as const);
  if (resolved.length) {
    blocks.push({ kind: "heading", level: 3, text: "Resolved configuration (from server logs)" }, {
      kind: "table", head: ["engine", "status", "version", "warnings", "unknown settings", "hard-gate violations", "self-reported (unverified)"],
      rows: resolved.map(([label, v]) => [label, text(v.status), text(v.version), text(v.warnings), strings(v.unknown_settings).join(", ") || "-", strings(v.violations).join("; ") || "-", strings(v.self_reported).join(", ") || "-"]),
    });
  }
  blocks.push(...engineCharts(input));
  const limits: string[] = [...(input.incomplete ? [`incomplete: ${input.incomplete}`] : []), ...input.notes];
  for (const w of strings(plan.manifest_warnings)) limits.push(`manifest: ${w}`);
  if (plan.stopped_early) limits.push(`stopped early after round ${text(obj(plan.stopped_early).round)} (adaptive stop): the CIs come out slightly too narrow (optional stopping)`);
  if (plan.interrupted) limits.push(`interrupted after ${text(obj(plan.interrupted).after_cells)} cell(s): ${ran ? `${text(ran.whole_rounds)} of ${text(plan.rounds)} rounds ran whole` : "the run stopped short"}`);
  if (plan.stopped_on_write_failure) limits.push(`stopped on a failed write: ${text(obj(plan.stopped_on_write_failure).note)}`);
  if (!balanced) limits.push(`the order is not balanced${ran ? " over the rounds that ran" : ""}: position effects are not cancelled`);
  for (const [label, info] of Object.entries(input.resolved)) {
    if (strings(obj(info).violations).length) limits.push(`${label}: hard-gate violations: ${strings(obj(info).violations).join("; ")}`);
  }
  blocks.push({ kind: "heading", level: 3, text: "Limitations" }, limits.length ? { kind: "list", items: limits } : { kind: "para", text: "None recorded." });
  return blocks;
}

function engineCharts(input: RoundsInput): Block[] {
  const blocks: Block[] = [];
  const labels = [...input.records.keys()];
  if (!labels.length) return [{ kind: "heading", level: 3, text: "Charts" }, { kind: "para", tone: "note", text: "No bench serve record of this run was found: no curve or CDF." }];
  if (input.plan.mode === "load") {
    const series = labels.map((label) => {
      const b = input.records.get(label)!;
      const measured = b.record.kind === "capacity" ? b.measured?.record ?? null : b.record;
      const { levels, xLabel } = measured ? curveLevels(measured) : { levels: [], xLabel: "" };
      const nStar = b.record.kind === "capacity" ? capacityNStar(b.record) : nStarOf(levels);
      return { name: label, levels, nStar, xLabel, slo: sloOf(b.record.kind === "capacity" ? b.record : null, measured), rows: b.record.kind === "capacity" ? b.measured?.rows ?? null : b.rows };
    });
    blocks.push({ kind: "heading", level: 3, text: "Latency–throughput curve (each engine's last measured round)" });
    const charts = curveCharts(series, series[0]?.slo ?? {}, series[0]?.xLabel || "throughput");
    blocks.push(...(charts.length ? charts.map((c): Block => ({ kind: "chart", chart: c })) : [{ kind: "para", tone: "note", text: "No level has both a throughput and a latency to draw." } as Block]));
    blocks.push({ kind: "heading", level: 3, text: "TTFT CDF (each engine at its N*, else its first level)" });
    blocks.push(...ttftCdfBlocks("TTFT CDF per engine", series.map((s) => {
      const at = s.levels.find((l) => l.level === s.nStar) ?? s.levels[0];
      return { name: `${s.name}${at ? ` @ ${at.name}` : ""}`, rows: (s.rows ?? []).filter((r) => at && r.level === at.name) };
    }), "engine"));
  } else {
    blocks.push({ kind: "heading", level: 3, text: "TTFT CDF (every round)" });
    blocks.push(...ttftCdfBlocks("TTFT CDF per engine (ok requests, every round)", labels.map((l) => ({ name: l, rows: input.records.get(l)!.rows ?? [] })), "engine"));
  }
  return blocks;
}
