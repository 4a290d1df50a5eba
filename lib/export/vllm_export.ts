/**
 * `ik export --format vllm`: a load record's levels as `vllm bench serve` result files, one
 * `<tag>.json` per level, plus a runs.tsv so `ik summarize vllm --runs DIR/runs.tsv --results DIR`
 * reads the export back (there are no container logs, so its FLAGS say so and it is never
 * PUBLISHABLE). runs.tsv's conc is vLLM's --max-concurrency where the level had one (an in-flight
 * cap, a closed loop's workers), else the grid value (a rate level's rate, req/s, which
 * `ik summarize vllm` heads "Rate (req/s)"); its warmups, the requests ik sent once before
 * the first level, sit on that level. A level of an interrupted record carries `ik_interrupted` and
 * rc 130 in runs.tsv. Pure: the source in, file names and texts out.
 * @module
 */
import { usageError } from "../cli/errors.ts";
import { sloFromRecord } from "../metrics/slo.ts";
import type { ExportSource, Obj } from "./record_source.ts";
import { vllmJson } from "./py_json.ts";
import { levelInterrupted, type VllmExportMeta, vllmLevelResult } from "./vllm_level_file.ts";

/** A file to write: its name inside the output directory and its text. */
export interface ExportFile {
  name: string;
  text: string;
}

const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? v as Obj : {});
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[.]+/, "_");

/** The record-wide facts of a load record. */
export function exportMeta(src: ExportSource): VllmExportMeta {
  const r = src.record, data = obj(r.data), args = obj(obj(r.request).args), wl = obj(obj(r.identity).workload);
  const model = String(obj(obj(r.identity).model).id ?? args.model ?? "");
  const slo = sloFromRecord(wl.slo);
  const cap = [args.max_in_flight, obj(args.vllm).max_concurrency, wl.max_in_flight].find((v) => typeof v === "number" && Number.isInteger(v) && v > 0);
  return {
    evidenceId: src.evidenceId, label: String(data.label ?? args.label ?? "ik"), model,
    tokenizer: typeof args.tokenizer === "string" && args.tokenizer ? args.tokenizer : model,
    api: String(args.api ?? obj(data.request_profile).api ?? "chat"), createdUtc: String(r.created_utc ?? ""),
    levelKind: data.level_kind === "concurrency" ? "concurrency" : "rate", closedLoop: data.open_loop === false,
    burstiness: typeof wl.burstiness === "number" ? wl.burstiness : 1, slo: wl.slo != null, interrupted: r.complete === false,
    goodputMs: slo ? { ttft: slo.ttftP95Ms ?? null, tpot: slo.tpotP95Ms ?? null, e2el: slo.e2eP95Ms ?? null } : null,
    maxInFlight: data.open_loop === false ? null : (cap as number | undefined) ?? null,
  };
}

/**
 * The requests ik sent once before its first level, which a container log shows ahead of that
 * level's: the warm-ups (--warmup), then, for an open-loop --concurrency grid without
 * --ref-e2e-ms, the reference requests that measured e2e_ref (--ref-requests).
 */
export function requestsBeforeLevels(src: ExportSource): number {
  const args = obj(obj(src.record.request).args), data = obj(src.record.data);
  const count = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0);
  return count(args.warmup) + (data.e2e_ref_source === "reference_requests" ? count(args.ref_requests) : 0);
}

/**
 * The files of a vLLM export.
 * @throws IkError 64 for a single-mode record: its requests ran one at a time, in rounds over
 *   buckets, and no `vllm bench serve` result describes that
 */
export function vllmExportFiles(src: ExportSource): ExportFile[] {
  if (src.mode !== "load") {
    throw usageError("--format vllm", `${src.evidenceId} is a ${src.mode}-mode record: its requests ran one at a time in rounds over buckets, which no vllm bench serve result describes`, "use --format csv or --format jsonl for it, or export a --mode load record");
  }
  const meta = exportMeta(src);
  const dataset = safe(`${meta.label}-${meta.closedLoop ? "closed-loop" : meta.levelKind}`);
  const files: ExportFile[] = [];
  const runs = ["tag\tdataset\tconc\tserial_lo\tserial_hi\twarmups\tcatfile\trc\tcontainer"];
  const warmups = requestsBeforeLevels(src);
  src.levels.forEach((lv, i) => {
    const tag = safe(`${meta.label}-${lv.name}`);
    const file = vllmLevelResult(meta, lv);
    files.push({ name: `${tag}.json`, text: vllmJson(file) });
    // conc: vLLM's --max-concurrency where the level had one (the cap, the closed loop's workers), else the grid value
    // (request_rate inf without a cap: every request due at once, so all of them; the level's value is no rate)
    const conc = typeof file.max_concurrency === "number" ? file.max_concurrency : lv.level > 0 && file.request_rate !== "inf" ? lv.level : lv.rows.length;
    // rc 130 (interrupted, as CONTRACTS' table): summarize flags the cell ("client rc 130").
    runs.push([tag, dataset, String(conc), "0", "0", String(i === 0 ? warmups : 0), "-", levelInterrupted(meta, lv) ? "130" : "0", "-"].join("\t"));
  });
  files.push({ name: "runs.tsv", text: runs.join("\n") + "\n" });
  return files;
}
