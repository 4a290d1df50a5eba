/**
 * vLLM's dataset defaults that ik shares: the sample size and sonnet's lengths. Apart from the
 * readers so the flags that show them in their help load no dataset code.
 * @module
 */

/** vLLM's --num-prompts default, ik's too. */
export const DEFAULT_NUM_PROMPTS = 1000;

/** vLLM's defaults: --sonnet-input-len, --sonnet-prefix-len, --sonnet-output-len. */
export const SONNET_DEFAULTS = { inputLen: 550, prefixLen: 200, outputLen: 150 } as const;
