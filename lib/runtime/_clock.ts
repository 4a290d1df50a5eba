/**
 * The kernel's clock-sync state, read with adjtimex(2) in read-only mode (modes = 0: no privilege
 * needed, also inside pods): the unsynced flag and the estimated and maximum error the NTP/PTP
 * daemon last told the kernel. The struct is decoded here; bun.ts and deno.ts make the call
 * through their FFI (the Node build cannot, and says so).
 * @module
 */
import type { ClockSync } from "./types.ts";

/** sizeof(struct timex) on 64-bit Linux (x86-64 and arm64 share the LP64 layout). */
export const TIMEX_SIZE = 208;

/** Shared objects that may hold adjtimex: glibc, then musl. */
export const LIBC_CANDIDATES = ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"];

const STATES = ["TIME_OK", "TIME_INS", "TIME_DEL", "TIME_OOP", "TIME_WAIT", "TIME_ERROR"];
/** status bit: the clock is not synchronised. */
const STA_UNSYNC = 0x0040;

/** Decodes adjtimex's return value and the filled struct timex. */
export function decodeTimex(ret: number, buf: Uint8Array): ClockSync {
  if (ret < 0) return { source: "unavailable", reason: `adjtimex returned ${ret}` };
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const maxerror = Number(v.getBigInt64(24, true));
  const esterror = Number(v.getBigInt64(32, true));
  const status = v.getInt32(40, true);
  return {
    source: "adjtimex",
    state: ret,
    state_name: STATES[ret] ?? `state ${ret}`,
    unsynced: (status & STA_UNSYNC) !== 0 || ret === 5,
    est_error_ms: esterror / 1000,
    max_error_ms: maxerror / 1000,
    status_flags: status,
  };
}
