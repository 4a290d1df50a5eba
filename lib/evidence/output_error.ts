/**
 * Output that cannot be written (CONTRACTS.md exit 74, EX_IOERR): a full or read-only disk, a
 * quota, a vanished output folder. Every writer turns such a failure into one {@link IkError}
 * naming the path and the error; {@link checkWritable} finds it before the first request, so a
 * read-only `--run-dir` is refused before anything is measured instead of after.
 * @module
 */
import { open, rename, stat, unlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { IkError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";

/** The errno codes that mean "this output cannot be written", and how a person reads them. */
const OUTPUT_ERRNOS: Record<string, string> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  EIO: "input/output error",
  EFBIG: "file too large",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOENT: "no such file or directory",
  ENOTDIR: "not a directory",
  EISDIR: "is a directory",
};

/** Codes that are an output failure whatever the syscall (a read does not give them). */
const ALWAYS_OUTPUT = new Set(["ENOSPC", "EDQUOT", "EROFS", "EFBIG"]);
/** Syscalls that only write: their EACCES/ENOENT/EIO is an output failure too. */
const WRITE_SYSCALLS = new Set(["write", "writev", "mkdir", "rename", "ftruncate", "truncate", "link", "fsync", "close"]);

const ELSEWHERE = "or choose another output folder (--run-dir, --out, $IK_RUNS_DIR), then rerun";

/** What to do about a failed write, by its errno code. */
function hintFor(code: string): string {
  if (code === "ENOSPC" || code === "EDQUOT" || code === "EFBIG") return `free space ${ELSEWHERE}`;
  if (code === "ENOENT" || code === "ENOTDIR") return `create the folder ${ELSEWHERE}`;
  if (code === "EIO") return `check the disk ${ELSEWHERE}`;
  if (code === "EISDIR") return `remove the folder in the way ${ELSEWHERE}`;
  return `make it writable ${ELSEWHERE}`;
}

/** An errno-carrying error, as node:fs raises them. */
interface ErrnoLike {
  code?: unknown;
  path?: unknown;
  syscall?: unknown;
}

/** The errno code of `e` when it is one {@link OUTPUT_ERRNOS} knows, else null. */
export function outputErrno(e: unknown): string | null {
  const code = (e as ErrnoLike | null)?.code;
  return typeof code === "string" && code in OUTPUT_ERRNOS ? code : null;
}

/** True for an {@link IkError} with exit 74. */
export function isOutputError(e: unknown): e is IkError {
  return e instanceof IkError && e.code === ExitCode.IO_ERROR;
}

/**
 * An unhandled error that is plainly a failed write (ENOSPC, EROFS, EDQUOT, EFBIG from any call;
 * EACCES, ENOENT, EIO… from a write-only syscall): how the CLI's last resort tells it from a bug.
 */
export function isUnhandledWriteFailure(e: unknown): boolean {
  const code = outputErrno(e);
  if (code === null) return false;
  const syscall = (e as ErrnoLike).syscall;
  return ALWAYS_OUTPUT.has(code) || (typeof syscall === "string" && WRITE_SYSCALLS.has(syscall));
}

/**
 * The one-line exit-74 error for a failed write of `path`:
 * `ik: PATH: cannot write (ENOSPC: no space left on device); <what happened>; free space …`.
 * An error that is already an output error is returned as it is.
 * @param e the error the write raised
 * @param path the file or folder being written (default: the path the error names)
 * @param what what happened to the run, e.g. "stopped sending; 71 whole rows kept in …"
 */
export function outputError(e: unknown, path?: string, what?: string): IkError {
  if (isOutputError(e)) return e;
  const err = (e ?? {}) as ErrnoLike;
  const code = outputErrno(e) ?? (typeof err.code === "string" ? err.code : "EIO");
  const where = path ?? (typeof err.path === "string" ? err.path : "output");
  const desc = OUTPUT_ERRNOS[code] ?? (e instanceof Error ? e.message : String(e));
  return new IkError(ExitCode.IO_ERROR, where, `cannot write (${code}: ${desc})${what ? `; ${what}` : ""}`, hintFor(code));
}

/** Runs a write; an output failure becomes {@link outputError} naming `path`. */
export async function guardWrite<T>(path: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (isOutputError(e) || outputErrno(e) !== null) throw outputError(e, path);
    throw e;
  }
}

