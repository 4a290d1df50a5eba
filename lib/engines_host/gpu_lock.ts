/**
 * The GPU lock (CONTRACTS.md "GPU lock"): one file, held by `bench rounds` for its whole run, that
 * names its owner (pid, command, start time) so a second run on the same GPU refuses with exit 69
 * instead of measuring two engines fighting over one device. A lock whose owner pid is gone (or a
 * file that does not parse) is stale and taken over with a note. Children get `IK_GPU_LOCK_HELD`
 * and do not take it again.
 *
 * The file appears atomically with its contents: the owner JSON is written to a private temporary
 * file that is then hard-linked to the lock path (link fails with EEXIST when the lock exists), so
 * a reader never sees a half-written lock. Where hard links are not supported the lock is created
 * with `open(path, "wx")` instead. Process questions (is this pid alive?) are injected.
 * @module
 */
import { link, open, readFile, realpath, unlink, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { unavailableError, usageError } from "../cli/errors.ts";
import { outputErrno, outputError } from "../evidence/output_error.ts";
import { procInfo } from "./proc_table.ts";

/** The environment variable naming the lock path a parent ik already holds. */
export const GPU_LOCK_HELD_ENV = "IK_GPU_LOCK_HELD";

/** What a lock file holds: who took it, with what command, and when (UTC ISO 8601). */
export interface GpuLockOwner {
  /** The owner's process id. */
  pid: number;
  /** The owner's command line, for a person to recognise it. */
  command: string;
  /** When the owner took the lock, ISO 8601 UTC. */
  started_utc: string;
}

/** Reads one environment variable, or a plain map of them. */
export type EnvSource = ((name: string) => string | undefined) | Record<string, string | undefined>;

/** The injected facts {@link acquireGpuLock} needs. */
export interface AcquireGpuLockOptions {
  /** Our own pid (written into the lock). */
  pid: number;
  /** Our command line (written into the lock). */
  command: string;
  /** ik's environment (only `IK_GPU_LOCK_HELD` is read). */
  env: EnvSource;
  /** Whether a pid is alive (Runtime.pidAlive). */
  pidAlive: (pid: number) => boolean;
  /** The clock for `started_utc` (default `Date.now`), ms since the epoch. */
  now?: () => number;
  /**
   * The pids of `pid`'s ancestors, parent first (default: the /proc ppid chain; null where there
   * is no /proc). `IK_GPU_LOCK_HELD` is honoured only when the lock names one of them or `pid`.
   */
  ancestors?: (pid: number) => number[] | null;
}

/** A taken (or inherited) GPU lock. */
export interface GpuLock {
  /** The lock path. */
  path: string;
  /** True when this process took the lock; false when the parent holds it (`IK_GPU_LOCK_HELD`). */
  held: boolean;
  /** A note for the record when a stale lock was taken over; null otherwise. */
  note: string | null;
  /** Our owner entry (null when the parent holds the lock). */
  owner: GpuLockOwner | null;
  /** Variables to add to every child's environment: `IK_GPU_LOCK_HELD=<path>`. */
  childEnv: Record<string, string>;
  /** Removes the lock file if it still names us; a no-op when not held or already released. */
  release(): Promise<void>;
}

/** Reads a variable from an {@link EnvSource}. */
export function readEnv(env: EnvSource, name: string): string | undefined {
  return typeof env === "function" ? env(name) : env[name];
}

/** The default lock path: `${XDG_RUNTIME_DIR:-/tmp}/ik-gpu.lock` (an empty XDG_RUNTIME_DIR counts as unset). */
export function defaultGpuLockPath(env: EnvSource): string {
  const dir = readEnv(env, "XDG_RUNTIME_DIR");
  return `${dir ? dir.replace(/\/+$/, "") : "/tmp"}/ik-gpu.lock`;
}

/** Parses a lock file's text; null when it is not a valid owner entry. */
export function parseGpuLockOwner(text: string): GpuLockOwner | null {
  try {
    const o = JSON.parse(text);
    if (!o || typeof o !== "object") return null;
    if (!Number.isInteger(o.pid) || o.pid <= 0) return null;
    return {
      pid: o.pid,
      command: typeof o.command === "string" ? o.command : "",
      started_utc: typeof o.started_utc === "string" ? o.started_utc : "",
    };
  } catch {
    return null;
  }
}

/** "pid 123 (ik bench rounds …), started 2025-01-01T00:00:00.000Z": how an owner is named to a person. */
export function describeGpuLockOwner(o: GpuLockOwner): string {
  return `pid ${o.pid} (${o.command || "unknown command"}), started ${o.started_utc || "at an unknown time"}`;
}

function errCode(e: unknown): string | undefined {
  return (e as { code?: string })?.code;
}

/** Creates the lock file with `text` atomically; false when it already exists. */
async function createExclusive(path: string, text: string, pid: number): Promise<boolean> {
  const tmp = `${path}.${pid}.${Math.random().toString(36).slice(2)}.tmp`;
  let linked = false;
  try {
    await writeFile(tmp, text, { flag: "wx", mode: 0o644 });
    try {
      await link(tmp, path);
      linked = true;
    } catch (e) {
      const c = errCode(e);
      if (c === "EEXIST") return false;
      if (c !== "EPERM" && c !== "ENOTSUP" && c !== "EOPNOTSUPP" && c !== "ENOSYS" && c !== "EXDEV") throw e;
    }
  } finally {
    await unlink(tmp).catch(() => {});
  }
  if (linked) return true;
  // No hard links here: fall back to an exclusive create (a reader may briefly see it empty).
  let fh;
  try {
    fh = await open(path, "wx", 0o644);
  } catch (e) {
    if (errCode(e) === "EEXIST") return false;
    throw e;
  }
  try {
    await fh.writeFile(text);
  } finally {
    await fh.close();
  }
  return true;
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    if (errCode(e) === "ENOENT") return null;
    if (errCode(e) === "EISDIR") throw usageError("--gpu-lock", `${path} is a folder, not a lock file`, "give the path of a file (it is created when free)");
    throw e;
  }
}

