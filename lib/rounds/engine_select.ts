/**
 * `--engines a,b`: which of the manifest's engines a rounds run uses, and where each one's
 * Prometheus text lives.
 * @module
 */
import { usageError } from "../cli/errors.ts";
import type { EngineSpec, RoundsEngineKind } from "./manifest.ts";

/**
 * The engines named in `only` (comma-separated labels or a list), in manifest order; all of them
 * when `only` is null, empty or blank (a list of only commas is an error). An unknown label is a
 * usage error (exit 64) listing the known ones.
 * @example selectEngines(specs, "a,c")
 */
export function selectEngines(specs: readonly EngineSpec[], only: string | readonly string[] | null | undefined): EngineSpec[] {
  if (only === null || only === undefined) return [...specs];
  const words = (typeof only === "string" ? only.split(",") : only).map((w) => w.trim()).filter(Boolean);
  if (!words.length) {
    if (typeof only === "string" ? only.trim() === "" : only.length === 0) return [...specs];
    throw usageError("--engines", "no engine label given", `give labels from the manifest: ${knownLabels(specs)}`);
  }
  const known = new Set(specs.map((s) => s.label));
  const unknown = [...new Set(words.filter((w) => !known.has(w)))];
  if (unknown.length) {
    throw usageError("--engines", `unknown label${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")}`, `the manifest has ${knownLabels(specs)}`);
  }
  const wanted = new Set(words);
  return specs.filter((s) => wanted.has(s.label));
}

function knownLabels(specs: readonly EngineSpec[]): string {
  return specs.map((s) => s.label).join(", ") || "(none)";
}

/** The Prometheus path of an engine kind (CONTRACTS.md): trtllm `/prometheus/metrics`, others `/metrics`. */
export function defaultMetricsPath(kind: RoundsEngineKind): string {
  return kind === "trtllm" ? "/prometheus/metrics" : "/metrics";
}

/** The path to scrape for one engine: the manifest's `metrics_path`, else its kind's default. */
export function metricsPathOf(spec: Pick<EngineSpec, "kind" | "metrics_path">): { path: string; source: "manifest" | "engine default" } {
  return spec.metrics_path ? { path: spec.metrics_path, source: "manifest" } : { path: defaultMetricsPath(spec.kind), source: "engine default" };
}
