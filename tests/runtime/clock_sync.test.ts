/** The kernel clock-sync state through the runtime's FFI, checked against Python's ctypes reading the same syscall (both runtimes, < 1 s). */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { decodeTimex, TIMEX_SIZE } from "../../lib/runtime/_clock.ts";

test("decodeTimex reads maxerror, esterror and status at their LP64 offsets", () => {
  const buf = new Uint8Array(TIMEX_SIZE);
  const v = new DataView(buf.buffer);
  v.setBigInt64(24, 2500n, true); // maxerror, us
  v.setBigInt64(32, 800n, true); // esterror, us
  v.setInt32(40, 0x2001, true); // STA_PLL | STA_NANO: synced
  assert.deepEqual(decodeTimex(0, buf), { source: "adjtimex", state: 0, state_name: "TIME_OK", unsynced: false, est_error_ms: 0.8, max_error_ms: 2.5, status_flags: 0x2001 });
  v.setInt32(40, 0x0040, true);
  assert.equal((decodeTimex(0, buf) as { unsynced: boolean }).unsynced, true, "STA_UNSYNC");
  assert.equal((decodeTimex(5, new Uint8Array(TIMEX_SIZE)) as { unsynced: boolean }).unsynced, true, "TIME_ERROR");
  assert.deepEqual(decodeTimex(-1, buf), { source: "unavailable", reason: "adjtimex returned -1" });
});

const py = spawnSync("python3", ["-c", `
import ctypes, struct
b = ctypes.create_string_buffer(208)
r = ctypes.CDLL("libc.so.6").adjtimex(b)
m, e = struct.unpack_from("<qq", b.raw, 24); s, = struct.unpack_from("<i", b.raw, 40)
print(r, m, e, s)`], { encoding: "utf8" });
const pyOk = py.status === 0 && /^-?\d+ -?\d+ -?\d+ -?\d+/.test(py.stdout ?? "");

test("runtime.clockSync agrees with the same syscall made by Python", { skip: runtime.name === "node" ? "the Node build has no FFI" : pyOk ? false : "python3 with ctypes and glibc needed for the cross-check" }, async () => {
  const got = await runtime.clockSync();
  assert.equal(got.source, "adjtimex", JSON.stringify(got));
  if (got.source !== "adjtimex") return;
  const [r, maxUs, estUs, status] = py.stdout.trim().split(/\s+/).map(Number);
  assert.equal(got.state, r);
  assert.equal(got.status_flags & 0x40, status & 0x40);
  // The daemon may adjust the bounds between the two calls; the kernel grows maxerror by 500 ppm of elapsed time.
  assert.ok(Math.abs(got.max_error_ms - maxUs / 1000) < 50, `${got.max_error_ms} vs ${maxUs / 1000}`);
  assert.ok(Math.abs(got.est_error_ms - estUs / 1000) < 50, `${got.est_error_ms} vs ${estUs / 1000}`);
});
