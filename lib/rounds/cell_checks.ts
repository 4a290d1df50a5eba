/**
 * The verdicts a rounds cell gets beyond "bench serve printed a record" (issue 18): the manifest's
 * `model.id` must be among the served models (`model_missing`); an engine that exits before ik
 * stops it leaves no comparable cell (`engine_exited`); failures over `--slo-max-fail` given in
 * `--serve-args` make the cell `too_many_failures`; an `expect` hard-gate violation makes it
 * `hard_gate` (measured, shown, never ranked). Pure.
 * @module
 */
import { flagValue } from "../cli/argv_words.ts";
import { usageError } from "../cli/errors.ts";
import type { ExitStatus } from "../runtime/mod.ts";
import type { CellMetrics } from "./cell_metrics.ts";

/**
 * The model a cell benchmarks: the manifest's `model.id` when given, else the first served model.
 * A `model.id` absent from a non-empty /v1/models list is `model_missing`, naming what is served;
 * an engine that lists nothing (or answers no list) is trusted with `model.id`.
 * @param modelId the manifest's model.id, or null
 * @param served the ids /v1/models listed (empty when it listed none or did not answer)
 */
export function checkServedModel(modelId: string | null, served: readonly string[]): { model: string | null; status: string | null; detail: string | null } {
  if (modelId === null) {
    if (served.length) return { model: served[0], status: null, detail: null };
    return { model: null, status: "serve_failed", detail: "no model name: /v1/models listed none and the manifest has no model.id" };
  }
  if (!served.length || served.includes(modelId)) return { model: modelId, status: null, detail: null };
  const list = served.slice(0, 8).map((m) => JSON.stringify(m)).join(", ") + (served.length > 8 ? ` and ${served.length - 8} more` : "");
  return { model: null, status: "model_missing", detail: `the manifest's model.id ${JSON.stringify(modelId)} is not served; the engine serves ${list}` };
}

/** `failed of n requests failed` for the `all` bucket of a cell's metrics, or null when unknown. */
export function failureCount(metrics: CellMetrics | undefined): { failed: number; n: number } | null {
  const f = metrics?.all?.failed_requests;
  if (!f || typeof f.value !== "number") return null;
  return { failed: f.value, n: typeof f.n === "number" ? f.n : NaN };
}

function failuresText(metrics: CellMetrics | undefined): string {
  const c = failureCount(metrics);
  if (!c) return "";
  return Number.isFinite(c.n) ? `; ${c.failed} of ${c.n} requests failed` : `; ${c.failed} requests failed`;
}

/**
 * The detail of an `engine_exited` cell: the engine's exit before ik stopped it, with the
 * measurement's failures.
 * @param when "during the measurement" or "after the measurement, before ik stopped it"
 */
export function engineExitedDetail(exit: ExitStatus, when: string, metrics: CellMetrics | undefined): string {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  return `the engine ${how} ${when}${failuresText(metrics)}: this round of it is not comparable`;
}

/**
 * `--slo-max-fail N` from the cells' `--serve-args`, or null when not given.
 * @throws IkError (64) for a value that is not a whole number >= 0
 */
export function maxFailFrom(serveArgs: readonly string[]): number | null {
  const v = flagValue(serveArgs, "--slo-max-fail");
  if (v === null) return null;
  if (!/^\d+$/.test(v.trim())) throw usageError("--serve-args", `--slo-max-fail ${JSON.stringify(v)} is not a whole number >= 0`);
  return Number(v);
}

/**
 * Single mode: the detail of a `too_many_failures` cell (its failures over `maxFail`), or null.
 * Load mode judges `--slo-max-fail` per level in N* already, so it is not checked here.
 */
export function tooManyFailures(metrics: CellMetrics | undefined, maxFail: number | null): string | null {
  if (maxFail === null || maxFail === undefined) return null;
  const c = failureCount(metrics);
  if (!c || c.failed <= maxFail) return null;
  return `${c.failed}${Number.isFinite(c.n) ? ` of ${c.n}` : ""} requests failed, more than --slo-max-fail ${maxFail}`;
}

/** The detail of a `hard_gate` cell: its violations, one after another. */
export function hardGateDetail(violations: readonly string[]): string {
  return `${violations.join("; ")}: the engine did not run as the manifest expects, so its cells are not comparable`;
}
