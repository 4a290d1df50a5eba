/**
 * Open-loop arrival schedules (pure: no timers). Inter-arrival gaps are gamma distributed with
 * mean 1/rate; burstiness is the gamma shape (1 = Poisson, below 1 burstier, above 1 more
 * regular), as vLLM's `--burstiness`. Offsets are absolute from the level's start, so an executor
 * waits for `t0 + offset[i]` and never chains sleeps.
 * @module
 */
import { SeededRng } from "../stats/mod.ts";

/** The seed of level `index` of a run (independent streams per level, reproducible from the run seed). */
export function levelSeed(runSeed: number, index: number): number[] {
  return [runSeed, index, 0x6c65766c];
}

/** A gamma(shape, 1) deviate (Marsaglia–Tsang; shape < 1 via the U^(1/shape) boost). */
export function gammaDeviate(rng: SeededRng, shape: number): number {
  if (!(shape > 0)) throw new RangeError(`gamma shape must be > 0, got ${shape}`);
  if (shape < 1) {
    let u = rng.next();
    while (u === 0) u = rng.next();
    return gammaDeviate(rng, shape + 1) * u ** (1 / shape);
  }
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number, v: number;
    do {
      x = rng.normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = rng.next();
    if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** What a schedule is built from. */
export interface ArrivalSpec {
  /** Target arrivals per second (> 0). */
  ratePerS: number;
  /** The level's send window in seconds: no arrival at or after it. */
  durationS: number;
  /** Gamma shape (default 1: Poisson). */
  burstiness?: number;
  /** Cap on arrivals (default none). */
  maxRequests?: number | null;
  /** Seed parts (see {@link levelSeed}). */
  seed: number[];
}

/**
 * Arrival offsets in ms from the level's start, ascending, all inside the window. The first
 * arrival is one gap after the start (not at 0), so every gap is a draw.
 * @example arrivalOffsetsMs({ ratePerS: 10, durationS: 2, seed: levelSeed(0, 0) }) // ~20 offsets in [0, 2000)
 */
export function arrivalOffsetsMs(spec: ArrivalSpec): Float64Array {
  const { ratePerS, durationS } = spec;
  const shape = spec.burstiness ?? 1;
  if (!(ratePerS > 0) || !Number.isFinite(ratePerS)) throw new RangeError(`rate must be a positive number, got ${ratePerS}`);
  if (!(durationS > 0)) throw new RangeError(`duration must be > 0 s, got ${durationS}`);
  const rng = new SeededRng(...spec.seed);
  const scaleMs = 1000 / (ratePerS * shape);
  const cap = spec.maxRequests ?? Infinity;
  const endMs = durationS * 1000;
  const out: number[] = [];
  let t = 0;
  while (out.length < cap) {
    t += gammaDeviate(rng, shape) * scaleMs;
    if (t >= endMs) break;
    // Rounded to 1 µs: engines whose Math.log differs in the last bit (Bun's JSC, the Node build's
    // V8) then give the same offsets, so shards on different ik builds of one version agree.
    out.push(Math.round(t * 1e3) / 1e3);
  }
  return Float64Array.from(out);
}

/**
 * A concurrency level as the seed designs it: open-loop arrivals at N / e2e_ref (so arrivals
 * stay independent of the server). Not vLLM's or AIPerf's "concurrency" (N always in flight),
 * which is ik's `--closed-loop`.
 */
export function concurrencyToRate(n: number, e2eRefMs: number): number {
  if (!(e2eRefMs > 0)) throw new RangeError(`e2e_ref must be > 0 ms, got ${e2eRefMs}`);
  return n / (e2eRefMs / 1000);
}
