/**
 * Helpers for the sharded-load tests: the key file, the shard argv, running S shards as local
 * processes (an Indexed Job's pods) or under srun, merging, splitting a one-process slice by seq
 * after the fact, and the record view that "field by field, ids and timestamps aside" compares.
 * Loopback only; every process is bounded by a timeout.
 */
import { randomBytes } from "node:crypto";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileSha256, newEvidenceId } from "../../lib/evidence/mod.ts";
import { type IkRun, runArgv, runIk } from "../_helpers/ik.ts";
import { startMock } from "../mock/_helpers.ts";

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** Writes a shared endpoint key (64 hex) and returns the env every shard gets. */
export async function shardEnv(dir: string): Promise<Record<string, string>> {
  await mkdir(dir, { recursive: true });
  const key = join(dir, "endpoint.key");
  await writeFile(key, randomBytes(32).toString("hex") + "\n", { mode: 0o600 });
  return { IK_KEY_FILE: key, IK_RUNS_DIR: join(dir, "runs") };
}

/**
 * The wall-clock start `leadMs` from now, in ms since the epoch, read from the system clock now
 * (Date.now, as `date +%s%3N` would give it). Not this test process's timeOrigin + now(): that axis
 * is fixed at the process's start, and a long `bun test` run on a host whose wall clock is stepped or
 * slewed against its monotonic clock (CI's was, by seconds) ends up behind the fresh ik process's.
 */
export function startAt(leadMs: number): number {
  return Date.now() + Math.round(leadMs);
}

/** `bench serve --mode load` argv for one shard (the shard flags come from the caller). */
export function loadArgs(base: string, start: number, extra: string[]): string[] {
  return ["bench", "serve", "--mode", "load", "--base-url", base, "--model", "mock-model", "--warmup", "0", "--json",
    "--start-at", String(start), "--gpu-name", "NVIDIA H100 80GB HBM3", "--gpu-count", "1", ...extra];
}

/** Runs S shards as local processes, each started `staggerMs` after the previous (pods start apart). */
export async function runLocalShards(
  s: number,
  args: string[],
  opts: { env: Record<string, string>; staggerMs: number; jobIndex: boolean; bin?: (k: number) => string | undefined; timeoutMs?: number },
): Promise<IkRun[]> {
  const runs: Promise<IkRun>[] = [];
  for (let k = 0; k < s; k++) {
    if (k) await new Promise((r) => setTimeout(r, opts.staggerMs));
    const shard = opts.jobIndex ? ["--shard", "auto", "--shards", String(s)] : ["--shard", `${k}/${s}`];
    const env = opts.jobIndex ? { ...opts.env, JOB_COMPLETION_INDEX: String(k) } : opts.env;
    const bin = opts.bin?.(k);
    const run = bin
      ? runArgv([bin], [...args, ...shard], { env, timeoutMs: opts.timeoutMs ?? 90_000 })
      : runIk([...args, ...shard], { env, timeoutMs: opts.timeoutMs ?? 90_000 });
    runs.push(run);
  }
  return Promise.all(runs);
}

/** `ik merge DIRS --json`; its records go into `store`. */
export function merge(dirs: string[], env: Record<string, string>, store: string, extra: string[] = []): Promise<IkRun> {
  return runIk(["merge", ...dirs, "--json", ...extra], { env: { ...env, IK_RUNS_DIR: store }, timeoutMs: 60_000 });
}

/** The merged measured and capacity records of a successful merge run. */
export async function mergedRecords(run: IkRun, store: string): Promise<{ capacity: Obj; measured: Obj; dir: string }> {
  const capacity = JSON.parse(run.stdout) as Obj;
  const id = (capacity.data as Obj).measurement as string;
  const dir = join(store, id);
  return { capacity, measured: JSON.parse(await readFile(join(dir, "evidence.json"), "utf8")), dir };
}

/** A slice record and its directory. */
export async function readSliceDir(dir: string): Promise<Obj> {
  return JSON.parse(await readFile(join(dir, "evidence.json"), "utf8"));
}

