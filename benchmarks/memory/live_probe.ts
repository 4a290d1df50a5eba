/**
 * `bench:memory`'s probe of what a process holds, preloaded into it (`BUN_OPTIONS=--preload=<this
 * file>`, which dist/ik and the compiled floor client honour): `LIVE_PROBE_AT_MS` after start it
 * runs a full collection and prints one line on stderr, `[live-probe] {json}`, with JavaScriptCore's
 * heap size (live objects and the memory they report), the object count, the count of every object
 * type (run.ts compares two readings) and the RSS. Bun only (`bun:jsc`).
 * @module
 */
import { readFileSync } from "node:fs";
// deno-lint-ignore no-explicit-any
const jsc = await import("bun:jsc" as any) as { heapStats(): { heapSize: number; extraMemorySize: number; objectCount: number; objectTypeCounts: Record<string, number> } };

const at = Number(process.env.LIVE_PROBE_AT_MS ?? 5000);
const timer = setTimeout(() => {
  (globalThis as unknown as { Bun: { gc(full: boolean): void } }).Bun.gc(true);
  const h = jsc.heapStats();
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? NaN);
  process.stderr.write(`[live-probe] ${JSON.stringify({ heap_bytes: h.heapSize, extra_bytes: h.extraMemorySize, objects: h.objectCount, types: h.objectTypeCounts, rss_kb: rssKb })}\n`);
}, at);
(timer as unknown as { unref?: () => void }).unref?.();
