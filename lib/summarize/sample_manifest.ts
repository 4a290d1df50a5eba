/**
 * `<tag>.samples.tsv`, the client shim's sample manifest (R731 on): `i, sha, prompt_len,
 * output_len`, one row per request in send order. Every cell of a dataset must carry the same
 * manifest, or the levels were not measured on the same sample.
 * @module
 */
import { dataError } from "../cli/errors.ts";
import { clipText } from "./clip_text.ts";
import { parseTsv } from "./tsv.ts";

/** One sampled request. */
export interface Sample {
  /** The prompt's hash (first 16 hex of sha256 in the shim). */
  sha: string;
  promptLen: number;
  outputLen: number;
}

/** Parses a manifest; throws a one-line data error naming `file:line`. */
export function parseSamples(text: string, where: string): Sample[] {
  const t = parseTsv(text, where);
  const need = ["sha", "prompt_len", "output_len"].filter((c) => !t.columns.includes(c));
  if (need.length) throw dataError(`${where}:1`, `lacks column(s) ${need.join(", ")}`, "a sample manifest has i, sha, prompt_len, output_len");
  return t.rows.map(({ line, fields }) => {
    const p = Number(fields.prompt_len), o = Number(fields.output_len);
    if (!/^\d+$/.test(fields.prompt_len) || !/^\d+$/.test(fields.output_len)) {
      throw dataError(`${where}:${line}`, `prompt_len '${clipText(fields.prompt_len)}' / output_len '${clipText(fields.output_len)}' must be non-negative integers`, "rewrite the manifest");
    }
    return { sha: fields.sha, promptLen: p, outputLen: o };
  });
}

/** True when two manifests list the same requests in the same order. */
export function sameSamples(a: readonly Sample[], b: readonly Sample[]): boolean {
  return a.length === b.length && a.every((x, i) => x.sha === b[i].sha && x.promptLen === b[i].promptLen && x.outputLen === b[i].outputLen);
}

/** How many distinct prompts two manifests share. */
export function sharedPrompts(a: readonly Sample[], b: readonly Sample[]): number {
  const other = new Set(b.map((x) => x.sha));
  return new Set(a.map((x) => x.sha).filter((s) => other.has(s))).size;
}
