/**
 * How long the calling thread has waited for a CPU: Linux's `/proc/thread-self/schedstat`, whose
 * second field is the thread's time runnable but not running (on a run queue), in ns since it
 * started. A late timer or a late send has two causes a user must tell apart: ik's own work held
 * the event loop, or the loop's thread was ready and the host did not run it (other work on its
 * CPUs, or, on a VM, a halted vCPU the hypervisor woke late). The second is the host's, and
 * `perf sched timehist` of a load level at 500 req/s on a 2-vCPU AMD EPYC VM showed it is most of
 * the send-lag tail there: the loop's thread queued for 1.5–4.5 ms behind a JIT compiler or an
 * allocator's scavenger thread, or on a vCPU that had not yet woken, while the other vCPU idled.
 *
 * The file is opened once and read with `pread` into one buffer (about 1 µs on Bun, 1.6 µs on Deno
 * against 8–12 µs for a read of the whole file by name): cheap enough to read twice per request of
 * an open loop at thousands of requests a second. The descriptor names the thread that opened it,
 * so a reader must be made and used on the thread it measures (ik's event loop).
 * @module
 */
import { closeSync, openSync, readSync } from "node:fs";

/** Reads the thread's cumulative wait for a CPU, in ms; null once it cannot be read. */
export type CpuWaitReader = () => number | null;

const SCHEDSTAT = "/proc/thread-self/schedstat";

/**
 * A reader of the calling thread's wait for a CPU, or null where the host has no schedstat (not
 * Linux, a kernel without it, a sandbox that hides /proc). A read that fails later returns null
 * from then on.
 * @param path the schedstat file (tests give another)
 */
export function openCpuWaitReader(path: string = SCHEDSTAT): CpuWaitReader | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  const buf = new Uint8Array(96);
  let broken = false;
  const read: CpuWaitReader = () => {
    if (broken) return null;
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, 0);
    } catch {
      broken = true;
      return null;
    }
    // "<on-cpu ns> <run-queue wait ns> <timeslices>\n": the second field, parsed in place.
    let i = 0;
    while (i < n && buf[i] !== 32) i++;
    let ns = 0, digits = 0;
    for (i++; i < n && buf[i] >= 48 && buf[i] <= 57; i++, digits++) ns = ns * 10 + (buf[i] - 48);
    if (digits === 0) {
      broken = true;
      return null;
    }
    return ns / 1e6;
  };
  if (read() === null) {
    closeSync(fd);
    return null;
  }
  return read;
}

let shared: CpuWaitReader | null | undefined;

/**
 * The event loop's thread's cumulative wait for a CPU in ms (null where it cannot be read): one
 * reader for the process, opened on first use. Call it only from the event loop's thread.
 */
export function threadCpuWaitMs(): number | null {
  if (shared === undefined) shared = openCpuWaitReader();
  return shared === null ? null : shared();
}
