/**
 * The client's own memory during a load level: what ik itself held while it measured, sampled
 * once a second (and once at the end), so a level's record says whether the client grew (rows
 * kept, sockets, garbage not yet collected) and a user can size the host that runs ik.
 * `rss` is the resident set; `heap_used` the JavaScript heap in use; `external` memory owned by
 * JavaScript objects outside that heap (buffers, sockets' native state); `array_buffers` the part
 * of `external` held by ArrayBuffers. All in MiB (2^20 bytes), as `ps` and `top` count them. On
 * Bun the heap and external figures count reserved as well as resident memory (its fetch reports
 * ~270 MiB external at 1,000 streams with a 73 MiB RSS): `rss` is the one to size a host by.
 * @module
 */

/** One reading of the process's memory, in bytes (as Node's process.memoryUsage() gives it). */
export interface MemoryReading {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** A level's client memory, peak of each part over the level (MiB), as the record stores it. */
export interface ClientMemoryRecord {
  samples: number;
  rss_peak_mib: number | null;
  heap_used_peak_mib: number | null;
  external_peak_mib: number | null;
  array_buffers_peak_mib: number | null;
  /**
   * The executable's pages handed back before the run's first request (MiB resident then;
   * lib/runtime/_exe_pages.ts): they are not in `rss`, they stay in the page cache, and what runs
   * again maps back. Null where none were (not Linux, no FFI); absent in records made before.
   */
  exe_pages_released_mib?: number | null;
}

const MIB = 1024 * 1024;
const round1 = (b: number) => Math.round((b / MIB) * 10) / 10;

/**
 * Starts sampling `read` every `intervalMs` (the timer is unref'd: it never holds ik open);
 * `stop()` takes a last reading and returns each part's peak. A reader that throws is skipped.
 */
export function startClientMemory(read: () => MemoryReading, intervalMs = 1000): { stop(): ClientMemoryRecord } {
  let samples = 0;
  const peak: MemoryReading = { rss: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
  const take = () => {
    let m: MemoryReading;
    try {
      m = read();
    } catch {
      return;
    }
    samples++;
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    peak.external = Math.max(peak.external, m.external);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
  };
  take();
  const t = setInterval(take, intervalMs);
  (t as unknown as { unref?: () => void }).unref?.();
  return {
    stop(): ClientMemoryRecord {
      clearInterval(t);
      take();
      if (!samples) return { samples: 0, rss_peak_mib: null, heap_used_peak_mib: null, external_peak_mib: null, array_buffers_peak_mib: null };
      return {
        samples,
        rss_peak_mib: round1(peak.rss),
        heap_used_peak_mib: round1(peak.heapUsed),
        external_peak_mib: round1(peak.external),
        array_buffers_peak_mib: round1(peak.arrayBuffers),
      };
    },
  };
}
