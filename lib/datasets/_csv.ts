/**
 * CSV rows of a trace file (RFC 4180 fields: quotes, doubled quotes; one record per line, which
 * the BurstGPT and Azure traces are), with the header's columns looked up by name. Errors name
 * `file:line` and exit 65.
 * @module
 */
import { dataError } from "../cli/errors.ts";

/**
 * Splits one CSV line into fields.
 * @throws IkError (65) on an unterminated quote or text after a closing quote
 */
export function splitCsvLine(line: string, where: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let v = "";
      i++;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q === -1) throw dataError(where, "unterminated quoted field");
        v += line.slice(i, q);
        if (line[q + 1] === '"') {
          v += '"';
          i = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      out.push(v);
      if (i === line.length) return out;
      if (line[i] !== ",") throw dataError(where, "text after a closing quote");
      i++;
    } else {
      const c = line.indexOf(",", i);
      if (c === -1) {
        out.push(line.slice(i).trim());
        return out;
      }
      out.push(line.slice(i, c).trim());
      i = c + 1;
    }
  }
}

/** Column positions of a header, by name. */
export interface CsvHeader {
  index: Map<string, number>;
  width: number;
}

/**
 * Reads the header line and checks it has every required column.
 * @throws IkError (65) naming `file:1` and the missing columns
 */
export function csvHeader(line: string, where: string, required: readonly string[]): CsvHeader {
  const names = splitCsvLine(line, where).map((s) => s.trim());
  const index = new Map<string, number>();
  names.forEach((n, i) => index.set(n, i));
  const missing = required.filter((r) => !index.has(r));
  if (missing.length) {
    throw dataError(where, `missing column${missing.length > 1 ? "s" : ""} ${missing.map((m) => `'${m}'`).join(", ")} (the header has ${names.map((n) => `'${n}'`).join(", ")})`, "give the trace's CSV with its header line");
  }
  return { index, width: names.length };
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A numeric field, written in decimal (`12`, `-3.5`, `1e3`).
 * @throws IkError (65) naming the line, the column and the value
 */
export function csvNumber(fields: readonly string[], h: CsvHeader, col: string, where: string): number {
  const raw = fields[h.index.get(col) as number] ?? "";
  // Decimal only: Number() would also take 0x10, 0b1, 0o7 and Infinity.
  const v = DECIMAL.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(v)) throw dataError(where, `'${col}' is not a number ('${raw.slice(0, 40)}')`);
  return v;
}
