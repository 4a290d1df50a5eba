/**
 * `ik prompts validate|info|synth|build`: check a prompt set, show what is in it, make a synthetic
 * one, or build one from a local dataset file (prompts_build.ts).
 * @module
 */
import { createHash } from "node:crypto";
import { dirname, resolve } from "node:path";
import { checkWritable, writeWhole } from "../evidence/mod.ts";
import { gzipSync } from "node:zlib";
import { usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { loadPromptSet, manifestPath, type PromptSet, setBuckets, setStem } from "../prompts/mod.ts";
import { BUILTIN_NAME, loadBuiltinPromptSet } from "../prompts/builtin.ts";
import { parseSynthBucket, type SynthBucket } from "../prompts/synth.ts";
import { lengthCounter, synthLimitations, synthSpread } from "./prompts_synth.ts";
import { synthExact } from "../prompts/synth_exact.ts";
import { escapeTerminalLine } from "../report/escape.ts";
import type { CommandContext } from "./context.ts";
import { runPromptsBuild } from "./prompts_build.ts";
import type { PromptsFlags } from "./prompts_flags.ts";

async function load(ctx: CommandContext, file: string): Promise<PromptSet> {
  return file === BUILTIN_NAME ? loadBuiltinPromptSet() : await loadPromptSet(resolve(ctx.runtime.cwd(), file), { flag: "FILE" });
}

/** A bucket as `prompts info` shows it. */
export interface BucketInfo {
  n: number;
  /** The least and most max_tokens the bucket's prompts carry; [null, null] when none carries one. */
  max_tokens: [number | null, number | null];
  /** Prompts that carry no max_tokens: the running command's default applies to them. */
  max_tokens_default: number;
}

/** What `ik prompts info` (and `validate --json`) says of a set: identity, size, and per bucket its prompts and max_tokens. */
export function describePromptSet(set: PromptSet): { name: string; path: string; sha256: string; n: number; buckets: Record<string, BucketInfo> } {
  const buckets: Record<string, BucketInfo> = {};
  for (const b of setBuckets(set)) {
    const ps = set.prompts.filter((p) => p.bucket === b);
    const mt = ps.map((p) => p.maxTokens).filter((v): v is number => v !== null);
    buckets[b] = { n: ps.length, max_tokens: [mt.length ? Math.min(...mt) : null, mt.length ? Math.max(...mt) : null], max_tokens_default: ps.length - mt.length };
  }
  return { name: set.name, path: set.path, sha256: set.sha256, n: set.prompts.length, buckets };
}

/**
 * A bucket's max_tokens in words: `4`, `4-16`, `default` (no prompt carries one), or with some
 * prompts carrying none, `4 (default for 1 of 2)`.
 */
export function maxTokensText(v: BucketInfo): string {
  const [lo, hi] = v.max_tokens;
  if (lo === null || hi === null) return "default";
  const range = lo === hi ? String(lo) : `${lo}-${hi}`;
  return v.max_tokens_default > 0 ? `${range} (default for ${v.max_tokens_default} of ${v.n})` : range;
}

/** Runs `ik prompts …`. */
export async function runPrompts(ctx: CommandContext, f: PromptsFlags): Promise<number> {
  if (f.cmd === "prompts-validate") {
    const set = await load(ctx, f.file);
    const d = describePromptSet(set);
    if (ctx.json) ctx.out(JSON.stringify({ ok: true, ...d }) + "\n");
    else ctx.out(`ok: ${set.prompts.length} prompts in ${Object.keys(d.buckets).length} bucket(s), sha256 ${set.sha256} (${escapeTerminalLine(set.name)})\n`);
    return ExitCode.OK;
  }
  if (f.cmd === "prompts-info") {
    const set = await load(ctx, f.file);
    const d = describePromptSet(set);
    if (ctx.json) ctx.out(JSON.stringify(d) + "\n");
    else {
      const lines = [`${escapeTerminalLine(set.name)}: ${set.prompts.length} prompts, sha256 ${set.sha256}`];
      for (const [b, v] of Object.entries(d.buckets)) {
        lines.push(`  ${escapeTerminalLine(b).padEnd(12)} ${String(v.n).padStart(6)} prompts  max_tokens ${maxTokensText(v)}`);
      }
      ctx.out(lines.join("\n") + "\n");
    }
    return ExitCode.OK;
  }
  if (f.cmd === "prompts-build") return await runPromptsBuild(ctx, f);
  let buckets: SynthBucket[];
  try {
    buckets = f.buckets.flatMap((b) => b.split(",")).filter((s) => s.trim()).map(parseSynthBucket);
  } catch (e) {
    throw usageError("--bucket", (e as Error).message);
  }
  const names = buckets.map((b) => b.name);
  if (new Set(names).size !== names.length) throw usageError("--bucket", `bucket names repeat (${names.join(", ")})`, "give each bucket once");
  const out = resolve(ctx.runtime.cwd(), f.out);
  await checkWritable([dirname(out)]);
  const spread = synthSpread(f);
  const counter = await lengthCounter(ctx, f);
  let made;
  try {
    made = await synthExact({ buckets, perBucket: f.perBucket, seed: f.seed, counter, prefixLen: f.prefixLen, spread });
  } catch (e) {
    if (e instanceof RangeError) throw usageError(f.prefixLen > 0 ? "--prefix-len" : "--bucket", e.message, "give a larger IN or a shorter prefix");
    throw e;
  }
  const text = made.text;
  const sha256 = createHash("sha256").update(text).digest("hex");
  const limitations = synthLimitations(counter.method, made.report, f.api);
  await writeWhole(out, /\.gz$/i.test(out) ? gzipSync(text) : text, 0o644);
  await writeWhole(manifestPath(out), JSON.stringify({
    name: setStem(out), sha256, buckets, per_bucket: f.perBucket, seed: f.seed,
    length_method: counter.method, ...counter.info, api: f.api, prefix_len: f.prefixLen, spread,
    lengths: made.report, limitations,
  }, null, 1) + "\n", 0o644);
  for (const l of limitations) ctx.err(`ik: prompts synth: ${l}\n`);
  if (ctx.json) ctx.out(JSON.stringify({ path: out, sha256, n: buckets.length * f.perBucket, length_method: counter.method, ...counter.info, lengths: made.report, limitations }) + "\n");
  else ctx.out(`wrote ${out}: ${buckets.length * f.perBucket} prompts, sha256 ${sha256}, lengths by ${counter.method}\n`);
  return ExitCode.OK;
}