/** JSONL lines as objects. */
export function jsonl(text: string): Obj[] {
  return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/**
 * Splits a one-process slice (`--shard 0/1`) by seq after the fact into S slices under `root`:
 * rows, outputs and inputs with seq mod S = K, the shard named K/S, artifacts re-hashed; every
 * slice keeps the one anchor, and only the first keeps the warm-up. `edit` may change each
 * written record (refusal tests).
 */
export async function splitSlice(sliceDir: string, s: number, root: string, edit?: (rec: Obj, k: number, dir: string) => void | Promise<void>): Promise<string[]> {
  const rec = await readSliceDir(sliceDir);
  const dirs: string[] = [];
  for (let k = 0; k < s; k++) {
    const id = newEvidenceId("serve_benchmark");
    const dir = join(root, id);
    await mkdir(dir, { recursive: true });
    const artifacts: Obj[] = [];
    for (const a of rec.artifacts as { path: string; role: string }[]) {
      const docs = jsonl(await readFile(join(sliceDir, a.path), "utf8")).filter((d) => (d.seq as number) % s === k);
      if (a.role === "requests") for (const d of docs) d.shard = `${k}/${s}`;
      await mkdir(join(dir, a.path, ".."), { recursive: true });
      await writeFile(join(dir, a.path), docs.map((d) => JSON.stringify(d) + "\n").join(""));
      artifacts.push({ ...a });
    }
    const data = structuredClone(rec.data) as Obj;
    data.shard = { k, s, source: "flag", read: `--shard ${k}/${s} (split after the fact)` };
    if (k > 0) data.warmup_e2e_ms = [];
    const out: Obj = { ...structuredClone(rec), evidence_id: id, data, artifacts };
    await edit?.(out, k, dir);
    for (const a of out.artifacts as { path: string; sha256: string; bytes: number }[]) {
      a.sha256 = await fileSha256(join(dir, a.path));
      a.bytes = (await readFile(join(dir, a.path))).length;
    }
    await writeFile(join(dir, "evidence.json"), JSON.stringify(out, null, 2) + "\n");
    dirs.push(dir);
  }
  return dirs;
}

const ID = /\b(serve_benchmark|capacity)-\d{8}T\d{6}Z-[0-9a-f]{8}\b/g;

/**
 * A merged record as "field by field, ids and timestamps aside" sees it: no evidence ids, no
 * creation time, no artifact hashes (rows name their shard), no merge provenance (data.merge,
 * the limitations that name shards or slices), and no client-bottleneck attribution: that flag is
 * raised per shard (any shard's own send lag p99 over 5 ms), and a third of one process's rows
 * can pass 5 ms where all of them did not.
 */
export function comparable(rec: Obj): Obj {
  const c = JSON.parse(JSON.stringify(rec).replace(ID, "<id>")) as Obj;
  delete c.created_utc;
  c.artifacts = (c.artifacts as Obj[]).map((a) => ({ path: a.path, role: a.role }));
  const d = c.data as Obj;
  delete d.merge;
  delete d.shards;
  c.limitations = (c.limitations as string[]).filter((l) => !/^merged from |^shard \d+\/\d+|client may have limited/.test(l));
  for (const l of [...((d.levels as Obj[]) ?? []), ...((d.curve as Obj[]) ?? [])]) delete l.client_limited;
  return c;
}

/**
 * One short `--shard 0/1` run (rates 20 and 30 req/s for 1 s each, TTFT p95 ≤ 500 ms) against its
 * own `ik mock`, in a fresh folder: the slice the merge tests split by seq and edit. `close()` stops
 * the mock and removes the folder.
 * @param prefix the temporary folder's name prefix
 */
export async function oneSliceRun(prefix: string): Promise<{ dir: string; env: Record<string, string>; sliceDir: string; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const env = await shardEnv(dir);
  const mock = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "1"]);
  const close = async () => {
    await mock.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const [r] = await runLocalShards(1, loadArgs(mock.base, startAt(2000), ["--rates", "20,30", "--duration-s", "1", "--level-gap-s", "0.5", "--max-tokens", "4", "--slo-ttft-p95-ms", "500"]), {
      env, staggerMs: 0, jobIndex: false,
    });
    assert.equal(r.code, 0, r.stderr);
    return { dir, env, sliceDir: join(env.IK_RUNS_DIR, JSON.parse(r.stdout).evidence_id), close };
  } catch (e) {
    await close();
    throw e;
  }
}
