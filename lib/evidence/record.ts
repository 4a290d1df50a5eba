/**
 * The evidence record (CONTRACTS.md, seed 000): what was claimed, how it was measured, what is
 * missing and what limits it, with every artifact named by sha256. One shape for every kind.
 * @module
 */
import type { Metric } from "../metrics/metric.ts";
import type { Artifact } from "./store.ts";
import { redactObject } from "./redact.ts";

/**
 * The record layout's version. 2: every key snake_case (`workload.slo` and the capacity record's
 * `data.slo` as `ttft_p95_ms`, `tpot_p95_ms`, `e2e_p95_ms`, `max_fail`; a load level's
 * `event_loop_lag_ms` as `p50_ms`, `p99_ms`, `max_ms`; its `server.started_at_ms`). A record without
 * `schema` is schema 1 (camelCase in those places); readers accept both.
 */
export const RECORD_SCHEMA = 2;

/** observed: measured here; derived: computed from observed records. */
export type ClaimClass = "observed" | "derived";

/** An evidence record. */
export interface EvidenceRecord {
  evidence_id: string;
  kind: string;
  /** The layout's version ({@link RECORD_SCHEMA}); absent in schema 1 records. */
  schema: number;
  claim_class: ClaimClass;
  /** One line a person reads first. */
  summary: string;
  created_utc: string;
  /** The ik that made it. */
  tool: { name: "ik"; version: string; rev: string };
  /** What was run (arguments with secrets redacted and the base URL as an HMAC tag). */
  request: { command: string; args: Record<string, unknown> };
  identity: { gpu: Record<string, unknown>; engine: Record<string, unknown>; model: Record<string, unknown>; workload: Record<string, unknown> };
  metrics: Metric[];
  artifacts: Artifact[];
  /** Facts the record would need and does not have. */
  missing: string[];
  /** What limits the claim, each under its condition. */
  limitations: string[];
  data: Record<string, unknown>;
  /** False when the run was interrupted or is otherwise partial. */
  complete: boolean;
}

/** Builds a record; args are redacted here so no caller can forget. */
export function buildRecord(r: Omit<EvidenceRecord, "created_utc" | "request" | "schema"> & { request: { command: string; args: Record<string, unknown> }; createdUtc?: Date }): EvidenceRecord {
  const { createdUtc, evidence_id, kind, ...rest } = r;
  return {
    evidence_id,
    kind,
    schema: RECORD_SCHEMA,
    ...rest,
    created_utc: (createdUtc ?? new Date()).toISOString(),
    request: { command: r.request.command, args: redactObject(r.request.args) },
  };
}
