/**
 * Which slice of a sharded load run this process sends (issue 12): `--shard K/S`, or `--shard auto`
 * read from the scheduler that started it.
 *
 * - Slurm: `SLURM_PROCID` of `SLURM_STEP_NUM_TASKS`, inside a job step only (`SLURM_STEP_ID` set:
 *   an sbatch script without srun would silently run every copy as 0/S), never a job array
 *   (array tasks are not co-scheduled).
 * - Kubernetes Indexed Job: `JOB_COMPLETION_INDEX` with `--shards S`. Under JobSet (`JOB_INDEX`
 *   and `REPLICATED_JOB_REPLICAS` set) the index is job-index × parallelism + completion index,
 *   parallelism being S / replicas.
 * - Both schedulers' variables present: refused; `--shard K/S` settles it.
 * Every refusal is a usage error (64) that names what was read. Pure: the environment is passed in.
 * @module
 */
import { usageError } from "../cli/errors.ts";

/** This process's slice. */
export interface ShardSpec {
  /** Shard index, 0 ≤ k < s. */
  k: number;
  /** Number of shards. */
  s: number;
  /** `flag`, `slurm`, `kubernetes` or `jobset`. */
  source: "flag" | "slurm" | "kubernetes" | "jobset";
  /** What was read, for the record (`SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=4 …`). */
  read: string;
  /** The scheduler's own id of the run, when it has one (Slurm `JOB.STEP`), for the group id. */
  schedulerId: string | null;
}

const INT = /^(0|[1-9][0-9]{0,8})$/;

function int(name: string, v: string | undefined, read: string): number {
  if (v === undefined || !INT.test(v.trim())) throw usageError("--shard auto", `${name}=${v ?? "(unset)"} is not a whole number (read: ${read})`, "give --shard K/S");
  return Number(v.trim());
}

/**
 * Resolves `--shard`. `value` is `K/S` or `auto`; `shards` is `--shards S` (Kubernetes only).
 * @throws IkError (64) for a malformed value or an environment it cannot trust
 */
export function resolveShard(value: string, env: (name: string) => string | undefined, shards: number | null = null): ShardSpec {
  const v = value.trim();
  const m = /^(\d+)\/(\d+)$/.exec(v);
  if (m) {
    const k = Number(m[1]), s = Number(m[2]);
    if (!(s >= 1) || !(k < s) || !Number.isSafeInteger(s)) throw usageError("--shard", `'${value}' needs 0 <= K < S and S >= 1`, "e.g. --shard 0/4");
    return { k, s, source: "flag", read: `--shard ${k}/${s}`, schedulerId: null };
  }
  if (v !== "auto") throw usageError("--shard", `'${value}' is neither K/S nor auto`, "e.g. --shard 1/4, or --shard auto under srun or an Indexed Job");
  const slurmNames = ["SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_ID", "SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"];
  const k8sNames = ["JOB_COMPLETION_INDEX", "JOB_INDEX", "REPLICATED_JOB_REPLICAS"];
  const shown = (names: string[]) => names.filter((n) => env(n) !== undefined).map((n) => `${n}=${env(n)}`).join(" ");
  const slurm = shown(slurmNames), k8s = shown(k8sNames);
  if (slurm && k8s) throw usageError("--shard auto", `both Slurm (${slurm}) and Kubernetes (${k8s}) variables are set`, "give --shard K/S to say which slice this is");
  if (slurm) {
    if (env("SLURM_ARRAY_JOB_ID") !== undefined || env("SLURM_ARRAY_TASK_ID") !== undefined) {
      throw usageError("--shard auto", `this is a Slurm job array (${slurm}): array tasks are not started together`, "run the shards as one step: srun -n S ik bench serve … --shard auto");
    }
    if (env("SLURM_STEP_ID") === undefined) {
      throw usageError("--shard auto", `no SLURM_STEP_ID (${slurm}): outside a job step every copy would run as the same shard`, "start the shards with srun inside the sbatch script");
    }
    const k = int("SLURM_PROCID", env("SLURM_PROCID"), slurm), s = int("SLURM_STEP_NUM_TASKS", env("SLURM_STEP_NUM_TASKS"), slurm);
    if (s < 1 || k >= s) throw usageError("--shard auto", `SLURM_PROCID ${k} is not below SLURM_STEP_NUM_TASKS ${s} (${slurm})`, "give --shard K/S");
    const job = env("SLURM_JOB_ID");
    return { k, s, source: "slurm", read: slurm, schedulerId: job !== undefined ? `${job}.${env("SLURM_STEP_ID")}` : null };
  }
  if (k8s) {
    if (shards === null) throw usageError("--shard auto", `a Kubernetes Indexed Job (${k8s}) does not say how many shards there are`, "add --shards S (the Job's completions)");
    const c = int("JOB_COMPLETION_INDEX", env("JOB_COMPLETION_INDEX"), k8s);
    if (env("JOB_INDEX") !== undefined) {
      const j = int("JOB_INDEX", env("JOB_INDEX"), k8s), replicas = int("REPLICATED_JOB_REPLICAS", env("REPLICATED_JOB_REPLICAS"), k8s);
      if (replicas < 1 || shards % replicas !== 0) throw usageError("--shards", `${shards} shards do not split evenly over REPLICATED_JOB_REPLICAS ${replicas} Jobs (${k8s})`, "make --shards = replicas × parallelism");
      const par = shards / replicas;
      if (c >= par || j >= replicas) throw usageError("--shard auto", `JOB_INDEX ${j} / JOB_COMPLETION_INDEX ${c} are outside ${replicas} Jobs × ${par} pods (${k8s})`, "check --shards");
      return { k: j * par + c, s: shards, source: "jobset", read: `${k8s} --shards ${shards}`, schedulerId: null };
    }
    if (c >= shards) throw usageError("--shard auto", `JOB_COMPLETION_INDEX ${c} is not below --shards ${shards}`, "make --shards the Job's completions");
    return { k: c, s: shards, source: "kubernetes", read: `${k8s} --shards ${shards}`, schedulerId: null };
  }
  throw usageError("--shard auto", "found neither Slurm (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_STEP_ID) nor Kubernetes (JOB_COMPLETION_INDEX) variables", "give --shard K/S");
}

/** How many of seqs 0..n-1 shard K of S owns (those with seq mod S = K). */
export function ownedCount(n: number, k: number, s: number): number {
  return n > k ? Math.ceil((n - k) / s) : 0;
}

/** Whether this shard sends request `seq` (seq mod S = K). */
export function ownsSeq(spec: Pick<ShardSpec, "k" | "s">, seq: number): boolean {
  return seq % spec.s === spec.k;
}
