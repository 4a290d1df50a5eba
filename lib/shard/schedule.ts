/**
 * One numbered schedule for every shard (issue 12): per level, the seeded arrival offsets and, per
 * `seq`, the prompt and its salt, computed the same way by every shard (the prompt pool is stepped
 * through every seq of every level in order, whichever shard sends it); the schedule hash over all
 * of it; and the timetable that puts level j at `--start-at` + the earlier levels' durations +
 * j × `--level-gap-s`. Pure.
 *
 * The offsets come from Math.log / Math.pow, which may differ in the last bit between JavaScript
 * engines; arrivalOffsetsMs rounds them to 1 µs, so the Bun and Node builds of one ik version
 * agree (a difference could survive only if a value fell within ~1e-12 ms of a rounding edge).
 * @module
 */
import { createHash } from "node:crypto";
import { usageError } from "../cli/errors.ts";
import type { PromptPool } from "../bench/prompt_pool.ts";

/** One planned request. */
export interface PlannedRequest {
  level: string;
  seq: number;
  /** Offset from the level's start, ms. */
  offsetMs: number;
  promptId: string;
  salt: string | null;
}

/** A level as the schedule needs it. */
export interface PlannedLevel {
  name: string;
  /** The level's picker seed (levelSeed(seed, index)). */
  seed: number[];
  offsetsMs: ArrayLike<number>;
  /** A replay (trace mode): request i is the pool's prompt i. */
  replay?: boolean;
}

/** Every planned request of `levels`, in (level, seq) order, stepping the pool as one process would. */
export function* plannedRequests(pool: PromptPool, levels: readonly PlannedLevel[]): Generator<PlannedRequest> {
  for (const lv of levels) {
    const pick = lv.replay ? pool.inOrder(lv.name) : pool.picker(lv.seed, lv.name);
    for (let seq = 0; seq < lv.offsetsMs.length; seq++) {
      const { prompt, salt } = pick();
      yield { level: lv.name, seq, offsetMs: lv.offsetsMs[seq], promptId: prompt.id, salt };
    }
  }
}

/** sha256 (hex) of the schedule: one line `level\tseq\toffset_ms\tprompt_id\tsalt` per request, offsets in shortest round-trip form. */
export function scheduleHash(requests: Iterable<PlannedRequest>): string {
  return scheduleHashes(requests).schedule;
}

/**
 * sha256 (hex) of the picks alone: one line `level\tseq\tprompt_id\tsalt` per request in (level,
 * seq) order. A merge recomputes it from the merged rows, so a shard that drew other prompts or
 * salts than the schedule is caught even when its schedule hash was copied right.
 */
export class PicksHasher {
  readonly #h = createHash("sha256");

  /** Adds one request (in canonical order). */
  add(level: string, seq: number, promptId: string | null, salt: string | null): void {
    this.#h.update(`${level}\t${seq}\t${promptId ?? ""}\t${salt ?? ""}\n`);
  }

  /** The hex digest (once). */
  digest(): string {
    return this.#h.digest("hex");
  }
}

/** Both hashes of a schedule in one pass: the schedule hash and the picks hash. */
export function scheduleHashes(requests: Iterable<PlannedRequest>): { schedule: string; picks: string } {
  const h = createHash("sha256"), p = new PicksHasher();
  for (const r of requests) {
    h.update(`${r.level}\t${r.seq}\t${String(r.offsetMs)}\t${r.promptId}\t${r.salt ?? ""}\n`);
    p.add(r.level, r.seq, r.promptId, r.salt);
  }
  return { schedule: h.digest("hex"), picks: p.digest() };
}

/** Default gap between levels, seconds. */
export const DEFAULT_LEVEL_GAP_S = 10;

/**
 * The wall-clock start of each level (ms since the epoch): `startAtMs` + the earlier levels'
 * durations + j × gap. A gap below the reference e2e (when known) is refused (64): requests of one
 * level would still be running when the next starts for most of its first second.
 */
export function levelStartsMs(startAtMs: number, durationsS: readonly number[], gapS: number, e2eRefMs: number | null = null): number[] {
  if (!(gapS >= 0) || !Number.isFinite(gapS)) throw usageError("--level-gap-s", `${gapS} is not a number of seconds >= 0`);
  if (e2eRefMs !== null && gapS * 1000 < e2eRefMs) {
    throw usageError("--level-gap-s", `${gapS} s is below the reference e2e ${e2eRefMs.toFixed(0)} ms`, `give at least ${Math.ceil(e2eRefMs / 1000)} s`);
  }
  const out: number[] = [];
  let t = startAtMs;
  for (let j = 0; j < durationsS.length; j++) {
    out.push(t + j * gapS * 1000);
    t += durationsS[j] * 1000;
  }
  return out;
}
