/**
 * The report of one single-mode serve_benchmark record: summary and identity, the per-bucket
 * table with 95% CIs (rounds resampled, as the record computed them), the per-round table, the
 * TTFT CDF per bucket from the request rows, and the limitations. A conversations record gets its
 * per-turn table, its run figures and a TTFT CDF per turn index instead. A record of another kind
 * gets the generic form: summary, its metrics list, limitations. Pure.
 * @module
 */
import { cdfSeries, cdfTable } from "./cdf.ts";
import { type Block, type ChartSeries, num, obj, strings, text, withCi } from "./doc.ts";

type Obj = Record<string, any>;

/** The facts every record shows: id, kind, time, engine, model, GPU, workload identity. */
export function identityFacts(record: Obj): [string, string][] {
  const id = obj(record.identity), engine = obj(id.engine), wl = obj(id.workload), gpu = obj(id.gpu);
  const ps = obj(wl.prompt_set), rs = obj(wl.request_set), tool = obj(record.tool);
  const facts: [string, string][] = [
    ["record", `${text(record.evidence_id)} (${text(record.kind)}, ${text(record.claim_class)})`],
    ["created", text(record.created_utc)],
    ["complete", record.complete === true ? "yes" : "NO: the run was interrupted"],
    ["engine", [engine.name, engine.version].filter((x) => x).map(String).join(" ") || "-"],
    ["model", text(obj(id.model).id)],
    ["GPU", gpu.name ? `${text(gpu.count ?? 1)} x ${text(gpu.name)}` : `${text(gpu.count ?? "?")} (name not known)`],
  ];
  if (ps.name || ps.sha256) facts.push(["prompt set", `${text(ps.name)} (sha256 ${String(ps.sha256 ?? "?").slice(0, 12)}, n=${text(ps.n)})`]);
  if (rs.sha256) facts.push(["request set", `sha256 ${String(rs.sha256).slice(0, 12)}, n=${text(rs.n)}`]);
  if (wl.prefix_cache) facts.push(["prefix cache", text(wl.prefix_cache)]);
  if (obj(record.data).label) facts.push(["label", text(record.data.label)]);
  facts.push(["tool", `${text(tool.name)} ${text(tool.version)}${tool.rev ? ` (${text(tool.rev)})` : ""}`]);
  return facts;
}

/** The limitations block: the record's limitations, then what it says is missing, then notes. */
export function limitationBlocks(records: readonly Obj[], notes: readonly string[] = []): Block[] {
  const items: string[] = [];
  for (const r of records) {
    for (const l of strings(r.limitations)) if (!items.includes(l)) items.push(l);
    for (const m of strings(r.missing)) if (!items.includes(`missing: ${m}`)) items.push(`missing: ${m}`);
  }
  items.push(...notes);
  return [{ kind: "heading", level: 3, text: "Limitations" }, items.length ? { kind: "list", items } : { kind: "para", text: "None recorded." }];
}

function failuresByBucket(rows: readonly Obj[] | null): Map<string, [failed: number, total: number]> {
  const out = new Map<string, [number, number]>();
  for (const r of rows ?? []) {
    for (const b of [String(r.bucket ?? "all"), "all"]) {
      const f = out.get(b) ?? [0, 0];
      f[1]++;
      if (r.ok !== true) f[0]++;
      out.set(b, f);
      if (b === "all") break;
    }
  }
  return out;
}

/** The TTFT CDF chart and its table over groups of ok rows, or a note when no row has a TTFT. */
export function ttftCdfBlocks(title: string, groups: readonly { name: string; rows: readonly Obj[] }[], first: string): Block[] {
  const vals = groups.map((g) => ({ name: g.name, values: g.rows.filter((r) => r.ok === true).map((r) => r.ttft_ms) }));
  const series = vals.map((g) => cdfSeries(g.name, g.values)).filter((s): s is ChartSeries => s !== null);
  if (!series.length) return [{ kind: "para", text: `${title}: no ok request with a TTFT to draw.`, tone: "note" }];
  return [
    { kind: "chart", chart: { kind: "cdf", title, x: { label: "TTFT (ms)" }, y: { label: "fraction of ok requests" }, series } },
    cdfTable(vals.filter((g) => g.values.length), "ms", first),
  ];
}