/** The /proc ppid chain of `pid` (parent first, at most 64 deep); null without /proc. */
export function procAncestors(pid: number): number[] | null {
  if (procInfo(pid) === null) return null;
  const out: number[] = [];
  for (let p = procInfo(pid)?.ppid ?? 0; p > 0 && out.length < 64 && !out.includes(p); p = procInfo(p)?.ppid ?? 0) out.push(p);
  return out;
}

/**
 * Why `IK_GPU_LOCK_HELD=held` does not show that an ancestor of ours holds the lock at `path`
 * (then it is taken as usual), or null when it does: the same file, and its owner is us or one
 * of our live ancestors (a stale or foreign variable must not let a run share the GPU).
 */
async function inheritProblem(held: string, path: string, opts: AcquireGpuLockOptions): Promise<string | null> {
  const real = (p: string) => realpath(p).catch(() => null);
  const [a, b] = await Promise.all([real(held), real(path)]);
  if (a === null) return `no lock file at ${held}`;
  if (a !== b) return `it names another lock than ${resolve(path)}`;
  const text = await readOrNull(path).catch(() => null);
  const o = text === null ? null : parseGpuLockOwner(text);
  if (o === null) return "the lock file names no owner";
  if (o.pid === opts.pid) return null;
  const chain = (opts.ancestors ?? procAncestors)(opts.pid);
  if (chain === null) return opts.pidAlive(o.pid) ? null : `its owner pid ${o.pid} is gone`;
  if (chain.includes(o.pid) && opts.pidAlive(o.pid)) return null;
  return `its owner ${describeGpuLockOwner(o)} is not an ancestor of this process`;
}

