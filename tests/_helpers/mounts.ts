/**
 * Real small and read-only file systems for the exit-74 tests (issue 18 §2): a tmpfs of a given
 * size, and a read-only bind mount. They need root (CI runs as root); elsewhere
 * {@link mountSkipReason} says why the tests are skipped. Every mount is recorded so an `after()`
 * hook can undo it even when a test failed.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

const mounted: string[] = [];

function sh(argv: string[]): { ok: boolean; err: string } {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: "utf8", timeout: 10_000 });
  return { ok: r.status === 0, err: `${r.stderr ?? ""}${r.error ? String(r.error) : ""}`.trim() };
}

let reason: string | false | undefined;

/** Why mounts cannot be made here (not root, or mount refused), or false when they can. */
export function mountSkipReason(): string | false {
  if (reason !== undefined) return reason;
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return (reason = "needs root to mount a tmpfs and a read-only bind (CI runs as root)");
  const d = mkdtempSync(join(tmpdir(), "ik-mount-probe-"));
  const r = sh(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d]);
  if (r.ok) sh(["umount", d]);
  rmSync(d, { recursive: true, force: true });
  return (reason = r.ok ? false : `mount -t tmpfs failed here (${r.err || "no reason given"}): no real full disk to test against`);
}

/** Mounts a tmpfs of `size` (e.g. "200k") on `dir` (created). */
export function mountTmpfs(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true });
  const r = sh(["mount", "-t", "tmpfs", "-o", `size=${size},mode=0755`, "tmpfs", dir]);
  if (!r.ok) throw new Error(`mount tmpfs on ${dir}: ${r.err}`);
  mounted.push(dir);
}

/** Bind-mounts `src` on `dir` (both created) and remounts it read-only. */
export function mountReadOnly(src: string, dir: string): void {
  mkdirSync(src, { recursive: true });
  mkdirSync(dir, { recursive: true });
  const r = sh(["mount", "--bind", src, dir]);
  if (!r.ok) throw new Error(`mount --bind ${src} ${dir}: ${r.err}`);
  mounted.push(dir);
  const ro = sh(["mount", "-o", "remount,bind,ro", dir]);
  if (!ro.ok) throw new Error(`remount ${dir} read-only: ${ro.err}`);
}

/** Unmounts everything this process mounted (lazily, so a busy mount still goes); for after(). */
export function unmountAll(): void {
  while (mounted.length) {
    const d = mounted.pop()!;
    if (!sh(["umount", d]).ok) sh(["umount", "-l", d]);
  }
}
