/** File operations. node:fs/promises behaves the same on Bun, Deno and Node, so one implementation serves all. */
import { appendFile, chmod, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import type { Files } from "./types.ts";

/** The shared file implementation. */
export const files: Files = {
  readText: (path) => readFile(path, "utf8"),
  readBytes: async (path) => new Uint8Array(await readFile(path)),
  writeText: (path, text, opts) => writeFile(path, text, { mode: opts?.mode }),
  appendText: (path, text) => appendFile(path, text),
  mkdir: async (path) => {
    await mkdir(path, { recursive: true });
  },
  rename: (from, to) => rename(from, to),
  chmod: (path, mode) => chmod(path, mode),
  exists: async (path) => {
    try {
      await stat(path);
      return true;
    } catch {
      return false;
    }
  },
  remove: (path) => rm(path, { recursive: true, force: true }),
};
