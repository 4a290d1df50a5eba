/**
 * Whether slices belong to one sharded run (`ik merge`): one group, one S, each K once, and the
 * same schedule hash, request set, seed, grid, SLO, model, GPUs, price, timeouts, gap, start time
 * and ik build. The first difference is a data error (65) that names it and both slices; a
 * missing, killed or interrupted shard is refused unless partial merges are allowed.
 * @module
 */
import { dataError, usageError } from "../cli/errors.ts";
import { canonicalJson } from "../evidence/mod.ts";
import { type Found, obj, type Slice, type StagingLeft } from "./slices.ts";

/** The group to merge, checked. */
export interface Group {
  id: string;
  s: number;
  /** Present slices, by K. */
  slices: Slice[];
  /** The slice whose clock frame and identity the merged record takes (lowest K present). */
  ref: Slice;
  /** Shards with neither a record nor a staging directory. */
  missing: number[];
  /** Shards that left only a staging journal (killed, or still running). */
  killed: StagingLeft[];
  /** Slices written as interrupted (complete: false). */
  interrupted: Slice[];
}

const args = (s: Slice) => obj(obj(s.record.request).args);
const workload = (s: Slice) => obj(obj(s.record.identity).workload);

/** The fields every slice must share, as (what the error calls it, how to read it). */
const SAME: readonly [string, (s: Slice) => unknown][] = [
  ["schedule hash", (s) => s.data.schedule_hash],
  ["request set", (s) => workload(s).request_set],
  ["seed", (s) => args(s).seed],
  ["grid", (s) => [s.data.level_kind, args(s).rates ?? args(s).concurrency]],
  ["SLO", (s) => [args(s).slo_ttft_p95_ms, args(s).slo_tpot_p95_ms, args(s).slo_e2e_p95_ms, args(s).slo_max_fail]],
  ["model", (s) => args(s).model],
  ["gpu count", (s) => args(s).gpu_count],
  ["gpu name", (s) => obj(obj(s.record.identity).gpu).name],
  ["gpu price", (s) => args(s).gpu_price_usd_h],
  ["timeouts", (s) => [args(s).timeout_s, args(s).idle_timeout_s]],
  ["level gap", (s) => s.data.level_gap_s],
  ["--start-at", (s) => s.data.start_at_ms],
  ["ik version", (s) => { const t = obj(s.record.tool); return `${t.version} (${t.rev})`; }],
  ["endpoint", (s) => args(s).base_url],
  ["duration", (s) => args(s).duration_s],
  ["burstiness", (s) => args(s).burstiness],
  ["max requests per level", (s) => args(s).max_requests_per_level],
  ["requests per level", (s) => args(s).requests_per_level ?? null],
  ["closed loop", (s) => args(s).closed_loop],
  ["reference e2e", (s) => args(s).ref_e2e_ms],
  ["prompt set", (s) => s.data.prompt_set_sha256],
  ["max tokens", (s) => args(s).max_tokens],
  ["api", (s) => args(s).api],
  ["engine kind", (s) => args(s).engine_kind],
  ["request body options", (s) => [args(s).extra_body, args(s).chat_template_kwargs, args(s).exact_length, args(s).token_ids]],
  ["label", (s) => args(s).label],
];

const show = (v: unknown) => {
  const t = v === undefined ? "none" : canonicalJson(v);
  return t.length > 80 ? `${t.slice(0, 77)}...` : t;
};

/**
 * Picks the group, checks it, and says what is missing.
 * @throws IkError 65 naming the first difference, or a missing shard without `allowPartial`
 */
export function checkGroup(found: Found, opts: { group?: string; allowPartial: boolean }): Group {
  let slices = found.slices, staging = found.staging;
  if (opts.group !== undefined) {
    slices = slices.filter((s) => s.group === opts.group);
    staging = staging.filter((s) => s.group === opts.group);
    // A group that left only staging journals (every shard killed) is said as such below (65), as without --group.
    if (!slices.length && !staging.length) throw usageError("--group", `no slice of group '${opts.group}' here (found: ${[...new Set([...found.slices, ...found.staging].map((s) => s.group))].join(", ") || "none"})`, "give one of the groups found, or the folders that hold yours");
  }
  if (!slices.length) throw dataError(staging.map((x) => x.dir).join(", "), "found no finished slice, only staging journals of killed (or still running) shards", "wait for the shards to end, or rerun them: a group with no finished slice cannot be merged");
  const groups = [...new Set([...slices, ...staging].map((s) => s.group))];
  if (groups.length > 1) {
    const a = slices[0], b = [...slices, ...staging].find((s) => s.group !== a.group) as Slice | StagingLeft;
    throw dataError("ik merge", `different group ids: '${a.group}' (${a.dir}) and '${b.group}' (${b.dir})`, "merge one run's slices, or pick one with --group ID");
  }
  const byK = new Map<number, Slice | StagingLeft>();
  const s = slices[0].s;
  for (const x of [...[...slices].sort((p, q) => p.k - q.k), ...staging]) {
    if (x.s !== s) throw dataError(x.dir, `shard ${x.k}/${x.s} is one of ${x.s} shards, but ${slices[0].dir} is one of ${s}`, "merge one run's slices");
    if (!(x.k >= 0 && x.k < s)) throw dataError(x.dir, `shard index ${x.k} is out of range 0..${s - 1}`, "these slices are not one run's; merge only the slices of one --shard K/S run");
    const other = byK.get(x.k);
    if (other) {
      // A staging journal of the finished record's own id is its leftover; another id is a second
      // process that sent the same slice (killed or still running), and the server got both.
      if ("record" in other && !("record" in x) && x.evidenceId === other.record.evidence_id) continue;
      throw dataError(x.dir, `shard ${x.k}/${s} appears twice (also ${other.dir})`, "two processes sent the same slice; merge only one of them");
    }
    byK.set(x.k, x);
  }
  const present = [...byK.values()].filter((x): x is Slice => "record" in x).sort((p, q) => p.k - q.k);
  const ref = present[0];
  for (const x of present.slice(1)) {
    for (const [name, get] of SAME) {
      const a = canonicalJson(get(ref) ?? null), b = canonicalJson(get(x) ?? null);
      if (a !== b) throw dataError(x.dir, `different ${name}: ${show(get(x))} here, ${show(get(ref))} in shard ${ref.k}/${s} (${ref.dir})`, "merge only slices of one run");
    }
  }
  const killed = [...byK.values()].filter((x): x is StagingLeft => !("record" in x));
  const missing: number[] = [];
  for (let k = 0; k < s; k++) if (!byK.has(k)) missing.push(k);
  const interrupted = present.filter((x) => x.record.complete !== true);
  if (!opts.allowPartial) {
    if (missing.length) throw dataError("ik merge", `shard ${missing[0]}/${s} is missing (${missing.length} of ${s} missing: ${missing.join(", ")})`, "find its directory (a shard that refused at start writes nothing: see its stderr), or merge what is there with --allow-partial");
    if (killed.length) throw dataError(killed[0].dir, `shard ${killed[0].k}/${s} left only a .staging journal (killed, or still running)`, "wait for it, or merge without it with --allow-partial");
    if (interrupted.length) throw dataError(interrupted[0].dir, `shard ${interrupted[0].k}/${s} was interrupted (complete: false)`, "merge it with --allow-partial");
  }
  return { id: groups[0], s, slices: present, ref, missing, killed, interrupted };
}
