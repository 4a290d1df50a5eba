/**
 * Reading a prompt set: JSONL, or gzipped JSONL (`.jsonl.gz`, possibly several gzip members, read
 * with node:zlib because Deno's DecompressionStream fails on multi-member files). The set's
 * identity is the sha256 of the uncompressed bytes, the hash its manifest carries, so a record can
 * be matched to the exact prompts it ran. Errors name `file:line` and exit 65.
 *
 * The file is streamed: inflated, hashed, decoded and parsed chunk by chunk, and refused once it
 * passes {@link MAX_PROMPT_SET_BYTES} uncompressed (a gzip bomb is never inflated whole), so
 * loading holds about the parsed prompts and nothing more.
 * @module
 */
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { access, readFile, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { dataError, IkError, usageError } from "../cli/errors.ts";
import { MAX_PROMPT_SET_BYTES } from "../cli/limits.ts";
import { PromptLines } from "./_prompt_lines.ts";
import { isGzip, readUncompressedCapped } from "./_read_capped.ts";
import { Utf8LineDecoder } from "./utf8_lines.ts";
import { type Prompt, sortBuckets } from "./prompt.ts";

/** A loaded prompt set. */
export interface PromptSet {
  /** The manifest's name, else the file name without .jsonl(.gz). */
  name: string;
  /** The path it was read from. */
  path: string;
  /** sha256 (hex) of the uncompressed JSONL bytes. */
  sha256: string;
  /** The selected prompts, in file order. */
  prompts: readonly Prompt[];
  /** The manifest next to the file (`<stem>.manifest.json`), when there is one. */
  manifest: Record<string, unknown> | null;
}

/** Selection and I/O options for {@link loadPromptSet}. */
export interface LoadOptions {
  /** Keep only these buckets. */
  buckets?: readonly string[];
  /** Keep only the first N prompts of each bucket (0 or absent = all). */
  limitPerBucket?: number;
  /** Reads a whole file instead of streaming it from disk; tests may inject one. */
  readBytes?: (path: string) => Promise<Uint8Array>;
  /** The most uncompressed bytes a set may have (default {@link MAX_PROMPT_SET_BYTES}); tests pass a small one. */
  maxBytes?: number;
  /** The flag or argument that named the file, for errors (default `--prompts`). */
  flag?: string;
}

/** The file name without `.jsonl`, `.jsonl.gz` or `.gz`. */
export function setStem(path: string): string {
  return basename(path).replace(/\.gz$/i, "").replace(/\.jsonl$/i, "");
}

/** Where a set's manifest lives: `<dir>/<stem>.manifest.json`. */
export function manifestPath(path: string): string {
  return join(dirname(path), `${setStem(path)}.manifest.json`);
}

/**
 * Uncompresses gzip bytes (every member); plain bytes pass through. For bytes already in memory;
 * files go through {@link loadPromptSet}, which streams.
 * @param maxBytes the most bytes inflated (default {@link MAX_PROMPT_SET_BYTES})
 * @throws RangeError when the bytes inflate past `maxBytes` (zlib stops there)
 */
export function maybeGunzip(bytes: Uint8Array, maxBytes: number = MAX_PROMPT_SET_BYTES): Uint8Array {
  return isGzip(bytes) ? new Uint8Array(gunzipSync(bytes, { maxOutputLength: maxBytes })) : bytes;
}

async function exists(path: string): Promise<boolean> {
  try {
    // Anything there counts (a device or a pipe is then named "not a file" below, not "not found").
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** The path as given, else with `.gz` added or removed when only that variant exists. */
async function existing(path: string): Promise<string | null> {
  if (await exists(path)) return path;
  const alt = /\.gz$/i.test(path) ? path.slice(0, -3) : path + ".gz";
  return (await exists(alt)) ? alt : null;
}

/**
 * Parses and checks prompt-set text (already uncompressed).
 * @param text the JSONL text
 * @param fileName the name used in errors (`prompts.jsonl:12: ...`)
 * @param opts bucket selection
 * @throws IkError (data, 65) at the first bad line
 */
export function parsePromptSetText(
  text: string,
  fileName: string,
  opts: Pick<LoadOptions, "buckets" | "limitPerBucket"> = {},
): Prompt[] {
  const lines = new PromptLines(fileName, opts);
  lines.push(text);
  lines.end();
  if (lines.error) throw lines.error;
  return lines.prompts;
}

/**
 * Loads and checks a prompt set.
 *
 * @example
 * ```ts
 * const set = await loadPromptSet("prompts/dev.jsonl.gz", { buckets: ["short"], limitPerBucket: 4 });
 * console.log(set.name, set.sha256, set.prompts.length);
 * ```
 * @throws IkError: usage (64) when the file does not exist; data (65) when it cannot be read,
 *   is corrupt, is not UTF-8, is over `maxBytes` uncompressed (1 GiB), has a bad line, no prompts,
 *   or does not match its manifest's sha256
 */
export async function loadPromptSet(path: string, opts: LoadOptions = {}): Promise<PromptSet> {
  if ((await stat(path).catch(() => null))?.isDirectory()) throw usageError(opts.flag ?? "--prompts", `${path} is a folder, not a prompt set file`, "give a .jsonl or .jsonl.gz file");
  const found = await existing(path);
  if (found === null) {
    const builtin = /^builtin:/.test(basename(path));
    throw usageError(opts.flag ?? "--prompts", `prompt set ${builtin ? basename(path) : path} not found`, builtin ? "the built-in set is builtin:default" : "check the path");
  }
  // A folder, or a file this user cannot read, is named as such (not "not found", not "corrupt").
  const st = await stat(found).catch(() => null);
  if (st && !st.isFile()) throw usageError(opts.flag ?? "--prompts", `${found} is not a file`, "give a prompt set file (.jsonl or .jsonl.gz)");
  const readable = await access(found, constants.R_OK).then(() => true, () => false);
  if (!readable) throw usageError(opts.flag ?? "--prompts", `cannot read ${found} (permission denied)`, "make it readable, or give another file");
  const name = basename(found);
  const hash = createHash("sha256");
  const lines = new PromptLines(name, opts);
  try {
    // A byte that is not UTF-8 is named by its line (65), as a bad line is.
    const decoder = new Utf8LineDecoder(name, "save the prompt set as UTF-8");
    for await (const chunk of readUncompressedCapped(found, opts)) {
      hash.update(chunk);
      lines.push(decoder.decode(chunk));
    }
    lines.push(decoder.decode());
    lines.end();
  } catch (e) {
    if (e instanceof IkError) throw e; // over the cap, or not UTF-8 (naming its line): already the one line to print
    throw dataError(
      name,
      `cannot read (${(e as Error).message})`,
      "the file is truncated, corrupt or not UTF-8",
    );
  }
  const sha256 = hash.digest("hex");
  const manifest = await readManifest(found);
  const want = manifest?.sha256;
  if (typeof want === "string" && want && want !== sha256) {
    throw dataError(
      name,
      `sha256 ${sha256.slice(0, 12)}... does not match its manifest (${want.slice(0, 12)}...)`,
      "the file changed after it was built; rebuild it or restore it",
    );
  }
  if (lines.error) throw lines.error;
  const prompts = lines.prompts;
  if (prompts.length === 0) {
    const sel = opts.buckets && opts.buckets.length > 0 ? ` in buckets ${opts.buckets.join(",")}` : "";
    throw dataError(name, `no prompts${sel}`);
  }
  const manifestName = typeof manifest?.name === "string" && manifest.name ? manifest.name : null;
  return { name: manifestName ?? setStem(found), path: found, sha256, prompts, manifest };
}

async function readManifest(path: string): Promise<Record<string, unknown> | null> {
  const m = manifestPath(path);
  if (!(await exists(m))) return null;
  let value: unknown;
  try {
    value = JSON.parse(await readFile(m, "utf8"));
  } catch {
    throw dataError(basename(m), "not JSON");
  }
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : null;
}

/** The buckets present in a set, in natural order. */
export function setBuckets(set: PromptSet): string[] {
  return sortBuckets(set.prompts.map((p) => p.bucket));
}
