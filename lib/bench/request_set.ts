/**
 * identity.workload.request_set (seed 000): a sha256 over exactly what was asked per prompt,
 * independent of the engine: the selected ids and buckets, each prompt's max_tokens and merged
 * chat_template_kwargs, plus the API, the exact-length request, --extra-body (secret-looking
 * values redacted) and a --temperature other than 0. Two records of the same file with another
 * selection or template differ here.
 * @module
 */
import { canonicalSha256, redactObject } from "../evidence/mod.ts";
import type { Prompt } from "../prompts/mod.ts";
import type { Runner } from "./runner.ts";

/** The request-set identity of a selection under a runner's settings. */
export function requestSet(prompts: readonly Prompt[], runner: Runner): { sha256: string; n: number } {
  const items = prompts.map((p) => ({
    id: p.id,
    bucket: p.bucket,
    max_tokens: runner.maxFor(p),
    chat_template_kwargs: runner.cfg.api === "chat" ? (runner.extraFor(p).chat_template_kwargs ?? null) : null,
  }));
  const extra = { ...runner.cfg.extraBody };
  delete extra.chat_template_kwargs;
  const settings: Record<string, unknown> = { api: runner.cfg.api, exact_length: runner.cfg.exactLength, extra_body: redactObject(extra) };
  // The temperature asked, where it is not the 0 every body carried before --temperature (so
  // records of the default settings keep the hash they had).
  const t = runner.cfg.temperature;
  if (t !== undefined && t !== 0) settings.temperature = t === null ? "server" : t;
  return { sha256: canonicalSha256({ items, settings }), n: items.length };
}
