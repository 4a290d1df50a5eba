/**
 * Scrubbing a file a child process wrote (an engine's log, a client's stderr): the runtime captures
 * the child's output straight to the file, so once the child is gone the file is rewritten through
 * the scrubber (./scrub.ts) before ik reads from it, stores it or points anyone at it.
 * @module
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import { scrubText } from "./scrub.ts";

/** Files past this size are left as they are (a runaway log; ik reads only its tail). */
const MAX_SCRUB_BYTES = 64 * 1024 * 1024;

/**
 * Rewrites `path` through {@link scrubText} when that changes it (mode kept by writing in place).
 * A missing or oversized file is left alone.
 * @returns whether the file was changed
 */
export async function scrubFileInPlace(path: string): Promise<boolean> {
  const st = await stat(path).catch(() => null);
  if (st === null || !st.isFile() || st.size > MAX_SCRUB_BYTES) return false;
  const text = await readFile(path, "utf8");
  const clean = scrubText(text);
  if (clean === text) return false;
  await writeFile(path, clean);
  return true;
}
