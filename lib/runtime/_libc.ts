/**
 * Two libc calls ik makes through the runtime's FFI (bun:ffi, Deno.dlopen, Node 26's node:ffi):
 * prctl(PR_SET_CHILD_SUBREAPER) and waitpid(pid, NULL, WNOHANG). Each runtime file opens libc
 * its own way; what is done with the calls is here, once.
 *
 * Why a subreaper: an engine that forks a child with `setsid` and exits (a launcher script, a
 * daemonising server) leaves that child outside its process group, so the group kill of the stop
 * misses it, and by default the kernel hands it to init: nothing ik can still see as the engine's.
 * With PR_SET_CHILD_SUBREAPER set on ik, such orphans reparent to ik instead, where the stop finds
 * them (ppid = ik, not a child ik spawned) and ends them. ik then also has to reap them
 * (waitpid), since the runtime only waits for the children it started itself.
 * @module
 */
import { LIBC_CANDIDATES } from "./_clock.ts";
import type { SubreaperState } from "./types.ts";

/** PR_SET_CHILD_SUBREAPER and PR_GET_CHILD_SUBREAPER (linux/prctl.h). */
export const PR_SET_CHILD_SUBREAPER = 36;
export const PR_GET_CHILD_SUBREAPER = 37;
/** waitpid's WNOHANG. */
export const WNOHANG = 1;

/** The calls a runtime's FFI makes available. */
export interface LibcCalls {
  /** prctl(PR_SET_CHILD_SUBREAPER, 1): 0 on success. */
  setChildSubreaper(): number;
  /** prctl(PR_GET_CHILD_SUBREAPER): the flag, or null when it could not be read. */
  getChildSubreaper(): number | null;
  /** waitpid(pid, NULL, WNOHANG): the pid when reaped, 0 when still running, -1 on error. */
  reapNoHang(pid: number): number;
}

/** Opens libc with `open(path)` over the usual names; the calls, or why none could be opened. */
export function firstLibc<T = LibcCalls>(open: (path: string) => T): T | string {
  let last = "";
  for (const lib of LIBC_CANDIDATES) {
    try {
      return open(lib);
    } catch (e) {
      last = String((e as Error)?.message ?? e);
      if (/permission|allow-ffi|requires ffi/i.test(last)) break;
    }
  }
  return `no libc could be opened through the FFI (${last.slice(0, 120)})`;
}

/** Subreaping and reaping over a lazily opened libc (opened once, on first use). */
export function subreaperOf(platform: string, open: () => LibcCalls | string): { state: () => SubreaperState; reap: (pid: number) => boolean } {
  let libc: LibcCalls | string | null = null;
  let state: SubreaperState | null = null;
  const get = (): LibcCalls | string => {
    if (libc !== null) return libc;
    try {
      libc = platform === "linux" ? open() : `PR_SET_CHILD_SUBREAPER is Linux only (this is ${platform})`;
    } catch (e) {
      libc = String((e as Error)?.message ?? e).slice(0, 200);
    }
    return libc;
  };
  return {
    state: () => {
      if (state?.active) return state;
      const l = get();
      if (typeof l === "string") return state = { active: false, detail: l };
      let rc: number;
      try {
        rc = l.setChildSubreaper();
      } catch (e) {
        return state = { active: false, detail: `prctl could not be called: ${String((e as Error)?.message ?? e).slice(0, 120)}` };
      }
      if (rc !== 0) return state = { active: false, detail: `prctl(PR_SET_CHILD_SUBREAPER) returned ${rc}` };
      const now = (() => {
        try {
          return l.getChildSubreaper();
        } catch {
          return null;
        }
      })();
      return state = now === 0
        ? { active: false, detail: "prctl(PR_SET_CHILD_SUBREAPER) returned 0 but the flag reads back 0" }
        : { active: true, detail: "prctl(PR_SET_CHILD_SUBREAPER): orphaned descendants of ik's children reparent to ik" };
    },
    reap: (pid) => {
      if (!(pid > 1)) return false;
      const l = get();
      if (typeof l === "string") return false;
      try {
        return l.reapNoHang(pid) === pid;
      } catch {
        return false;
      }
    },
  };
}
