/**
 * Whether this ik knows a record's layout (`schema`, lib/evidence/record.ts RECORD_SCHEMA): a
 * record without `schema` is schema 1, and every schema from 1 to RECORD_SCHEMA is read. A record
 * of a later schema was made by a newer ik, whose fields this one may misread, so every reader of
 * `compare` and `report` refuses it rather than print numbers it cannot vouch for. Pure.
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { RECORD_SCHEMA } from "../evidence/mod.ts";

/** The oldest record layout ik reads (a record without `schema`). */
export const OLDEST_RECORD_SCHEMA = 1;

/**
 * Why ik cannot read `record`'s layout, or null when it can.
 * @param record a parsed evidence.json
 */
export function recordSchemaProblem(record: Record<string, unknown>): string | null {
  if (!("schema" in record) || record.schema === undefined) return null;
  const s = record.schema;
  if (typeof s === "number" && Number.isInteger(s) && s >= OLDEST_RECORD_SCHEMA && s <= RECORD_SCHEMA) return null;
  const shown = (JSON.stringify(s) ?? String(s)).slice(0, 40);
  return `record schema ${shown}, which this ik does not know (it reads schemas ${OLDEST_RECORD_SCHEMA} to ${RECORD_SCHEMA})`;
}

/**
 * Throws the refusal of a record whose layout this ik does not know.
 * @param file the evidence.json, named in the message
 * @param where the place named in the error (`compare A`, `report <id>`)
 * @throws IkError 65
 */
export function assertKnownSchema(record: Record<string, unknown>, file: string, where: string): void {
  const problem = recordSchemaProblem(record);
  if (problem) throw dataError(where, `${file}: ${problem}`, "made by a newer ik? use that version");
}
