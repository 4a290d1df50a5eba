/** `--shard K/S|auto`: Slurm job steps, Kubernetes Indexed Jobs and JobSet, and every refusal (both runtimes, < 1 s). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { ownsSeq, resolveShard } from "../../lib/shard/shard_spec.ts";

const env = (o: Record<string, string>) => (n: string) => o[n];
const refused = (fn: () => unknown, re: RegExp) =>
  assert.throws(fn, (e: unknown) => e instanceof IkError && e.code === 64 && re.test(e.oneLine()) && !e.oneLine().includes("\n"));

describe("resolveShard", () => {
  test("K/S from the flag", () => {
    assert.deepEqual(resolveShard("1/4", env({})), { k: 1, s: 4, source: "flag", read: "--shard 1/4", schedulerId: null });
    assert.equal(resolveShard("0/1", env({})).s, 1);
    refused(() => resolveShard("4/4", env({})), /0 <= K < S/);
    refused(() => resolveShard("1/0", env({})), /0 <= K < S/);
    refused(() => resolveShard("x", env({})), /neither K\/S nor auto/);
  });
  test("Slurm: a job step gives PROCID of STEP_NUM_TASKS and the JOB.STEP id", () => {
    const s = resolveShard("auto", env({ SLURM_PROCID: "2", SLURM_STEP_NUM_TASKS: "4", SLURM_STEP_ID: "0", SLURM_JOB_ID: "77" }));
    assert.deepEqual([s.k, s.s, s.source, s.schedulerId], [2, 4, "slurm", "77.0"]);
    assert.match(s.read, /SLURM_PROCID=2/);
  });
  test("Slurm refusals: no step (sbatch without srun), a job array, nonsense numbers", () => {
    refused(() => resolveShard("auto", env({ SLURM_PROCID: "0", SLURM_STEP_NUM_TASKS: "4", SLURM_JOB_ID: "77" })), /no SLURM_STEP_ID.*SLURM_PROCID=0/);
    refused(() => resolveShard("auto", env({ SLURM_PROCID: "0", SLURM_STEP_NUM_TASKS: "4", SLURM_STEP_ID: "0", SLURM_ARRAY_JOB_ID: "5", SLURM_ARRAY_TASK_ID: "1" })), /job array.*SLURM_ARRAY_TASK_ID=1/);
    refused(() => resolveShard("auto", env({ SLURM_PROCID: "4", SLURM_STEP_NUM_TASKS: "4", SLURM_STEP_ID: "0" })), /not below/);
    refused(() => resolveShard("auto", env({ SLURM_PROCID: "a", SLURM_STEP_NUM_TASKS: "4", SLURM_STEP_ID: "0" })), /SLURM_PROCID=a/);
  });
  test("Kubernetes: JOB_COMPLETION_INDEX with --shards; JobSet: job-index x parallelism + completion index", () => {
    assert.deepEqual(resolveShard("auto", env({ JOB_COMPLETION_INDEX: "3" }), 4).k, 3);
    refused(() => resolveShard("auto", env({ JOB_COMPLETION_INDEX: "3" })), /add --shards/);
    refused(() => resolveShard("auto", env({ JOB_COMPLETION_INDEX: "4" }), 4), /not below --shards 4/);
    const js = resolveShard("auto", env({ JOB_COMPLETION_INDEX: "1", JOB_INDEX: "2", REPLICATED_JOB_REPLICAS: "3" }), 6);
    assert.deepEqual([js.k, js.s, js.source], [5, 6, "jobset"]);
    refused(() => resolveShard("auto", env({ JOB_COMPLETION_INDEX: "0", JOB_INDEX: "0", REPLICATED_JOB_REPLICAS: "4" }), 6), /do not split evenly/);
  });
  test("both schedulers, or neither, are refused naming what was read", () => {
    refused(() => resolveShard("auto", env({ SLURM_PROCID: "0", SLURM_STEP_ID: "0", JOB_COMPLETION_INDEX: "1" }), 2), /both Slurm \(SLURM_PROCID=0 SLURM_STEP_ID=0\) and Kubernetes \(JOB_COMPLETION_INDEX=1\)/);
    refused(() => resolveShard("auto", env({})), /found neither/);
  });
  test("a shard owns the seqs with seq mod S = K", () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6].filter((q) => ownsSeq({ k: 1, s: 3 }, q)), [1, 4]);
  });
});
