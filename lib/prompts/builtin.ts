/**
 * The built-in prompt set, compiled into the binary so that `ik selftest` and a first-time user
 * need no file: `--prompts` defaults to it, named `builtin:default`, and a record carries that name
 * and its sha256 like any other set. Twelve chat prompts, three per bucket, written for this
 * purpose (no dataset licence involved). Each medium and long prompt puts its own task first and the
 * shared story after it, so no two prompts begin alike: a server's prefix cache cannot serve one
 * prompt's start from another's (they once ended with the task, and a long prompt's 990 tokens came
 * ~960 from the cache after the first).
 * @module
 */
import { createHash } from "node:crypto";
import { dataError } from "../cli/errors.ts";
import { parsePromptSetText, type PromptSet } from "./prompt_set.ts";
import type { LoadOptions } from "./prompt_set.ts";

/** The name records carry for the built-in set. */
export const BUILTIN_NAME = "builtin:default";

const CONTEXT = "A lighthouse keeper on a remote island keeps a logbook of passing ships, storms, supply boats and the " +
  "small repairs the lamp needs. Over one winter the entries change: the supply boat stops coming, the radio " +
  "fails, and the keeper starts writing about the birds, the tides and what the light means to sailors who " +
  "never see the person who tends it. ";

const ITEMS: { id: string; bucket: string; max: number; text: string }[] = [
  { id: "vs-1", bucket: "very_short", max: 32, text: "Name three primary colours." },
  { id: "vs-2", bucket: "very_short", max: 32, text: "What is the capital of France?" },
  { id: "vs-3", bucket: "very_short", max: 32, text: "Say hello in Spanish." },
  { id: "s-1", bucket: "short", max: 64, text: "Explain in two sentences why the sky looks blue during the day." },
  { id: "s-2", bucket: "short", max: 64, text: "Give a one-paragraph summary of how a bicycle gear changes the effort needed to pedal." },
  { id: "s-3", bucket: "short", max: 64, text: "Write a short haiku about a train station at night, then explain its imagery." },
  { id: "m-1", bucket: "medium", max: 128, text: "Continue the logbook with three dated entries from the keeper's point of view. " + CONTEXT.trimEnd() },
  { id: "m-2", bucket: "medium", max: 128, text: "List five practical problems the keeper faces and how each could be solved. " + CONTEXT.trimEnd() },
  { id: "m-3", bucket: "medium", max: 128, text: "Write the letter the keeper sends when the supply boat finally returns. " + CONTEXT.trimEnd() },
  { id: "l-1", bucket: "long", max: 256, text: "Summarise the story below in one paragraph, then name its main theme. " + CONTEXT.repeat(12).trimEnd() },
  { id: "l-2", bucket: "long", max: 256, text: "Rewrite the story below as a short play with two characters. " + CONTEXT.repeat(12).trimEnd() },
  { id: "l-3", bucket: "long", max: 256, text: "Write ten questions a reader might ask about the story below, with answers. " + CONTEXT.repeat(12).trimEnd() },
];

/** The built-in set as JSONL text (what its sha256 is taken over). */
export const BUILTIN_JSONL: string = ITEMS.map((p) =>
  JSON.stringify({ id: p.id, bucket: p.bucket, messages: [{ role: "user", content: p.text }], max_tokens: p.max, source: "ik built-in" })
).join("\n") + "\n";

/** Loads the built-in set, with the same bucket selection as a file. */
export function loadBuiltinPromptSet(opts: Pick<LoadOptions, "buckets" | "limitPerBucket"> = {}): PromptSet {
  const prompts = parsePromptSetText(BUILTIN_JSONL, BUILTIN_NAME, opts);
  if (!prompts.length) {
    throw dataError(BUILTIN_NAME, `no prompts in buckets ${(opts.buckets ?? []).join(",")}`, "its buckets are very_short, short, medium, long");
  }
  return {
    name: BUILTIN_NAME,
    path: BUILTIN_NAME,
    sha256: createHash("sha256").update(BUILTIN_JSONL).digest("hex"),
    prompts,
    manifest: null,
  };
}