/** Blocks for a single-mode serve_benchmark record and its rows (a conversations record: {@link conversationsRecordBlocks}). */
export function singleRecordBlocks(record: Obj, rows: readonly Obj[] | null, notes: readonly string[] = []): Block[] {
  if (obj(obj(record.identity).workload).mode === "conversations") return conversationsRecordBlocks(record, rows, notes);
  const data = obj(record.data);
  const blocks: Block[] = [
    { kind: "heading", level: 2, text: `Single-mode benchmark ${text(record.evidence_id)}` },
    { kind: "para", text: text(record.summary) },
  ];
  if (record.complete !== true) blocks.push({ kind: "para", tone: "warn", text: "INCOMPLETE: this run was interrupted; its numbers cover only the requests that finished." });
  blocks.push({ kind: "facts", items: identityFacts(record) });
  const fails = failuresByBucket(rows);
  const buckets = Object.entries(obj(data.buckets));
  blocks.push({ kind: "heading", level: 3, text: "Per bucket: median [95% CI], rounds resampled" });
  if (buckets.length) {
    blocks.push({
      kind: "table",
      head: ["bucket", "ok", "failed", "TTFT ms", "TTFT p95 ms", "TPOT ms", "TPOT p95 ms", "decode tok/s", "e2e ms"],
      rows: buckets.map(([b, v]) => {
        const m = (k: string) => obj(obj(v)[k]);
        const f = fails.get(b);
        return [b, text(obj(v).n_requests ?? f?.[1]), f ? String(f[0]) : "-", withCi(m("ttft_ms").median, m("ttft_ms").ci95_median),
          withCi(m("ttft_ms").p95, m("ttft_ms").ci95_p95), withCi(m("tpot_ms").median, m("tpot_ms").ci95_median), withCi(m("tpot_ms").p95, m("tpot_ms").ci95_p95),
          withCi(m("decode_tok_s").median, m("decode_tok_s").ci95_median), withCi(m("e2e_ms").median, m("e2e_ms").ci95_median)];
      }),
      caption: `95% CI: ${text(obj(data.definitions).ci95 ?? "t-scaled cluster bootstrap over rounds")}`,
    });
  } else blocks.push({ kind: "para", text: "The record has no per-bucket figures (data.buckets)." });
  const rounds = Array.isArray(data.rounds) ? data.rounds.map(obj) : [];
  if (rounds.length) {
    blocks.push({ kind: "heading", level: 3, text: "Per round" }, {
      kind: "table",
      head: ["round", "ok", "failed", "TTFT ms", "TPOT ms", "decode tok/s", "total ms"],
      rows: rounds.map((r) => [text(r.index), text(r.n_requests), text(r.n_failed), num(r.ttft_ms), num(r.tpot_ms), num(r.decode_tok_s), num(r.total_ms)]),
    });
  }
  blocks.push({ kind: "heading", level: 3, text: "TTFT CDF" });
  if (rows) {
    const order = [...buckets.map(([b]) => b).filter((b) => b !== "all")];
    for (const r of rows) if (!order.includes(String(r.bucket ?? "all")) && r.bucket !== undefined) order.push(String(r.bucket));
    const groups = order.map((b) => ({ name: b, rows: rows.filter((r) => String(r.bucket) === b) }));
    if (groups.length > 1) groups.push({ name: "all", rows: [...rows] });
    blocks.push(...ttftCdfBlocks("TTFT CDF per bucket (ok requests, every round)", groups.length ? groups : [{ name: "all", rows: [...rows] }], "bucket"));
  } else blocks.push({ kind: "para", text: "The record lists no requests artifact: no CDF.", tone: "note" });
  blocks.push(...limitationBlocks([record], notes));
  return blocks;
}

