/**
 * Reads a prompt-set file as a stream of uncompressed chunks that never adds up to more than a cap
 * (CONTRACTS.md "Limits": 1 GiB decompressed). A gzip bomb is stopped at the cap instead of being
 * inflated whole (a ~4 MB file of zeros inflates to 4 GB), and a plain file over the cap is refused
 * from its size, before a byte is read. gzip goes through node:zlib's streaming Gunzip, which reads
 * every member of a multi-member file (Deno's DecompressionStream stops after the first).
 * @module
 */
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { basename } from "node:path";
import { pipeline, Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { dataError, type IkError } from "../cli/errors.ts";
import { MAX_PROMPT_SET_BYTES } from "../cli/limits.ts";

const GZIP_MAGIC_0 = 0x1f;
const GZIP_MAGIC_1 = 0x8b;
/** Inflated bytes per chunk: also the most the cap can be overshot by before the read stops. */
const CHUNK_BYTES = 64 * 1024;

/** Options for {@link readUncompressedCapped}. */
export interface CappedReadOptions {
  /** The most uncompressed bytes allowed (default {@link MAX_PROMPT_SET_BYTES}). */
  maxBytes?: number;
  /** Reads the whole file instead of streaming it (an injected reader; the cap still applies). */
  readBytes?: (path: string) => Promise<Uint8Array>;
}

/** Whether bytes start with the gzip magic number. */
export function isGzip(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === GZIP_MAGIC_0 && head[1] === GZIP_MAGIC_1;
}

/** `1 GiB`, `64 MiB`, `4 KiB` when exact, else `<n> bytes`: how a limit is named in messages. */
export function formatLimit(bytes: number): string {
  for (const [unit, size] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** The data error (65) for a set over the cap: `<file>: <what>; split it into smaller sets`. */
function overCap(path: string, what: string): IkError {
  return dataError(basename(path), what, "split it into smaller sets");
}

const plainOver = (size: number, maxBytes: number) =>
  `is ${size} bytes, over the ${formatLimit(maxBytes)} limit for a prompt set`;

async function head(path: string): Promise<Uint8Array> {
  const fh = await open(path, "r");
  try {
    const buf = new Uint8Array(2);
    const { bytesRead } = await fh.read(buf, 0, 2, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * Yields the file's uncompressed bytes (gzip inflated, every member; plain bytes as they are),
 * chunk by chunk, holding no more than one chunk itself.
 * @throws IkError (data, 65) naming the file and the limit once the total would pass `maxBytes`;
 *   read and gzip errors (ENOENT, "unexpected end of file", ...) propagate as they are
 */
export async function* readUncompressedCapped(
  path: string,
  opts: CappedReadOptions = {},
): AsyncGenerator<Uint8Array, void, undefined> {
  const maxBytes = opts.maxBytes ?? MAX_PROMPT_SET_BYTES;
  let source: Readable;
  let gzip: boolean;
  if (opts.readBytes) {
    const bytes = await opts.readBytes(path);
    gzip = isGzip(bytes);
    if (!gzip && bytes.length > maxBytes) throw overCap(path, plainOver(bytes.length, maxBytes));
    source = Readable.from([bytes], { objectMode: false });
  } else {
    const size = (await stat(path)).size;
    gzip = isGzip(await head(path));
    if (!gzip && size > maxBytes) throw overCap(path, plainOver(size, maxBytes));
    source = createReadStream(path, { highWaterMark: CHUNK_BYTES });
  }
  const stream: Readable = gzip
    ? pipeline(source, createGunzip({ chunkSize: CHUNK_BYTES }), () => {/* errors reach the iterator */})
    : source;
  let total = 0;
  try {
    for await (const chunk of stream) {
      const bytes = chunk instanceof Uint8Array ? chunk : new TextEncoder().encode(String(chunk));
      total += bytes.length;
      if (total > maxBytes) {
        throw overCap(
          path,
          gzip
            ? `decompresses to more than ${formatLimit(maxBytes)}, the limit for a prompt set`
            : `grew past the ${formatLimit(maxBytes)} limit for a prompt set while being read`,
        );
      }
      yield bytes;
    }
  } finally {
    // Leaving early (the cap, a bad chunk, the consumer gave up) must not keep the file open.
    stream.destroy();
    source.destroy();
  }
}
