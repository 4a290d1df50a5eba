/**
 * Hands the executable's start-up pages back (issue 21). A compiled ik maps its whole file (the
 * runtime's code, its read-only data, ik's bundle): everything run while starting (module loading,
 * the CLI's parsing, the run's setup) stays resident in the process's RSS for the rest of the run.
 * Released before a load run's first request: AMD EPYC, 1,000 streams, file pages at the peak 51 →
 * 43.5 MB (3 interleaved pairs); released in the middle of a level, 39-40 MB (what the level runs).
 *
 * `madvise(MADV_DONTNEED)` on a private file mapping that holds no private (copy-on-write) page
 * only removes the process's page-table entries: the pages stay in the kernel's page cache, and
 * code or data used again maps back on a minor fault with the same bytes. So only mappings of the
 * executable itself that are not writable and hold no anonymous page are chosen (a read-only
 * mapping that was written before it was sealed, such as JavaScriptCore's frozen config page,
 * holds anonymous pages and is left alone: dropping those would lose what was written).
 *
 * What this does not do: free memory for other processes (the page cache keeps the pages until
 * the kernel needs the room); the anonymous memory (heap, buffers) is untouched.
 * @module
 */
import { readFileSync, realpathSync } from "node:fs";
import type { ExePagesResult } from "./types.ts";

/** MADV_DONTNEED (linux/mman.h). */
export const MADV_DONTNEED = 4;

/** One mapping to release: its start address and length in bytes, and what of it is resident. */
export interface ExeMapping {
  start: bigint;
  length: bigint;
  perms: string;
  rssKb: number;
}

/**
 * The mappings of `exePath` in `smaps` (the text of /proc/PID/smaps) that can be released safely:
 * private, not writable, no anonymous (copy-on-write) page. Pure: the caller reads the files.
 */
export function releasableMappings(smaps: string, exePath: string): ExeMapping[] {
  const out: ExeMapping[] = [];
  let cur: (ExeMapping & { anonKb: number }) | null = null;
  const flush = () => {
    if (cur && cur.anonKb === 0) out.push({ start: cur.start, length: cur.length, perms: cur.perms, rssKb: cur.rssKb });
    cur = null;
  };
  for (const line of smaps.split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) [0-9a-f]+ \S+ \d+(?:\s+(.*))?$/.exec(line);
    if (head) {
      flush();
      const [, a, b, perms, path = ""] = head;
      // Private ('p'), not writable, and the executable's own file (a deleted or replaced file reads "(deleted)").
      if (perms[3] === "p" && perms[1] === "-" && path === exePath) {
        const start = BigInt("0x" + a);
        cur = { start, length: BigInt("0x" + b) - start, perms, rssKb: 0, anonKb: -1 };
      }
      continue;
    }
    if (!cur) continue;
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (field) {
      if (field[1] === "Rss") cur.rssKb = Number(field[2]);
      else cur.anonKb = Number(field[2]);
    }
  }
  flush();
  // A mapping whose Anonymous line was never seen (an unexpected smaps format) was left at -1: not chosen.
  return out;
}

/** madvise(2) as the runtime's FFI opened it (returns 0 on success), and how to close it. */
export interface Madvise {
  call(addr: bigint, length: bigint, advice: number): number;
  close(): void;
}

/**
 * Releases this process's executable pages through the runtime's madvise (`open`: opened only on
 * Linux and where there is a mapping to release, closed before this returns; a string says why it
 * could not be opened). `exePath` defaults to /proc/self/exe's target.
 */
export function releaseExePages(platform: string, open: () => Madvise | string, exePath?: string): ExePagesResult {
  if (platform !== "linux") return { reason: `releasing the executable's pages is Linux only (this is ${platform})` };
  let smaps: string, exe: string;
  try {
    exe = exePath ?? realpathSync("/proc/self/exe");
    smaps = readFileSync("/proc/self/smaps", "utf8");
  } catch (e) {
    return { reason: `cannot read /proc/self: ${String((e as Error)?.message ?? e).slice(0, 120)}` };
  }
  const maps = releasableMappings(smaps, exe);
  if (maps.length === 0) return { reason: `no read-only mapping of ${exe} without private pages` };
  const madvise = open();
  if (typeof madvise === "string") return { reason: madvise };
  let failed = 0, rssKb = 0;
  try {
    for (const m of maps) {
      if (madvise.call(m.start, m.length, MADV_DONTNEED) === 0) rssKb += m.rssKb;
      else failed++;
    }
  } finally {
    madvise.close();
  }
  return { mappings: maps.length - failed, rssKb, failed };
}
