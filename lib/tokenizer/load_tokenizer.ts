/**
 * `--tokenizer PATH`: a local Hugging Face `tokenizer.json` (or a folder holding one, with its
 * optional `tokenizer_config.json`), read with @huggingface/tokenizers (pure JS). Nothing is ever
 * fetched: ik runs on air-gapped hosts. Used to re-count output tokens when a server returns
 * neither ids nor usage, and to size synthetic prompts (the text's own tokens, no special tokens);
 * `countPrompt` adds the tokenizer's special tokens, as vLLM's dataset filters count a text.
 * @module
 */
import { Tokenizer } from "@huggingface/tokenizers";
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { dataError } from "../cli/errors.ts";

/** A loaded tokenizer. */
export interface LoadedTokenizer {
  /** The tokenizer.json that was read. */
  path: string;
  /** sha256 of tokenizer.json (records name the tokenizer by content, not by path). */
  sha256: string;
  /** Token ids of a text, without special tokens (what a server's completion_tokens counts). */
  encode(text: string): number[];
  /** The number of tokens in a text, without special tokens (output tokens; a message's own text). */
  count(text: string): number;
  /**
   * The number of tokens in a text with the special tokens the tokenizer adds (its post-processor:
   * a BOS for Llama-style tokenizers, none for Qwen3's): `len(tokenizer(text).input_ids)`, as
   * vLLM's datasets count a text for their length filters, and as a completions server counts a prompt.
   */
  countPrompt(text: string): number;
}

/**
 * Loads a tokenizer from a file or a folder.
 * @param path `tokenizer.json`, or a folder that holds it
 * @param where the flag named in errors (default `--tokenizer`)
 * @throws IkError (exit 65) naming the file when it is missing, not JSON, or not a tokenizer
 */
export async function loadTokenizer(path: string, where = "--tokenizer"): Promise<LoadedTokenizer> {
  let file = path;
  try {
    if ((await stat(path)).isDirectory()) file = join(path, "tokenizer.json");
  } catch {
    throw dataError(`${where} ${path}`, "no such file or folder", "give a local tokenizer.json or the folder holding it (nothing is downloaded)");
  }
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch {
    throw dataError(`${where} ${file}`, "cannot read it", "give a local tokenizer.json or the folder holding it");
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    throw dataError(`${where} ${file}`, `not a JSON tokenizer file (${(e as Error).message.split("\n")[0]})`);
  }
  if (json === null || typeof json !== "object" || !("model" in json)) {
    throw dataError(`${where} ${file}`, "not a Hugging Face tokenizer.json (no 'model' section)");
  }
  let config: Record<string, unknown> = {};
  if (basename(file) === "tokenizer.json") {
    try {
      config = JSON.parse(await readFile(join(file, "..", "tokenizer_config.json"), "utf8"));
    } catch { /* optional */ }
  }
  let tok: Tokenizer;
  try {
    tok = new Tokenizer(json as Record<string, unknown>, config);
  } catch (e) {
    throw dataError(`${where} ${file}`, `the tokenizer could not be built: ${(e as Error).message.split("\n")[0]}`);
  }
  const encode = (text: string): number[] => tok.encode(text, { add_special_tokens: false }).ids;
  return {
    path: file,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    encode,
    count: (text) => (text ? encode(text).length : 0),
    countPrompt: (text) => tok.encode(text, { add_special_tokens: true }).ids.length,
  };
}
