/**
 * Whether two records asked the same requests (seed 000's `identity.workload.request_set`: a
 * sha256 over the selected prompt ids and buckets, each prompt's max_tokens and template
 * settings, the API, exact-length and --extra-body). When the hashes differ, the settings that
 * feed the hash are compared one by one so the refusal can name what differs. Pure.
 * @module
 */
import { canonicalJson } from "../evidence/mod.ts";

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? v as Obj : {});

/** The request_set of a record, or null. */
export function requestSetOf(record: Obj): { sha256: string; n: number | null } | null {
  const rs = obj(obj(obj(record.identity).workload).request_set);
  return typeof rs.sha256 === "string" && rs.sha256 ? { sha256: rs.sha256, n: typeof rs.n === "number" ? rs.n : null } : null;
}

/** The settings that feed the request_set hash: [label, value] read from a record. */
function inputs(record: Obj): [string, unknown][] {
  const args = obj(obj(record.request).args);
  const ps = obj(obj(obj(record.identity).workload).prompt_set);
  const rs = requestSetOf(record);
  return [
    ["prompt set", ps.sha256 ?? args.prompts ?? null],
    ["requests (n)", rs?.n ?? null],
    ["--buckets", args.buckets ?? null],
    ["--limit-per-bucket", args.limit_per_bucket ?? null],
    ["--max-tokens", args.max_tokens ?? null],
    ["--api", args.api ?? null],
    ["exact-length", args.exact_length ?? null],
    ["--extra-body", args.extra_body ?? null],
    ["--temperature", args.temperature ?? 0],
    ["--chat-template-kwargs", args.chat_template_kwargs ?? null],
  ];
}

const show = (v: unknown): string => {
  const s = typeof v === "string" ? v : canonicalJson(v ?? null);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
};

/**
 * Why two records did not ask the same requests, or null when their request_set hashes agree.
 * @returns one line, e.g. `request_set differs (A fce4874e09c1, B b4bed499e8c5): --max-tokens null vs 16`
 */
export function requestSetDifference(a: Obj, b: Obj): string | null {
  const ra = requestSetOf(a), rb = requestSetOf(b);
  if (!ra || !rb) {
    const which = [!ra ? "A" : "", !rb ? "B" : ""].filter(Boolean).join(" and ");
    return `${which} carr${which.includes(" and ") ? "y" : "ies"} no identity.workload.request_set, so there is no telling whether the same requests were asked`;
  }
  if (ra.sha256 === rb.sha256) return null;
  const ia = inputs(a), ib = inputs(b);
  const diffs: string[] = [];
  for (let i = 0; i < ia.length; i++) {
    const [label, va] = ia[i];
    const vb = ib[i][1];
    if (canonicalJson(va ?? null) !== canonicalJson(vb ?? null)) diffs.push(`${label} ${show(va)} vs ${show(vb)}`);
  }
  const what = diffs.length ? diffs.join("; ") : "the per-prompt settings (the records' flags agree; a prompt's own max_tokens or template settings differ)";
  return `request_set differs (A ${ra.sha256.slice(0, 12)}, B ${rb.sha256.slice(0, 12)}): ${what}`;
}