/**
 * Takes the GPU lock at `path`, or inherits it from the parent.
 *
 * - `IK_GPU_LOCK_HELD` naming this same lock file, whose owner is this process or a live ancestor
 *   of it: the parent holds the lock; nothing is taken (`held: false`). Any other value (another
 *   lock, a missing file, an owner that is no ancestor) is not honoured: the lock is taken as
 *   usual, with a note.
 * - No lock file: one is created naming us.
 * - A lock whose owner pid is dead, that does not parse, or that names our own pid (a leftover of
 *   an earlier process that had the same pid, as happens with pid 1 in containers): taken over,
 *   with a note.
 * - A lock held by a live process: an IkError with exit 69 naming its pid, command and start time.
 * - A lock file that cannot be written (a read-only or full disk): an IkError with exit 74 naming it.
 *
 * @example
 * const lock = await acquireGpuLock(defaultGpuLockPath(rt.env), { pid: rt.pid(), command: "ik bench rounds m.json",
 *   env: rt.env, pidAlive: rt.pidAlive });
 * try { rt.spawn(argv, { env: { ...childEnv, ...lock.childEnv } }); } finally { await lock.release(); }
 */
export async function acquireGpuLock(path: string, opts: AcquireGpuLockOptions): Promise<GpuLock> {
  const inherited = readEnv(opts.env, GPU_LOCK_HELD_ENV);
  const notes: string[] = [];
  if (inherited) {
    const refused = await inheritProblem(inherited, path, opts);
    if (refused === null) {
      return {
        path,
        held: false,
        note: null,
        owner: null,
        childEnv: { [GPU_LOCK_HELD_ENV]: path },
        release: async () => {},
      };
    }
    notes.push(`${GPU_LOCK_HELD_ENV}=${inherited} not honoured (${refused}): the lock was taken as usual`);
  }
  const now = opts.now ?? Date.now;
  const owner: GpuLockOwner = { pid: opts.pid, command: opts.command, started_utc: new Date(now()).toISOString() };
  const text = JSON.stringify(owner) + "\n";
  for (let attempt = 0; attempt < 5; attempt++) {
    const created = await createExclusive(path, text, opts.pid).catch((e) => {
      throw outputErrno(e) !== null ? outputError(e, `--gpu-lock ${path}`, "the GPU lock cannot be taken") : e;
    });
    if (created) {
      let released = false;
      return {
        path,
        held: true,
        note: notes.length ? notes.join("; ") : null,
        owner,
        childEnv: { [GPU_LOCK_HELD_ENV]: path },
        release: async () => {
          if (released) return;
          released = true;
          const cur = await readOrNull(path).catch(() => null);
          const o = cur === null ? null : parseGpuLockOwner(cur);
          // Only our own entry is removed: a lock taken over by someone else after us stays theirs.
          if (o && o.pid === owner.pid && o.started_utc === owner.started_utc) await unlink(path).catch(() => {});
        },
      };
    }
    const seen = await readOrNull(path);
    if (seen === null) continue; // released between our create and our read: try again
    const o = parseGpuLockOwner(seen);
    let why: string;
    if (o === null) why = `an unreadable lock file (${JSON.stringify(seen.slice(0, 60))})`;
    else if (o.pid === opts.pid) why = `a stale lock naming our own pid (${describeGpuLockOwner(o)})`;
    else if (!opts.pidAlive(o.pid)) why = `a stale lock: its owner ${describeGpuLockOwner(o)} is gone`;
    else {
      throw unavailableError(
        `--gpu-lock ${path}`,
        `the GPU lock is held by ${describeGpuLockOwner(o)}`,
        "wait for that run to finish or stop it; a lock whose process is gone is taken over automatically",
      );
    }
    // Remove it only if it is still the same file content we judged stale (another contender may
    // have replaced it meanwhile; then we loop and judge the new owner).
    const again = await readOrNull(path);
    if (again === seen) {
      await unlink(path).catch((e) => {
        if (errCode(e) !== "ENOENT") throw e;
      });
      notes.push(`took over ${why} at ${path}`);
    }
  }
  throw unavailableError(`--gpu-lock ${path}`, "could not take the GPU lock: it kept changing hands", "retry");
}
