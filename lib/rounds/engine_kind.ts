/**
 * The engine kind of a manifest entry (issue 18): its `name` when that names a known engine, else
 * what its launch argv runs (`vllm serve`, `python -m vllm.entrypoints.openai.api_server`,
 * `python -m sglang.launch_server`, `sglang serve`, `llama-server`, `trtllm-serve`), else `auto`
 * (the child detects it). A name such as "vllm-mtp" or "baseline" says nothing; the argv usually
 * does. Pure.
 * @module
 */
import { knownEngineKind } from "../engines_host/resolved_config.ts";

/** A kind the child `bench serve` can be told. */
export type KnownKind = "vllm" | "sglang" | "llamacpp" | "trtllm";

/** Where an entry's kind came from. */
export type KindSource = "name" | "launch" | "none";

function base(word: string): string {
  return word.slice(word.lastIndexOf("/") + 1).toLowerCase();
}

/** The words of a launch argv, with a shell script (`bash -c "…"`) split on whitespace too. */
function launchWords(argv: readonly string[]): string[] {
  return argv.flatMap((w) => (/\s/.test(w) ? w.split(/\s+/).filter(Boolean) : [w]));
}

/**
 * The engine a launch argv starts, or null when it names none.
 * @example engineKindFromLaunch(["vllm", "serve", "Qwen/Qwen3-8B"]) // "vllm"
 * @example engineKindFromLaunch(["python3", "-m", "sglang.launch_server", "--model-path", "m"]) // "sglang"
 */
export function engineKindFromLaunch(argv: readonly string[]): KnownKind | null {
  const words = launchWords(argv);
  for (let i = 0; i < words.length; i++) {
    const w = base(words[i]);
    const next = (words[i + 1] ?? "").toLowerCase();
    if (w === "llama-server" || w === "llama_server") return "llamacpp";
    if (w === "trtllm-serve" || w === "trtllm_serve") return "trtllm";
    if ((w === "vllm" || w === "sglang") && next === "serve") return w;
    if (words[i] === "-m" && i + 1 < words.length) {
      const mod = next;
      if (mod === "vllm" || mod.startsWith("vllm.")) return "vllm";
      if (mod === "sglang" || mod.startsWith("sglang.")) return "sglang";
      if (mod === "tensorrt_llm" || mod.startsWith("tensorrt_llm.")) return "trtllm";
    }
  }
  return null;
}

/**
 * An entry's kind and where it came from: a known `name` wins (it is what the person wrote), then
 * the launch argv. `conflict` names the launch's kind when it differs from the name's.
 */
export function resolveEngineKind(name: unknown, launch: readonly string[]): { kind: KnownKind | "auto"; source: KindSource; conflict: KnownKind | null } {
  const fromName = knownEngineKind(name) as KnownKind | null;
  const fromLaunch = engineKindFromLaunch(launch);
  if (fromName) return { kind: fromName, source: "name", conflict: fromLaunch && fromLaunch !== fromName ? fromLaunch : null };
  if (fromLaunch) return { kind: fromLaunch, source: "launch", conflict: null };
  return { kind: "auto", source: "none", conflict: null };
}