/**
 * Writes a whole file or none: the bytes go to `<path>.part`, which is renamed over `path`; on a
 * failure the part is removed and the exit-74 error names `path` (a full disk leaves no 0-byte or
 * half-written file behind).
 */
export async function writeWhole(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  // Only a file is replaced: a folder, a device or a pipe at the path is the caller's mistake.
  const there = await stat(path).catch(() => null);
  if (there && !there.isFile()) {
    throw new IkError(ExitCode.USAGE, path, there.isDirectory() ? "is a folder, not a file" : "is not a regular file (a device, a pipe or a socket)", "give the path of a file to write");
  }
  const part = `${path}.part`;
  await guardWrite(path, async () => {
    try {
      await writeFile(part, data, { mode });
      await rename(part, path);
    } catch (e) {
      await unlink(part).catch(() => {});
      throw e;
    }
  });
}

/** The folder itself when it exists, else its nearest existing ancestor (what would hold it). */
async function nearestExisting(dir: string): Promise<{ path: string; isDir: boolean }> {
  let p = resolve(dir);
  for (;;) {
    const st = await stat(p).catch((e) => (outputErrno(e) === "ENOENT" ? null : Promise.reject(e)));
    if (st) return { path: p, isDir: st.isDirectory() };
    const up = dirname(p);
    if (up === p) return { path: p, isDir: true };
    p = up;
  }
}

/**
 * Checks that each output folder can be written, before anything is measured: a small probe file
 * is created (exclusively), written, and removed in the folder, or, when the folder does not exist
 * yet, in its nearest existing ancestor (nothing is left behind and no folder is created).
 * Throws the exit-74 {@link outputError} naming the folder (or what `as` names).
 * @param dirs output folders, or `{ dir, as }` to name the output a person gave instead (a lock
 *   file: `--gpu-lock PATH`); null and undefined entries are skipped
 */
export async function checkWritable(dirs: readonly (string | { dir: string; as: string } | null | undefined)[]): Promise<void> {
  for (const entry of dirs) {
    if (!entry) continue;
    const dir = typeof entry === "string" ? entry : entry.dir;
    try {
      await checkOne(dir);
    } catch (e) {
      if (typeof entry === "string" || !isOutputError(e)) throw e;
      throw new IkError(e.code, entry.as, e.message, e.hint);
    }
  }
}

/** One folder (see checkWritable). */
async function checkOne(dir: string): Promise<void> {
  let at: { path: string; isDir: boolean };
  try {
    at = await nearestExisting(dir);
  } catch (e) {
    throw outputError(e, dir);
  }
  if (!at.isDir) throw outputError({ code: "ENOTDIR" }, dir === at.path ? dir : `${dir} (${at.path} is a file)`);
  const probe = join(at.path, `.ik-write-check-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`);
  try {
    const fh = await open(probe, "wx", 0o600);
    try {
      await fh.write("ik write check\n");
    } finally {
      await fh.close().catch(() => {});
      await unlink(probe).catch(() => {});
    }
  } catch (e) {
    throw outputError(e, dir);
  }
}

/** A run's stop on its first failed write: what the writers report to, and what the run sends under. */
export interface WriteStop {
  /** The run's signal (`outer`'s too), aborted by the first failed write. */
  readonly signal: AbortSignal;
  /** Hand to every writer (JsonlWriter `onError`, a close's `catch`): the first error stops the run. */
  readonly onError: (e: unknown) => void;
  /** That first failure as the one-line 74 error, or null. */
  readonly fail: IkError | null;
}

/** A {@link WriteStop} under `outer` (the run's interrupt signal, when it has one). */
export function writeFailureStop(outer?: AbortSignal): WriteStop {
  const stop = new AbortController();
  const ws = {
    fail: null as IkError | null,
    signal: outer ? AbortSignal.any([outer, stop.signal]) : stop.signal,
    onError: (e: unknown) => {
      ws.fail ??= outputError(e);
      stop.abort(ws.fail);
    },
  };
  return ws;
}
