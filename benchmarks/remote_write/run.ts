/**
 * `npm run bench:remote-write` (or `deno run -A benchmarks/remote_write/run.ts`): the CPU cost of one
 * remote write push of a 2,000-series registry, on this runtime: `snapshot()`, the WriteRequest
 * protobuf (`@bufbuild/protobuf` wire writer), snappy (`snappyjs`), and the sum, as median and p99
 * µs over ITER pushes after WARMUP, with the body size raw and compressed. Nothing is sent: the
 * network part is the receiver's and runs on the writer's async loop. A report only: printed,
 * never asserted. Figures and the choice of libraries: ./RESULTS.md.
 *
 * The registry: 20 label sets (levels) of 4 histograms (TTFT and e2e on the 17 latency bounds,
 * TPOT and ITL on the 16 token-gap bounds: 20 + 20 + 19 + 19 series each), 11 counters and 11
 * gauges: 20 × (78 + 22) = 2,000 series, every series with 3 const labels.
 * Env: SERIES_SCALE (default 1) multiplies the label sets.
 * @module
 */
import { cpuName } from "../_host_cpu.ts";
import {
  encodeWriteRequest, LATENCY_BUCKETS_SECONDS, MetricsRegistry, snappyCompress, type Snapshot, TOKEN_GAP_BUCKETS_SECONDS,
} from "../../lib/live_metrics/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const WARMUP = 50;
const ITER = 400;
const SCALE = Math.max(1, Number(process.env.SERIES_SCALE ?? 1) || 1);
const LEVELS = 20 * SCALE;

function build() {
  const reg = new MetricsRegistry({ constLabels: { run: "20260101T000000Z-bench", endpoint: "hmac-sha256:" + "ab".repeat(32), model: "Qwen/Qwen3-8B" } });
  const lat = ["ttft", "e2e"].map((n) => reg.histogram({ name: `ik_${n}_seconds`, help: n, labelNames: ["level"], buckets: LATENCY_BUCKETS_SECONDS }));
  const gap = ["tpot", "itl"].map((n) => reg.histogram({ name: `ik_${n}_seconds`, help: n, labelNames: ["level"], buckets: TOKEN_GAP_BUCKETS_SECONDS }));
  const counters = Array.from({ length: 11 }, (_, i) => reg.counter({ name: `ik_counter_${i}_total`, help: "c", labelNames: ["level"] }));
  const gauges = Array.from({ length: 11 }, (_, i) => reg.gauge({ name: `ik_gauge_${i}`, help: "g", labelNames: ["level"] }));
  const levels = Array.from({ length: LEVELS }, (_, l) => {
    const labels = { level: String(l + 1) };
    return {
      lat: lat.map((h) => h.labels(labels)),
      gap: gap.map((h) => h.labels(labels)),
      c: counters.map((c) => c.labels(labels)),
      g: gauges.map((g) => g.labels(labels)),
    };
  });
  let x = 1;
  const rnd = () => ((x = (x * 48271) % 2147483647) / 2147483647);
  /** Some traffic between pushes, so values change as in a run. */
  const traffic = () => {
    for (const lv of levels) {
      for (const h of lv.lat) h.observe(rnd() * 3);
      for (const h of lv.gap) h.observe(rnd() * 0.08);
      for (const c of lv.c) c.inc(1 + Math.floor(rnd() * 10));
      for (const g of lv.g) g.set(rnd() * 100);
    }
  };
  return { reg, traffic };
}

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

const { reg, traffic } = build();
const t = { snap: [] as number[], proto: [] as number[], snappy: [] as number[], total: [] as number[] };
let raw = 0;
let packed = 0;
let series = 0;
for (let i = 0; i < WARMUP + ITER; i++) {
  traffic();
  const a = performance.now();
  const s: Snapshot = reg.snapshot();
  const b = performance.now();
  const pb = encodeWriteRequest(s);
  const c = performance.now();
  const sn = snappyCompress(pb);
  const d = performance.now();
  if (i >= WARMUP) {
    t.snap.push((b - a) * 1000);
    t.proto.push((c - b) * 1000);
    t.snappy.push((d - c) * 1000);
    t.total.push((d - a) * 1000);
  }
  series = s.series.length;
  raw = pb.length;
  packed = sn.length;
}
const row = (name: string, xs: number[]) => `| ${name.padEnd(22)} | ${q(xs, 0.5).toFixed(0).padStart(7)} | ${q(xs, 0.99).toFixed(0).padStart(7)} |`;
console.log(`remote write push cost, ${runtime.name} ${runtime.version}, ${cpuName()}, ${new Date().toISOString().slice(0, 10)}`);
console.log(`${series} series; body ${raw} B protobuf → ${packed} B snappy (${(raw / packed).toFixed(1)}×); ${ITER} pushes after ${WARMUP} warm-up`);
console.log(`| step                   | p50 µs  | p99 µs  |`);
console.log(`| ---------------------- | ------- | ------- |`);
console.log(row("snapshot()", t.snap));
console.log(row("protobuf encode", t.proto));
console.log(row("snappy compress", t.snappy));
console.log(row("total per push", t.total));
