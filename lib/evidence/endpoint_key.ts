/**
 * Base URLs are never stored: a record keeps `hmac-sha256:<hex>` of the canonical endpoint under a
 * per-machine key that lives outside the evidence store (CONTRACTS.md "Names"), so publishing a
 * record never publishes the key, and an address cannot be brute-forced from the tag, while
 * `--extend` on the same machine can still tell "same server".
 * @module
 */
import { Buffer } from "node:buffer";
import { createHmac, randomBytes } from "node:crypto";
import { mkdir, open, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";

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

/**
 * Reads the key file, creating it (mode 0600, 32 random bytes as hex) when absent; when two
 * processes race, the loser reads the winner's key. Falls back to a per-process key when the file
 * cannot be read or written.
 */
export async function loadEndpointKey(path: string): Promise<EndpointKey> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const hex = (await readFile(path, "utf8")).trim();
      if (/^[0-9a-f]{64}$/i.test(hex)) return { key: Uint8Array.from(Buffer.from(hex, "hex")), persistent: true, note: null };
      break; // a malformed key file is not overwritten
    } catch (e) {
      if ((e as { code?: string }).code !== "ENOENT") break;
    }
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const fh = await open(path, "wx", 0o600);
      try {
        await fh.writeFile(randomBytes(32).toString("hex") + "\n");
      } finally {
        await fh.close();
      }
    } catch (e) {
      if ((e as { code?: string }).code === "EEXIST") continue;
      break;
    }
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
