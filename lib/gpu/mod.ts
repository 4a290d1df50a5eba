/**
 * GPU facts from nvidia-smi (identity for records; memory for the rounds' wait-for-baseline).
 * @module
 */
export { type ExecFn, GPU_QUERY, gpuIdentity, type GpuInfo, parseGpuCsv, queryGpus } from "./nvidia_smi.ts";
