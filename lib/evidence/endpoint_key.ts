/**
 * Base URLs are never stored: a record keeps `hmac-sha256:<hex>` of the canonical endpoint under a
 * per-machine key that lives outside the evidence store (CONTRACTS.md "Names"), so publishing a
 * record never publishes the key, and an address cannot be brute-forced from the tag, while
 * `--extend` on the same machine can still tell "same server".
 * @module
 */
import { Buffer } from "node:buffer";
import { createHmac, randomBytes } from "node:crypto";
import { link, mkdir, open, readFile, stat, unlink } from "node:fs/promises";
import { platform } from "node:os";
import { dirname, join } from "node:path";
import { scrubText } from "./scrub.ts";

/** Where the key lives, from the environment (CONTRACTS.md). */
export function endpointKeyPath(env: (name: string) => string | undefined, home: string): string {
  const explicit = env("IK_KEY_FILE");
  if (explicit) return explicit;
  const cfg = env("XDG_CONFIG_HOME") || join(home, ".config");
  return join(cfg, "ik", "endpoint.key");
}

/** The key, and whether it persists across processes (false: a per-process fallback key). */
export interface EndpointKey {
  key: Uint8Array;
  persistent: boolean;
  /** Set when the key is per-process: the note a record carries. */
  note: string | null;
}

const PROCESS_KEY = randomBytes(32);

/** The note a record carries when only a per-process key was available. */
export const PROCESS_KEY_NOTE =
  "no per-machine key file could be read or written: the endpoint tag in this record is valid for this process only, " +
  "so --extend from another process sees a different base_url";

/** How long a reader waits for a key file that another process is still writing (ms, all tries). */
const PARTIAL_WAIT_MS = 500;
const PARTIAL_POLL_MS = 20;

/** What reading the key file gave. */
type KeyRead = { key: Uint8Array } | { missing: true } | { bad: true };

/**
 * Reads the key file. An empty file, or one holding the start of a key, is read again for up to
 * {@link PARTIAL_WAIT_MS}: another process (an older ik that wrote it in place) may be writing it.
 */
async function readKey(path: string): Promise<KeyRead> {
  const until = Date.now() + PARTIAL_WAIT_MS;
  for (;;) {
    let hex: string;
    try {
      hex = (await readFile(path, "utf8")).trim();
    } catch (e) {
      return (e as { code?: string }).code === "ENOENT" ? { missing: true } : { bad: true };
    }
    if (/^[0-9a-f]{64}$/i.test(hex)) return { key: Uint8Array.from(Buffer.from(hex, "hex")) };
    if (!/^[0-9a-f]{0,63}$/i.test(hex) || Date.now() >= until) return { bad: true };
    await new Promise((r) => setTimeout(r, PARTIAL_POLL_MS));
  }
}

/**
 * Creates the key file whole or not at all: the key is written (mode 0600) to a temporary file
 * beside it, which is then hard-linked to the key's name; a link never replaces an existing file,
 * so of processes racing, exactly one key wins and every other one reads it (never an empty file).
 * Where the file system has no hard links, the file is created in place (`wx`) instead.
 * @returns "created", "exists" (another process won), or "failed"
 */
async function createKey(path: string): Promise<"created" | "exists" | "failed"> {
  const body = randomBytes(32).toString("hex") + "\n";
  const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeNew(tmp, body);
  } catch {
    return "failed";
  }
  try {
    await link(tmp, path);
    return "created";
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "EEXIST") return "exists";
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS" && code !== "EXDEV") return "failed";
  } finally {
    await unlink(tmp).catch(() => {});
  }
  try {
    await writeNew(path, body);
    return "created";
  } catch (e) {
    return (e as { code?: string }).code === "EEXIST" ? "exists" : "failed";
  }
}

/** Writes a file that must not exist yet, mode 0600, and flushes it. */
async function writeNew(path: string, body: string): Promise<void> {
  const fh = await open(path, "wx", 0o600);
  try {
    await fh.writeFile(body);
    await fh.sync().catch(() => {});
  } finally {
    await fh.close();
  }
}

const warnedPaths = new Set<string>();

/** Warns once per process and path when the key file can be read or written by others (mode 0644). */
async function warnIfOpen(path: string, warn: (line: string) => void): Promise<void> {
  if (warnedPaths.has(path) || platform() === "win32") return;
  const st = await stat(path).catch(() => null);
  if (st === null || (st.mode & 0o077) === 0) return;
  warnedPaths.add(path);
  const mode = (st.mode & 0o777).toString(8).padStart(4, "0");
  warn(scrubText(`ik: warning: endpoint key file ${path}: mode ${mode} lets other users read the key; run chmod 600 ${path}`));
}

/** Options of {@link loadEndpointKey}. */
export interface LoadEndpointKeyOptions {
  /** Where the one-line warning about a key file others can read goes (default: stderr via `console.error`). */
  warn?: (line: string) => void;
}

/**
 * Reads the key file, creating it (mode 0600, 32 random bytes as hex) when absent; creation is
 * atomic, so when processes race every one reads the winner's key. A key file that others can read
 * (mode 0644) is used, with a one-line warning (once per process). Falls back to a per-process key
 * when the file cannot be read or written; a malformed key file is never overwritten.
 */
export async function loadEndpointKey(path: string, opts: LoadEndpointKeyOptions = {}): Promise<EndpointKey> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const read = await readKey(path);
    if ("key" in read) {
      await warnIfOpen(path, opts.warn ?? ((line) => console.error(line)));
      return { key: read.key, persistent: true, note: null };
    }
    if ("bad" in read || (await createKey(path)) === "failed") break;
  }
  return { key: PROCESS_KEY, persistent: false, note: PROCESS_KEY_NOTE };
}

/**
 * The stored form of an endpoint: `hmac-sha256:<hex>` over `scheme://host:port/prefix`
 * (host lower-cased, userinfo and query never included).
 * @example endpointTag(key, { scheme: "http", host: "10.0.0.5", port: 8000, prefix: "" })
 */
export function endpointTag(key: Uint8Array, ep: { scheme: string; host: string; port: number; prefix: string }): string {
  const canon = `${ep.scheme}://${ep.host.toLowerCase()}:${ep.port}${ep.prefix}`;
  return "hmac-sha256:" + createHmac("sha256", key).update(canon).digest("hex");
}
