/**
 * The evidence record (CONTRACTS.md, seed 000): what was claimed, how it was measured, what is
 * missing and what limits it, with every artifact named by sha256. One shape for every kind.
 * @module
 */
import type { Metric } from "../metrics/metric.ts";
import type { Artifact } from "./store.ts";
import { redactObject } from "./redact.ts";

/** observed: measured here; derived: computed from observed records. */
export type ClaimClass = "observed" | "derived";

/** An evidence record. */
export interface EvidenceRecord {
  evidence_id: string;
  kind: string;
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
export function buildRecord(r: Omit<EvidenceRecord, "created_utc" | "request"> & { request: { command: string; args: Record<string, unknown> }; createdUtc?: Date }): EvidenceRecord {
  const { createdUtc, ...rest } = r;
  return {
    ...rest,
    created_utc: (createdUtc ?? new Date()).toISOString(),
    request: { command: r.request.command, args: redactObject(r.request.args) },
  };
}
