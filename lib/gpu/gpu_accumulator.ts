/**
 * The running statistics of one GPU during a level: polls fold in one at a time (power integrated
 * by the trapezoid rule between its first and last reading, utilisation, memory, SM clock, the DCGM
 * energy counter with restarts), so memory stays constant in the run's length.
 * @module
 */
import type { GpuReading } from "./telemetry_parse.ts";
import type { GpuTelemetryGpu } from "./telemetry_types.ts";

/** Rounds to six decimals, as every telemetry figure is written. */
export function round6(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}

function r6(v: number | null): number | null {
  return v === null ? null : round6(v);
}

/** The running statistics of one GPU. */
export class GpuAccumulator {
  n = 0;
  firstT = NaN;
  lastT = NaN;
  pN = 0;
  pFirstT = NaN;
  pLastT = NaN;
  pLast = NaN;
  pMax = -Infinity;
  energyJ = 0;
  pRepeats = 0;
  pGaps = 0;
  pRaw: string | null = null;
  uSum = 0;
  uN = 0;
  mMax = -Infinity;
  cSum = 0;
  cN = 0;
  eN = 0;
  eLast = NaN;
  eDeltaMj = 0;
  eResets = 0;
  mig = false;
  missedSincePower = false;

  constructor(readonly index: number | null, readonly uuid: string | null, public name: string | null) {}

  add(t: number, r: GpuReading): void {
    if (this.n === 0) this.firstT = t;
    this.n++;
    this.lastT = t;
    if (r.name && !this.name) this.name = r.name;
    if (r.mig) this.mig = true;
    const p = r.powerW;
    if (p === null) {
      this.pRaw ??= r.powerRaw ?? "null";
      if (this.pN > 0) this.missedSincePower = true;
    } else {
      if (this.pN === 0) this.pFirstT = t;
      else {
        const dt = (t - this.pLastT) / 1000;
        if (dt > 0) this.energyJ += ((p + this.pLast) / 2) * dt;
        if (p === this.pLast) this.pRepeats++;
        if (this.missedSincePower) this.pGaps++;
      }
      this.missedSincePower = false;
      this.pN++;
      this.pLast = p;
      this.pLastT = t;
      if (p > this.pMax) this.pMax = p;
    }
    if (r.utilPct !== null) {
      this.uSum += r.utilPct;
      this.uN++;
    }
    if (r.memoryUsedMib !== null && r.memoryUsedMib > this.mMax) this.mMax = r.memoryUsedMib;
    if (r.smClockMhz !== null) {
      this.cSum += r.smClockMhz;
      this.cN++;
    }
    if (r.energyMj !== null) {
      if (this.eN > 0) {
        if (r.energyMj >= this.eLast) this.eDeltaMj += r.energyMj - this.eLast;
        else {
          this.eDeltaMj += r.energyMj; // a drop: the counter restarted (driver reload)
          this.eResets++;
        }
      }
      this.eN++;
      this.eLast = r.energyMj;
    }
  }

  stats(source: "nvidia-smi" | "dcgm"): GpuTelemetryGpu {
    const span = this.pN > 0 ? (this.pLastT - this.pFirstT) / 1000 : null;
    const integrable = this.pN >= 2 && span !== null && span > 0;
    const notes: string[] = [];
    if (this.pN === 0) {
      notes.push(`power never readable (${this.pRaw ?? "null"} in ${this.n} polls): energy_j null`);
    } else {
      if (!integrable) notes.push("one power reading: no interval to integrate, energy_j null");
      if (this.pN < this.n) {
        notes.push(
          `power unreadable in ${this.n - this.pN} of ${this.n} polls (${this.pRaw})` +
            (this.pGaps > 0 ? `, ${this.pGaps} gap(s) bridged linearly` : ""),
        );
      }
      if (source === "dcgm" && this.pN >= 3 && this.pRepeats * 2 >= this.pN - 1) {
        notes.push(
          `power repeated the previous value in ${this.pRepeats} of ${
            this.pN - 1
          } polls: the exporter refreshes ` +
            "less often than it is polled (its collect interval), so the integral is coarser than the poll rate",
        );
      }
    }
    if (this.eResets > 0) notes.push(`energy counter dropped ${this.eResets} time(s) (counted as restarts)`);
    if (this.mig) notes.push("MIG instances folded into the GPU (board power taken once)");
    return {
      index: this.index,
      uuid: this.uuid,
      name: this.name,
      n: this.n,
      power_n: this.pN,
      window_s: this.n > 0 ? round6((this.lastT - this.firstT) / 1000) : null,
      energy_window_s: r6(span),
      mean_power_w: integrable ? round6(this.energyJ / span) : this.pN === 1 ? round6(this.pLast) : null,
      max_power_w: this.pN > 0 ? round6(this.pMax) : null,
      energy_j: integrable ? round6(this.energyJ) : null,
      energy_counter_j: this.eN >= 2 ? round6(this.eDeltaMj / 1000) : null,
      mean_util_pct: this.uN > 0 ? round6(this.uSum / this.uN) : null,
      max_memory_used_mib: this.mMax >= 0 ? round6(this.mMax) : null,
      mean_sm_clock_mhz: this.cN > 0 ? round6(this.cSum / this.cN) : null,
      note: notes.length ? notes.join("; ") : null,
    };
  }
}
