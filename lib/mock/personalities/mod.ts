/**
 * The wire personalities, by engine name.
 * @module
 */
import type { EngineName } from "../options.ts";
import type { Personality } from "../personality.ts";
import { llamacpp } from "./llamacpp.ts";
import { openai } from "./openai.ts";
import { sglang } from "./sglang.ts";
import { trtllm } from "./trtllm.ts";
import { vllm } from "./vllm.ts";

/** Every personality, keyed by its `--engine` name. */
export const PERSONALITIES: Readonly<Record<EngineName, Personality>> = {
  vllm,
  sglang,
  llamacpp,
  trtllm,
  openai,
};

/** The personality for an engine name. */
export function personalityFor(engine: EngineName): Personality {
  return PERSONALITIES[engine];
}
