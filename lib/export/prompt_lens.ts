/**
 * `input_lens` of a vLLM export: vLLM writes every request's prompt_len, failed ones included (it is
 * set before the request is sent), so a failed request ik has no server count for gets the best
 * length its level holds, and the file's `ik_input_lens` note says where each length that is not
 * the server's count came from. Lengths of successful requests are the server's count (else the
 * prompt set's target, else 0), as before, so total_input_tokens is unchanged.
 * @module
 */
import type { Obj } from "./record_source.ts";

/** Where one request's input length came from. */
export type PromptLenSource =
  /** the server's usage.prompt_tokens */
  | "server"
  /** the prompt set's declared input_tokens (the length ik built the prompt to) */
  | "target"
  /** the server's count of the identical prompt (same id, same cache salt) in another request */
  | "same_prompt"
  /** the same prompt under another cache salt: an estimate, the salt tag's tokens apart */
  | "other_salt"
  /** nothing known: written 0 */
  | "unknown";

/** A level's input lengths, in row order, and where each came from. */
export interface PromptLens {
  lens: number[];
  from: PromptLenSource[];
}

const count = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** The value most requests had (the first seen among ties). */
function mostCommon(xs: readonly number[]): number {
  const n = new Map<number, number>();
  let best = xs[0], most = 0;
  for (const x of xs) {
    const c = (n.get(x) ?? 0) + 1;
    n.set(x, c);
    if (c > most) (best = x), (most = c);
  }
  return best;
}

/**
 * Every row's input length: the server's count, else the prompt set's target; for a failed row
 * without either, the server's count of the same prompt (same `id`, same `salt`) in another request
 * of the level, else of the same prompt under another cache salt (an estimate), else 0, unknown.
 * @param rows a level's request rows, in send order
 */
export function promptLens(rows: readonly Obj[]): PromptLens {
  // the server's counts per prompt id, with the request's salt
  const counted = new Map<string, { salt: string | null; n: number }[]>();
  for (const r of rows) {
    const n = count(r.prompt_tokens);
    if (n === null || typeof r.id !== "string") continue;
    const salt = typeof r.salt === "string" ? r.salt : null;
    if (!counted.has(r.id)) counted.set(r.id, []);
    counted.get(r.id)!.push({ salt, n });
  }
  const lens: number[] = [], from: PromptLenSource[] = [];
  const put = (n: number, f: PromptLenSource) => (lens.push(n), from.push(f));
  for (const r of rows) {
    const server = count(r.prompt_tokens), target = count(r.target_prompt_tokens);
    if (server !== null) put(server, "server");
    else if (target !== null) put(target, "target");
    else if (r.ok === true || typeof r.id !== "string" || !counted.has(r.id)) put(0, "unknown");
    else {
      const salt = typeof r.salt === "string" ? r.salt : null;
      const same = counted.get(r.id)!.filter((c) => c.salt === salt);
      // another salt: a salted one prefers salted counts (their tags alike), an unsalted one any
      const alike = counted.get(r.id)!.filter((c) => (c.salt === null) === (salt === null));
      if (same.length) put(mostCommon(same.map((c) => c.n)), "same_prompt");
      else put(mostCommon((alike.length ? alike : counted.get(r.id)!).map((c) => c.n)), "other_salt");
    }
  }
  return { lens, from };
}

const WHY: Record<Exclude<PromptLenSource, "server">, string> = {
  target: "the prompt set's declared input_tokens (the length ik built the prompt to)",
  same_prompt: "the server's count of the identical prompt (same id and cache salt) in another request of this level",
  other_salt: "an estimate: the server's count of the same prompt under another cache salt in this level (the salt tags' few tokens apart)",
  unknown: "unknown (no server count, no declared length, the prompt not counted elsewhere in this level): written 0, not a length",
};

/** At most this many indices are listed per source. */
const MAX_INDICES = 20;

/**
 * The `ik_input_lens` note: which entries of input_lens are not the server's count, and where they
 * came from (0-based indices into the arrays); null when every entry is the server's count.
 */
export function promptLensNote(p: PromptLens): string | null {
  const parts: string[] = [];
  for (const src of Object.keys(WHY) as (keyof typeof WHY)[]) {
    const at = p.from.flatMap((f, i) => (f === src ? [i] : []));
    if (!at.length) continue;
    const list = at.slice(0, MAX_INDICES).join(", ") + (at.length > MAX_INDICES ? `, … ${at.length - MAX_INDICES} more` : "");
    parts.push(`${at.length} ${WHY[src]} [requests ${list}]`);
  }
  if (!parts.length) return null;
  return `input_lens is the server's usage.prompt_tokens except for ${p.from.filter((f) => f !== "server").length} request(s) the server gave no count for: ` +
    `${parts.join("; ")}; total_input_tokens counts successful requests only, as vLLM's`;
}