/** Blocks for a `bench serve --mode conversations` record and its rows: per-turn table, run figures, TTFT CDF per turn. */
export function conversationsRecordBlocks(record: Obj, rows: readonly Obj[] | null, notes: readonly string[] = []): Block[] {
  const data = obj(record.data), wl = obj(obj(record.identity).workload), convs = obj(wl.conversations), tp = obj(data.throughput);
  const salt = obj(data.cache_salt);
  const blocks: Block[] = [
    { kind: "heading", level: 2, text: `Conversations benchmark ${text(record.evidence_id)}` },
    { kind: "para", text: text(record.summary) },
  ];
  if (record.complete !== true) blocks.push({ kind: "para", tone: "warn", text: "INCOMPLETE: this run was interrupted; its numbers cover only the turns that finished." });
  const think = obj(wl.think_ms);
  blocks.push({
    kind: "facts",
    items: [...identityFacts(record),
      ["conversations", `${text(convs.name)} (sha256 ${String(convs.sha256 ?? "?").slice(0, 12)}, n=${text(convs.n)})`],
      ["at once", `${text(data.sessions_at_once ?? wl.sessions)} (--sessions ${text(wl.sessions)})`],
      ["think time", `${text(think.mean)} ms, sd ${text(think.sd)} ms`],
      ["cache tag", data.cache_salt ? text(salt.tag).trim() : "none (--no-cache-salt)"],
      ["turns", `${text(data.planned_turns)} planned, ${text(tp.n_turns_ended)} ended (${text(tp.n_turns_ok)} ok), ${text(data.not_sent_turns)} not sent`],
      ["duration", typeof tp.duration_s !== "number" ? "-" : `${num(tp.duration_s)} s: ${num(tp.requests_per_s)} req/s (ok turns), ${num(tp.output_tok_s)} output tok/s`]],
  });
  const turns = Array.isArray(data.turns) ? data.turns.map(obj) : [];
  blocks.push({ kind: "heading", level: 3, text: "Per turn index: nearest-rank p50 / p95" });
  if (turns.length) {
    const pq = (m: Obj) => `${num(m.p50)} / ${num(m.p95)}`;
    blocks.push({
      kind: "table",
      head: ["turn", "ok", "failed", "prompt tok (mean)", "cached tok (mean)", "cached share", "TTFT ms", "vs turn 1", "TPOT ms", "e2e ms"],
      rows: turns.map((t) => [text(t.turn), text(t.n_ok), text(t.n_failed), num(t.prompt_tokens_mean), num(t.cached_tokens_mean),
        typeof t.cached_share === "number" ? `${(t.cached_share * 100).toFixed(0)} %` : "-", pq(obj(t.ttft_ms)), num(t.ttft_p50_vs_turn1), pq(obj(t.tpot_ms)), pq(obj(t.e2e_ms))]),
      caption: "vs turn 1: median TTFT of turn k over turn 1's; cached share: Σ cached / Σ prompt tokens over the turns that reported both",
    });
  } else blocks.push({ kind: "para", text: "The record has no per-turn figures (data.turns): no turn ended." });
  blocks.push({ kind: "heading", level: 3, text: "TTFT CDF" });
  if (rows) {
    const order = [...new Set(rows.map((r) => Number(r.turn)).filter((k) => Number.isInteger(k)))].sort((a, b) => a - b);
    const groups = order.map((k) => ({ name: `turn ${k}`, rows: rows.filter((r) => Number(r.turn) === k) }));
    blocks.push(...ttftCdfBlocks("TTFT CDF per turn index (ok turns)", groups.length ? groups : [{ name: "all", rows: [...rows] }], "turn"));
  } else blocks.push({ kind: "para", text: "The record lists no requests artifact: no CDF.", tone: "note" });
  blocks.push(...limitationBlocks([record], notes));
  return blocks;
}

/** Blocks for a record of a kind the report has no special form for. */
export function genericRecordBlocks(record: Obj, notes: readonly string[] = []): Block[] {
  const metrics = Array.isArray(record.metrics) ? record.metrics.map(obj) : [];
  const blocks: Block[] = [
    { kind: "heading", level: 2, text: `${text(record.kind)} ${text(record.evidence_id)}` },
    { kind: "para", text: text(record.summary) },
    { kind: "facts", items: identityFacts(record) },
  ];
  if (metrics.length) {
    blocks.push({ kind: "heading", level: 3, text: "Metrics" }, {
      kind: "table", head: ["subject", "metric", "stat", "value", "unit", "n"],
      rows: metrics.map((m) => [text(m.subject), text(m.name), text(m.stat), withCi(m.value, m.ci95), text(m.unit), text(m.n)]),
    });
  }
  blocks.push(...limitationBlocks([record], notes));
  return blocks;
}
