/**
 * `ik bench vllm`'s pieces: vLLM's flags (parsed, checked, the not-honoured ones), the
 * dataset-name → prompt-set mapping, vLLM's result JSON and summary block.
 *
 * @example
 * ```ts
 * import { summaryBlock, vllmResultFile } from "./mod.ts";
 * // const result = vllmResultFile(exportMeta(src), src.levels[0], options);
 * // console.log(summaryBlock(result, [99]));
 * ```
 * @module
 */
export { benchVllmFlags, honouredFlags } from "./flags.ts";
export { camelOf, NOT_HONOURED, type NotHonoured, notHonouredLine } from "./not_honoured.ts";
export { type VllmFlagValues, type VllmPlan, vllmPlan } from "./options.ts";
export { type DatasetRequest, type DatasetSet, FILE_DATASETS, promptSetFor, randomSet, type RandomSpec } from "./dataset.ts";
export { defaultResultName, DETAILED_KEYS, type Goodput, PERCENTILE_METRICS, pyFloat, type VllmFileOptions, vllmResultFile } from "./result_file.ts";
export { centre, failureLines, line, summaryBlock, trafficLines } from "./summary_block.ts";
