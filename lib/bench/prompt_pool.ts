/**
 * The prompts a load run sends: a seeded order per level, each prompt sent untagged once in the
 * whole run (so the prefix cache cannot serve it from an earlier send); once a prompt has been
 * used, it is sent again with a unique tag, and those reuses are counted (records say so).
 * @module
 */
import type { Prompt } from "../prompts/mod.ts";
import { SeededRng } from "../stats/mod.ts";

/** One pick: the prompt and its tag (null when sent untagged). */
export interface Pick {
  prompt: Prompt;
  salt: string | null;
}

/** The run's prompt pool. */
export class PromptPool {
  #used = new Set<string>();
  /** Requests that reused a prompt with a unique tag. */
  salted = 0;

  /** @param prompts the selected prompts (at least one) */
  constructor(readonly prompts: readonly Prompt[]) {
    if (!prompts.length) throw new RangeError("the prompt pool needs at least one prompt");
  }

  /** A seeded permutation of the prompts. */
  order(seed: number[]): Prompt[] {
    const a = [...this.prompts];
    const rng = new SeededRng(...seed);
    for (let i = a.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  }

  /**
   * A replay's picker: the prompts in the pool's own order, one per call (a trace's request i is
   * its prompt i), tagged `ik-t-<level>-<k>` only if a prompt comes round again.
   */
  inOrder(levelName: string): () => Pick {
    let k = 0;
    return () => {
      const i = k++;
      const prompt = this.prompts[i % this.prompts.length];
      if (this.#used.has(prompt.id)) {
        this.salted++;
        return { prompt, salt: `ik-t-${levelName}-${i}` };
      }
      this.#used.add(prompt.id);
      return { prompt, salt: null };
    };
  }

  /**
   * A level's picker: each call gives the next pick in the level's seeded order (cycling), tagged
   * `ik-<k>-s<seed>-<level>` on reuse: a function of (seed, level, seq), never a per-run nonce; the
   * part that differs comes first, so a token-level prefix cache (llama.cpp's slots, SGLang's radix
   * tree) matches no more of one tag against another than `[ik-`. Lazy, so a level of 10^5
   * requests keeps no list of picks.
   */
  picker(seed: number[], levelName: string): () => Pick {
    const order = this.order(seed);
    let k = 0;
    return () => {
      const prompt = order[k % order.length];
      const i = k++;
      if (this.#used.has(prompt.id)) {
        this.salted++;
        return { prompt, salt: `ik-${i}-s${seed[0]}-${levelName}` };
      }
      this.#used.add(prompt.id);
      return { prompt, salt: null };
    };
  }
}
