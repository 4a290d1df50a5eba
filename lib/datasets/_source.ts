/**
 * Reading a dataset file from local disk: plain or gzip (every member, node:zlib), streamed in
 * chunks of decoded text, with the sha256 of the file's bytes as they are on disk (what the
 * manifest records to identify the source). Nothing is ever fetched from the network.
 * @module
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { basename } from "node:path";
import { createGunzip } from "node:zlib";
import { dataError, IkError, usageError } from "../cli/errors.ts";
import { Utf8LineDecoder } from "./_utf8.ts";

/** What the manifest records about the source file. */
export interface SourceInfo {
  /** The file name (no directory: paths are not stored). */
  file: string;
  /** sha256 (hex) of the file's bytes on disk (compressed bytes for .gz). */
  sha256: string;
  /** Its size on disk. */
  bytes: number;
  gzip: boolean;
}

/** A source being read: its text chunks, and its identity once every chunk was read. */
export interface SourceText {
  /** The file name used in errors (`file:line`). */
  name: string;
  chunks: AsyncGenerator<string, void, undefined>;
  /** Set when `chunks` has been read to its end. */
  info(): SourceInfo;
}

async function isGzipFile(path: string): Promise<boolean> {
  const fh = await open(path, "r");
  try {
    const buf = new Uint8Array(2);
    const { bytesRead } = await fh.read(buf, 0, 2, 0);
    return bytesRead === 2 && buf[0] === 0x1f && buf[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

/**
 * Opens a dataset file for streaming.
 * @throws IkError usage (64) when the file does not exist or cannot be opened (permissions); data
 *   (65) when it cannot be read through, is a corrupt gzip or is not UTF-8 (raised while the chunks
 *   are read; not UTF-8 names the line of the first bad byte)
 */
export async function openSource(path: string, flag = "--dataset-path"): Promise<SourceText> {
  const name = basename(path);
  let size: number;
  try {
    const st = await stat(path);
    if (!st.isFile()) throw new Error("not a file");
    size = st.size;
  } catch {
    throw usageError(flag, `${path} not found (or not a file)`, "give a local dataset file");
  }
  let gzip: boolean;
  try {
    gzip = await isGzipFile(path);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw usageError(flag, `cannot read ${path} (${typeof code === "string" ? code : (e as Error).message})`, code === "EACCES" ? "make it readable, or give another file" : "give a readable local dataset file");
  }
  const hash = createHash("sha256");
  let done: SourceInfo | null = null;
  async function* chunks(): AsyncGenerator<string, void, undefined> {
    const raw = createReadStream(path, { highWaterMark: 256 * 1024 });
    raw.on("data", (b) => hash.update(b as Uint8Array));
    const stream = gzip ? raw.pipe(createGunzip({ chunkSize: 256 * 1024 })) : raw;
    raw.on("error", (e) => stream.destroy(e));
    // A byte that is not UTF-8 is named by its line.
    const decoder = new Utf8LineDecoder(name, "save the dataset as UTF-8");
    try {
      for await (const chunk of stream) yield decoder.decode(chunk as Uint8Array);
      const tail = decoder.decode();
      if (tail) yield tail;
    } catch (e) {
      if (e instanceof IkError) throw e;
      throw dataError(name, `cannot read (${(e as Error).message})`, "the file is truncated, corrupt or not UTF-8");
    } finally {
      stream.destroy();
      raw.destroy();
    }
    done = { file: name, sha256: hash.digest("hex"), bytes: size, gzip };
  }
  return {
    name,
    chunks: chunks(),
    info() {
      if (!done) throw new Error("source info asked before the file was read to its end");
      return done;
    },
  };
}

/**
 * Splits streamed text into lines (`\n`, a final `\r` dropped), numbered from 1; `ended` is false
 * only for a last line that no newline ended (a file without a final newline).
 */
export async function* sourceLines(src: SourceText): AsyncGenerator<{ line: string; lineNo: number; ended: boolean }, void, undefined> {
  let pieces: string[] = [];
  let lineNo = 0;
  for await (const text of src.chunks) {
    let from = 0;
    for (;;) {
      const nl = text.indexOf("\n", from);
      if (nl === -1) break;
      const tail = text.slice(from, nl);
      const line = pieces.length ? pieces.join("") + tail : tail;
      pieces = [];
      lineNo++;
      yield { line: stripLine(line, lineNo), lineNo, ended: true };
      from = nl + 1;
    }
    if (from < text.length) pieces.push(text.slice(from));
  }
  const last = pieces.join("");
  if (last !== "") yield { line: stripLine(last, lineNo + 1), lineNo: lineNo + 1, ended: false };
}

function stripLine(line: string, lineNo: number): string {
  const l = line.endsWith("\r") ? line.slice(0, -1) : line;
  return lineNo === 1 && l.charCodeAt(0) === 0xfeff ? l.slice(1) : l;
}
