/** Evidence ids: `<kind>-<UTC yyyymmddThhmmssZ>-<8 hex>`, unique and sortable (CONTRACTS.md). */
import { randomBytes } from "node:crypto";

const ID = /^([a-z][a-z0-9_]*)-(\d{8}T\d{6}Z)-([0-9a-f]{8})$/;

/**
 * A new evidence id for a record kind at a wall-clock time.
 * @example newEvidenceId("serve_benchmark", new Date(0)) // "serve_benchmark-19700101T000000Z-1a2b3c4d"
 */
export function newEvidenceId(kind: string, at: Date = new Date()): string {
  if (!/^[a-z][a-z0-9_]*$/.test(kind)) throw new RangeError(`evidence kind '${kind}' must be snake_case`);
  const iso = at.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z");
  return `${kind}-${iso}-${randomBytes(4).toString("hex")}`;
}

/** The parts of an evidence id, or null when the text is not one (so it cannot name a path outside the store). */
export function parseEvidenceId(id: string): { kind: string; utc: string; rand: string } | null {
  const m = ID.exec(id);
  return m ? { kind: m[1], utc: m[2], rand: m[3] } : null;
}
